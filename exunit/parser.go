package exunit

import (
	"bytes"
)

// parser holds the state between lines; everything else is streamed.
type parser struct {
	rep     Report
	cur     int      // index of the run being read
	open    bool     // cur has not printed its summary yet
	failure *Failure // the failure block being read: nil, or &block
	block   Failure  // reused, so a failure costs no allocation of its own
	inStack bool     // the block's stacktrace is being read
	blank   bool     // the block's last line was blank: it may have ended
	app     string   // the umbrella app the block's location may be relative to
	// pending is a header whose test name goes on over the next lines (a
	// name with a newline); pendingLines counts them.
	pending      *Failure
	pendingLines int

	paths pathContext
	// The current GitHub Actions step: its script, read from the lines
	// after "##[group]Run" up to "shell:", and the runs it has printed.
	step         []byte
	inStepScript bool
	stepRuns     int
	// The umbrella app ("==> app") each run and each kept failure was
	// printed under, by index.
	runApps, failureApps []string
	// finished: "Finished in" was printed, so a 1.20 summary may follow;
	// afterResult: the previous line was one, of a run that failed.
	finished, afterResult bool
}

// maxNameLines bounds how many lines a test name may span.
const maxNameLines = 5

func (p *parser) run() *Run {
	switch {
	case p.open:
	case len(p.rep.Runs) >= MaxRuns:
		p.rep.MergedRuns++
		p.open = true
	default:
		p.rep.Runs = append(p.rep.Runs, Run{Step: string(p.step), StepRun: p.stepRuns})
		p.stepRuns++
		p.runApps = append(p.runApps, p.paths.section)
		p.cur, p.open = len(p.rep.Runs)-1, true
	}
	return &p.rep.Runs[p.cur]
}

func (p *parser) line(b []byte) {
	if bytes.HasPrefix(b, []byte("##[")) {
		var ok bool
		if b, ok = p.runnerCommand(b); !ok {
			return
		}
	}
	if p.inStepScript {
		p.stepScriptLine(b) // and read on: a log may not show where the script ends
	}
	if p.pending != nil {
		p.pendingLine(b)
		return
	}
	if p.failure != nil {
		if p.failureLine(b) {
			return
		}
		p.endFailure()
	}
	p.outside(b)
}

// runnerCommand handles a GitHub Actions runner line ("##[group]",
// "##[error]" ...). A problem matcher's "##[error]"/"##[warning]" prefixes
// the output line it matched, which is returned to be read as any other;
// the rest only end what was being read.
func (p *parser) runnerCommand(b []byte) (rest []byte, isOutput bool) {
	for _, prefix := range [][]byte{[]byte("##[error]"), []byte("##[warning]")} {
		if rest, ok := bytes.CutPrefix(b, prefix); ok {
			return rest, true
		}
	}
	p.endBlock()
	p.inStepScript = false
	if cmd, ok := bytes.CutPrefix(b, []byte("##[group]Run ")); ok {
		p.paths.step(cmd) // a new step: its script follows
		p.step, p.stepRuns, p.inStepScript = p.step[:0], 0, true
	}
	return nil, false
}

// maxStepScript bounds the step script kept.
const maxStepScript = 2048

// stepScriptLine reads a line of the step's header: the script the runner
// echoes after "##[group]Run", then "shell:" and the environment.
func (p *parser) stepScriptLine(b []byte) {
	if bytes.HasPrefix(b, []byte("shell: ")) || bytes.Equal(b, []byte("env:")) || bytes.Equal(b, []byte("with:")) {
		p.inStepScript = false
		return
	}
	if len(p.step)+len(b)+1 <= maxStepScript {
		p.step = append(append(p.step, b...), '\n')
	}
}

// endBlock ends whatever block was being read.
func (p *parser) endBlock() {
	p.pending = nil
	p.endFailure()
}

// outside reads a line outside any failure block. Lines that can matter
// are told apart by their first characters, which spares almost every
// line of a log any further look.
func (p *parser) outside(b []byte) {
	if p.afterResult {
		p.afterResult = false
		if rest, ok := bytes.CutPrefix(b, []byte("Failed: ")); ok {
			p.failedLine(rest)
			return
		}
	}
	i := 0
	for i < len(b) && b[i] == ' ' {
		i++
	}
	if i == len(b) {
		return
	}
	switch c := b[i]; {
	case c >= '0' && c <= '9':
		if h, ok := parseHeader(b); ok {
			p.startHeader(h)
		} else if i == 0 {
			p.summary(b)
		}
	case i > 0:
	case c == 'R':
		if rest, ok := bytes.CutPrefix(b, []byte("Result: ")); ok {
			p.result(rest)
		} else {
			p.seed(b)
		}
	case c == 'F':
		p.finished = p.finished || bytes.HasPrefix(b, []byte("Finished in "))
	case c == '=' || c == '*' || c == 'c' || c == 'C':
		if bytes.HasPrefix(b, []byte("==> ")) {
			p.endBlock()
			p.paths.enterApp(b[4:])
			p.open = false
		} else if compileError(b) {
			p.run().CompileError = true
		}
	case c == 'W':
		p.paths.checkoutLine(b)
	}
}

func compileError(b []byte) bool {
	for _, prefix := range compileErrorPrefixes {
		if bytes.HasPrefix(b, prefix) {
			return true
		}
	}
	return false
}

var compileErrorPrefixes = [][]byte{
	[]byte("== Compilation error in file "), []byte("** (CompileError) "), []byte("** (SyntaxError) "),
	[]byte("** (TokenMissingError) "), []byte("** (MismatchedDelimiterError) "),
	[]byte("could not compile dependency "), []byte("Compilation failed"),
}

func (p *parser) startHeader(h header) {
	if p.full() {
		// Only counted: read the block without keeping any of it.
		h.name, h.module = nil, nil
	}
	if !h.complete {
		p.pending, p.pendingLines = &Failure{Kind: h.kind, Test: string(h.name), Module: string(h.module)}, 0
		return
	}
	p.run()
	p.block = Failure{Kind: h.kind, Test: string(h.name), Module: string(h.module), Invocation: p.cur}
	p.failure, p.inStack, p.app = &p.block, false, ""
}

// full reports whether MaxFailures are kept: later ones are only counted.
func (p *parser) full() bool { return len(p.rep.Failures) >= MaxFailures }

// pendingLine takes the next line of a test name printed across lines.
func (p *parser) pendingLine(b []byte) {
	f := p.pending
	if len(b) == 0 || p.pendingLines >= maxNameLines || isHeader(b) {
		p.pending = nil // not a header after all
		p.outside(b)
		return
	}
	if rest, module, ok := cutModule(b); ok {
		p.pending = nil
		p.startHeader(header{kind: f.Kind, name: []byte(f.Test + "\n" + string(rest)), module: module, complete: true})
		return
	}
	f.Test += "\n" + string(b)
	p.pendingLines++
}

// failureLine takes one line of a failure block; false ends the block.
// ExUnit indents everything in a block by five spaces, the blank lines of
// a message included, and ends the block with an empty line.
func (p *parser) failureLine(b []byte) bool {
	f := p.failure
	if len(b) == 0 {
		if p.inStack {
			return false
		}
		// Since Elixir 1.16 a blank line of the message is not indented:
		// the block ends there only if the next line is not indented.
		p.blank = len(f.Message) > 0 || f.File != ""
		return true
	}
	if p.blank {
		p.blank = false
		if !bytes.HasPrefix(b, []byte("     ")) {
			return false
		}
	}
	if len(b) < 2 || b[0] != ' ' || b[1] != ' ' || isHeader(b) {
		return false
	}
	if p.inStack || p.full() {
		return true
	}
	trimmed := bytes.TrimSpace(b)
	switch {
	case len(trimmed) == 0:
		return true
	case f.File == "" && f.Parameters == "" && len(f.Message) == 0 && bytes.HasPrefix(trimmed, []byte("Parameters: ")):
		// A parameterized test's (Elixir 1.18+), before its location.
		f.Parameters = messageLine(trimmed[len("Parameters: "):])
		return true
	case f.File == "" && f.Kind != KindSetupAll && len(f.Message) == 0:
		if file, line, ok := location(trimmed); ok {
			f.File, f.Unusable, p.app = p.paths.resolve(file)
			f.Line = line
			return true
		}
	case bytes.Equal(trimmed, []byte("stacktrace:")):
		p.inStack = true // the rest of the block is the stacktrace
		return true
	}
	if len(f.Message) < MaxMessageLines {
		f.Message = append(f.Message, messageLine(trimmed))
	}
	return true
}

// messageLine keeps the first maxMessageLineLen bytes of a line.
func messageLine(b []byte) string {
	if len(b) > maxMessageLineLen {
		return string(b[:maxMessageLineLen]) + "…"
	}
	return string(b)
}

func (p *parser) endFailure() {
	f := p.failure
	p.failure, p.inStack, p.blank = nil, false, false
	if f == nil {
		return
	}
	if len(p.rep.Failures) >= MaxFailures {
		p.rep.DroppedFailures++
		return
	}
	p.rep.Failures = append(p.rep.Failures, *f)
	p.failureApps = append(p.failureApps, p.app)
}

func (p *parser) finish() Report {
	p.endBlock()
	p.paths.finish(&p.rep, p.runApps, p.failureApps)
	if p.rep.Runs == nil {
		p.rep.Runs = []Run{}
	}
	if p.rep.Failures == nil {
		p.rep.Failures = []Failure{}
	}
	return p.rep
}

func leadingDigits(b []byte) []byte {
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return b[:i]
}
