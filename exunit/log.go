package exunit

import (
	"bufio"
	"bytes"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Limits that keep the parser's memory bounded whatever the log holds.
const (
	MaxFailures       = 500  // failures kept per log; the rest are only counted
	MaxMessageLines   = 8    // lines of each failure's message kept
	maxLineBytes      = 8192 // longer lines are cut
	maxMessageLineLen = 300
)

// Failure kinds.
const (
	KindTest     = "test"
	KindDoctest  = "doctest"
	KindSetupAll = "setup_all" // the module's setup_all failed: no line, every test invalidated
)

// Failure is one numbered failure block of an ExUnit run.
type Failure struct {
	Kind       string   `json:"kind"`
	File       string   `json:"file,omitempty"`
	Line       int      `json:"line,omitempty"`
	Test       string   `json:"test,omitempty"` // as ExUnit names it, describe included
	Module     string   `json:"module"`
	Message    []string `json:"message,omitempty"` // the first lines: assertion, code, left, right
	Invocation int      `json:"invocation"`        // index into Report.Runs
}

// Ref returns the failure's test reference when it has a valid one.
func (f Failure) Ref() (TestRef, bool) {
	if f.File == "" || f.Line == 0 {
		return TestRef{}, false
	}
	ref, err := ParseTestRef(f.File + ":" + strconv.Itoa(f.Line))
	return ref, err == nil
}

// Run is one `mix test` invocation found in the log.
type Run struct {
	Seed         *int64 `json:"seed,omitempty"`
	MaxCases     int    `json:"max_cases,omitempty"`
	Summary      bool   `json:"summary"` // the counts line was seen
	Doctests     int    `json:"doctests"`
	Tests        int    `json:"tests"`
	Failures     int    `json:"failures"`
	Invalid      int    `json:"invalid"`
	Excluded     int    `json:"excluded"`
	Skipped      int    `json:"skipped"`
	CompileError bool   `json:"compile_error,omitempty"` // compilation failed: no tests ran
}

// Report is what a log holds.
type Report struct {
	Runs            []Run     `json:"runs"`
	Failures        []Failure `json:"failures"`
	DroppedFailures int       `json:"dropped_failures,omitempty"` // beyond MaxFailures
}

// Flaky returns the failures that name a test by file and line, from
// runs that compiled: the candidates for a flaky test. Failures printed
// by a run that then failed to compile are left out.
func (r Report) Flaky() []Failure {
	var out []Failure
	for _, f := range r.Failures {
		if _, ok := f.Ref(); ok && f.Kind != KindSetupAll && !r.Runs[f.Invocation].CompileError {
			out = append(out, f)
		}
	}
	return out
}

// CompileErrorOnly reports whether the log shows a failed compilation and
// no test results: a broken build, never a flaky test.
func (r Report) CompileErrorOnly() bool {
	if len(r.Flaky()) > 0 {
		return false
	}
	for _, run := range r.Runs {
		if run.CompileError {
			return true
		}
	}
	return false
}

var (
	failureHead  = regexp.MustCompile(`^\s+(\d+)\) (test|doctest) (.*) \(([A-Z][\w.]*)\)$`)
	setupAllHead = regexp.MustCompile(`^\s+(\d+)\) ([A-Z][\w.]*): failure on setup_all callback`)
	location     = regexp.MustCompile(`^\s+((?:apps/[^\s/]+/)?test/\S+\.exs):(\d+)$`)
	summaryLine  = regexp.MustCompile(`^(?:(\d+) doctests?, )?(\d+) tests?, (\d+) failures?(.*)$`)
	summaryExtra = regexp.MustCompile(`(\d+) (invalid|excluded|skipped)`)
	seedOld      = regexp.MustCompile(`^Randomized with seed (\d+)`)
	seedNew      = regexp.MustCompile(`^Running ExUnit with seed: (\d+), max_cases: (\d+)`)
	compileError = regexp.MustCompile(`^(?:== Compilation error in file |\*\* \((?:CompileError|SyntaxError|TokenMissingError|MismatchedDelimiterError)\) |could not compile dependency |Compilation failed)`)
)

// parser holds the state between lines; everything else is streamed.
type parser struct {
	rep     Report
	cur     int      // index of the run being read
	open    bool     // cur has not printed its summary yet
	failure *Failure // the failure block being read
}

// ParseLog reads an ExUnit log line by line: the raw output of `mix test`,
// or a GitHub Actions job log (timestamps, groups, colours). It keeps only
// the failures (at most MaxFailures, each bounded) and the counts, so its
// memory does not grow with the log.
func ParseLog(r io.Reader) (Report, error) {
	p := &parser{cur: -1}
	br := bufio.NewReaderSize(r, 64*1024)
	var buf []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		switch {
		case !isPrefix && len(buf) == 0 && (len(chunk) > 0 || err == nil):
			// The common case: a whole line in the reader's buffer. cleanLine
			// may rewrite it in place, which bufio allows until the next read.
			p.line(cleanLine(chunk[:min(len(chunk), maxLineBytes)]))
		case len(chunk) > 0 || err == nil:
			if len(buf)+len(chunk) <= maxLineBytes {
				buf = append(buf, chunk...)
			}
			if !isPrefix {
				p.line(cleanLine(buf))
				buf = buf[:0]
			}
		}
		if err == io.EOF {
			p.endFailure()
			if p.rep.Runs == nil {
				p.rep.Runs = []Run{}
			}
			if p.rep.Failures == nil {
				p.rep.Failures = []Failure{}
			}
			return p.rep, nil
		}
		if err != nil {
			return p.rep, err
		}
	}
}

// cleanLine removes what the terminal and GitHub Actions add: the
// byte-order mark, the text a carriage return overwrote, the timestamp,
// colour codes. It reuses b's memory.
func cleanLine(b []byte) []byte {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	b = bytes.TrimSuffix(b, []byte{'\r'})
	if i := bytes.LastIndexByte(b, '\r'); i >= 0 {
		b = b[i+1:]
	}
	if n := timestampLen(b); n > 0 {
		b = b[n:]
	}
	if bytes.IndexByte(b, 0x1b) >= 0 {
		b = stripANSI(b)
	}
	return b
}

// timestampLen is the length of a leading GitHub Actions timestamp
// ("2026-10-02T10:12:58.0088449Z "), or 0.
func timestampLen(b []byte) int {
	const shape = "dddd-dd-ddTdd:dd:dd"
	if len(b) < len(shape)+1 {
		return 0
	}
	for i := 0; i < len(shape); i++ {
		if c := b[i]; (shape[i] == 'd' && (c < '0' || c > '9')) || (shape[i] != 'd' && c != shape[i]) {
			return 0
		}
	}
	i := len(shape)
	if b[i] == '.' {
		for i++; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		}
	}
	if i >= len(b) || b[i] != 'Z' {
		return 0
	}
	if i+1 < len(b) && b[i+1] == ' ' {
		return i + 2
	}
	return i + 1
}

// stripANSI removes terminal escape sequences (ESC [ params letter) in place.
func stripANSI(b []byte) []byte {
	out := b[:0]
	for i := 0; i < len(b); i++ {
		if b[i] == 0x1b && i+1 < len(b) && b[i+1] == '[' {
			j := i + 2
			for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == ';' || b[j] == '?') {
				j++
			}
			if j < len(b) && (b[j] >= 'A' && b[j] <= 'Z' || b[j] >= 'a' && b[j] <= 'z') {
				i = j
				continue
			}
		}
		out = append(out, b[i])
	}
	return out
}

// interesting reports whether a line outside a failure block can matter:
// a cheap test that spares the regular expressions almost every line.
func interesting(b []byte) bool {
	for _, m := range markers {
		if bytes.Contains(b, m) {
			return true
		}
	}
	return false
}

var markers = [][]byte{[]byte(") test "), []byte(") doctest "), []byte("failure"), []byte("seed"), []byte("Compil"), []byte("** ("), []byte("could not compile")}

func (p *parser) run() *Run {
	if !p.open {
		p.rep.Runs = append(p.rep.Runs, Run{})
		p.cur, p.open = len(p.rep.Runs)-1, true
	}
	return &p.rep.Runs[p.cur]
}

func (p *parser) line(b []byte) {
	if bytes.HasPrefix(b, []byte("##[")) {
		return
	}
	if p.failure == nil && !interesting(b) {
		return
	}
	s := string(b)
	if p.failure != nil {
		if p.failureLine(s) {
			return
		}
		p.endFailure()
		if !interesting(b) {
			return
		}
	}
	switch {
	case seedNew.MatchString(s):
		m := seedNew.FindStringSubmatch(s)
		p.open = false // a new invocation starts with this line
		r := p.run()
		r.Seed = parseSeed(m[1])
		r.MaxCases, _ = strconv.Atoi(m[2])
	case seedOld.MatchString(s):
		// Printed after the summary, up to Elixir 1.16.
		if p.cur >= 0 && p.rep.Runs[p.cur].Seed == nil {
			p.rep.Runs[p.cur].Seed = parseSeed(seedOld.FindStringSubmatch(s)[1])
		} else {
			p.run().Seed = parseSeed(seedOld.FindStringSubmatch(s)[1])
		}
	case summaryLine.MatchString(s):
		p.summary(summaryLine.FindStringSubmatch(s))
	case compileError.MatchString(s):
		p.run().CompileError = true
	default:
		if m := failureHead.FindStringSubmatch(s); m != nil {
			p.startFailure(Failure{Kind: m[2], Test: m[3], Module: m[4]})
		} else if m := setupAllHead.FindStringSubmatch(s); m != nil {
			p.startFailure(Failure{Kind: KindSetupAll, Module: m[2]})
		}
	}
}

func (p *parser) startFailure(f Failure) {
	p.run()
	f.Invocation = p.cur
	p.failure = &f
}

// failureLine takes one line of a failure block; false ends the block.
func (p *parser) failureLine(s string) bool {
	f := p.failure
	trimmed := strings.TrimSpace(s)
	if trimmed == "" {
		// Blank lines may precede the location; after it they end the block.
		return f.Kind != "stacktrace" && len(f.Message) == 0 && f.File == ""
	}
	if failureHead.MatchString(s) || setupAllHead.MatchString(s) {
		return false
	}
	if !strings.HasPrefix(s, "  ") {
		return false
	}
	if f.File == "" && f.Kind != KindSetupAll {
		if m := location.FindStringSubmatch(s); m != nil {
			f.File = m[1]
			f.Line, _ = strconv.Atoi(m[2])
			return true
		}
	}
	if trimmed == "stacktrace:" {
		p.endFailure() // the rest of the block is the stacktrace
		p.failure = &Failure{Kind: "stacktrace"}
		return true
	}
	if f.Kind == "stacktrace" {
		return true
	}
	if len(f.Message) < MaxMessageLines {
		if len(trimmed) > maxMessageLineLen {
			trimmed = trimmed[:maxMessageLineLen] + "…"
		}
		f.Message = append(f.Message, trimmed)
	}
	return true
}

func (p *parser) endFailure() {
	f := p.failure
	p.failure = nil
	if f == nil || f.Kind == "stacktrace" {
		return
	}
	if len(p.rep.Failures) >= MaxFailures {
		p.rep.DroppedFailures++
		return
	}
	p.rep.Failures = append(p.rep.Failures, *f)
}

func (p *parser) summary(m []string) {
	r := p.run()
	r.Summary = true
	r.Doctests, _ = strconv.Atoi(m[1])
	r.Tests, _ = strconv.Atoi(m[2])
	r.Failures, _ = strconv.Atoi(m[3])
	for _, e := range summaryExtra.FindAllStringSubmatch(m[4], -1) {
		n, _ := strconv.Atoi(e[1])
		switch e[2] {
		case "invalid":
			r.Invalid = n
		case "excluded":
			r.Excluded = n
		case "skipped":
			r.Skipped = n
		}
	}
	p.open = false
}

func parseSeed(s string) *int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil
	}
	return &n
}
