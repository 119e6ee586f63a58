package evidence

import (
	"context"
	"regexp"
	"strings"
	"sync"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/elixir"
)

// source is one side of an Elixir file read as code, by tree-sitter's
// Elixir grammar (tree-sitter-elixir): its tests, by describe and name,
// and its calls, each with its arguments and the test it is in. A file
// read from its hunks alone has blank lines where the diff shows nothing
// (the grammar recovers from fragments), so line numbers are the file's.
type source struct {
	tests []testUnit
	// setups are the lines of each setup block, with the describe it is
	// in ([0, 0] for the module's): what it checks, it checks for each
	// test there.
	setups [][4]int
	calls  []callSite
	defs   []defUnit
	broken bool // the grammar had to recover from an error somewhere
	// fragment says the source is what the hunks show of the file: the
	// grammar recovers from the missing lines, so broken says less.
	fragment bool
	// cleanups are the lines of each `try` that only cleans up after
	// (after or else, no rescue or catch): it swallows no failure.
	cleanups []int
	// named indexes calls by name; polls are the calls of polling helpers.
	named map[string][]int
	polls []int
	// pollIndex finds the polls that hold a line (pollSpans), built once.
	pollIndex     spanIndex
	pollIndexOnce sync.Once
	// helpers counts the assertions of each of the file's functions
	// (helperAsserts), read once.
	helpers    map[string]int
	helperOnce sync.Once
	// pollers are the file's own functions that poll whatever their
	// name: a sleep in a body that calls itself or loops; defined are all
	// the functions it defines.
	pollers, defined map[string]bool
	text             string // what was parsed
	// lines is text split into lines (textLines), once.
	lines     []string
	linesOnce sync.Once
}

// testUnit is one ExUnit test: `describe/test` name and its lines.
type testUnit struct {
	name       string
	start, end int
	own        string // the name the test itself gives, without its describe's
	full       string // ExUnit's name of it: its describe's and its own, spaced
	describe   [2]int // the lines of its describe, [0, 0] for none
}

// callSite is one call: its name as written ("assert_receive",
// "Process.sleep", ":timer.sleep"), its lines, its arguments' source
// text, and the test it is in (-1: none).
type callSite struct {
	name       string
	start, end int
	args       []string
	piped      bool // its first argument comes from a pipe
	inFn       bool // it is inside an anonymous function the test does not run then (stubFn)
	test       int
	at         int // the byte it starts at
}

// parseSource reads src as Elixir. It never fails: what the grammar
// cannot read is left out and broken is set. The tree is read through one
// query run in tree-sitter itself (the calls, anonymous functions and
// pipes), not node by node: each node visited from Go costs a cgo call.
func parseSource(src []byte) *source {
	parser := parsers.Get().(*sitter.Parser)
	defer parsers.Put(parser)
	tree, err := parser.ParseCtx(context.Background(), nil, src)
	if err != nil {
		return &source{broken: true}
	}
	defer tree.Close()
	root := tree.RootNode()
	s := &source{broken: root.HasError(), named: map[string][]int{}, text: string(src)}
	w := walker{src: src, s: s, lineStarts: lineStarts(src)}
	qc := sitter.NewQueryCursor()
	defer qc.Close()
	qc.Exec(sourceQuery, root)
	var stubs [][2]int
	for {
		m, ok := qc.NextMatch()
		if !ok {
			break
		}
		for _, c := range m.Captures {
			n := c.Node
			switch sourceQuery.CaptureNameForId(c.Index) {
			case "call":
				w.call(n)
			case "fn":
				if w.stubFn(n) {
					stubs = append(stubs, [2]int{w.line(n.StartByte()), w.line(n.EndByte())})
				}
			case "piped":
				w.piped = append(w.piped, int(n.StartByte()))
			}
		}
	}
	w.finish(stubs)
	return s
}

// parsers are Elixir parsers to reuse: making and deleting one costs as
// much as a small file's parse.
var parsers = sync.Pool{New: func() any {
	p := sitter.NewParser()
	p.SetLanguage(elixir.GetLanguage())
	return p
}}

// sourceQuery finds what the rules read of a tree.
var sourceQuery = func() *sitter.Query {
	q, err := sitter.NewQuery([]byte(`(call) @call
(anonymous_function) @fn
(binary_operator operator: "|>" right: (call) @piped)`), elixir.GetLanguage())
	if err != nil {
		panic(err)
	}
	return q
}()

// readArgs are the calls whose arguments the rules read; the others are
// kept by name and lines only.
var readArgs = func() map[string]bool {
	m := map[string]bool{"test": true, "property": true, "describe": true, "def": true, "defp": true, "defmacro": true, "defmacrop": true, "send": true, "try": true}
	for _, names := range [][]string{receiveMacros, sleepCalls, awaitCalls} {
		for _, n := range names {
			m[n] = true
		}
	}
	return m
}()

// walker collects a tree's calls, then places them (finish).
type walker struct {
	src        []byte
	lineStarts []int // the byte each line starts at
	s          *source
	piped      []int // where each piped call starts (its byte)
	describes  []describeUnit
	polls      map[string]bool // pollName's answer, by name
}

// poll reports whether a call's name is a polling helper's.
func (w *walker) poll(name string) bool {
	is, known := w.polls[name]
	if !known {
		if w.polls == nil {
			w.polls = map[string]bool{}
		}
		is = pollName.MatchString(name)
		w.polls[name] = is
	}
	return is
}

type describeUnit struct {
	name       string
	start, end int
}

func (w *walker) text(n *sitter.Node) string { return n.Content(w.src) }

// call reads one call node.
func (w *walker) call(n *sitter.Node) {
	at := n.StartByte()
	name := nameAt(w.src, int(at))
	if name == "" {
		return
	}
	c := callSite{name: name, start: w.line(at), end: w.line(n.EndByte()), test: -1, at: int(at)}
	if !readArgs[name] && !w.poll(name) {
		w.s.calls = append(w.s.calls, c)
		return
	}
	args := namedChildOfType(n, "arguments")
	if args != nil {
		for i := 0; i < int(args.NamedChildCount()); i++ {
			a := args.NamedChild(i)
			if a.Type() == "keywords" {
				for j := 0; j < int(a.NamedChildCount()); j++ {
					c.args = append(c.args, w.text(a.NamedChild(j)))
				}
				continue
			}
			c.args = append(c.args, w.text(a))
		}
	}
	w.s.calls = append(w.s.calls, c)
	if (name == "def" || name == "defp" || name == "defmacro" || name == "defmacrop") && args != nil {
		if d, ok := w.def(args, c.start, c.end); ok {
			w.s.defs = append(w.s.defs, d)
		}
	}
	if len(c.args) == 0 && name != "try" || namedChildOfType(n, "do_block") == nil {
		return
	}
	switch name {
	case "try":
		if block := namedChildOfType(n, "do_block"); block != nil && namedChildOfType(block, "rescue_block") == nil && namedChildOfType(block, "catch_block") == nil {
			w.s.cleanups = append(w.s.cleanups, c.start)
		}
	case "describe":
		w.describes = append(w.describes, describeUnit{nameOf(c.args[0]), c.start, c.end})
	case "test", "property":
		w.s.tests = append(w.s.tests, testUnit{name: nameOf(c.args[0]), start: c.start, end: c.end})
	}
}

// stubFn reports whether an anonymous function is one the code around it
// does not run there and then: data (in a list, a map, a keyword list, a
// variable) or a mock's implementation; a function handed to any other
// call (capture_log, Task.async, a fixture) runs as part of the test.
func (w *walker) stubFn(n *sitter.Node) bool {
	p := n.Parent()
	if p == nil || p.Type() != "arguments" {
		return true
	}
	call := p.Parent()
	return call != nil && call.Type() == "call" && stubCall.MatchString(w.callName(call))
}

var stubCall = regexp.MustCompile(`(?i)expect|stub|mock|patch|intercept`)

// callName is a call's target as written: a name, or a dotted
// Module.fun / :mod.fun; "" for a call of an anonymous function.
func (w *walker) callName(n *sitter.Node) string {
	t := n.ChildByFieldName("target")
	if t == nil {
		return ""
	}
	switch t.Type() {
	case "identifier":
		return w.text(t)
	case "dot":
		left, right := t.ChildByFieldName("left"), t.ChildByFieldName("right")
		if left == nil || right == nil {
			return ""
		}
		return w.text(left) + "." + w.text(right)
	}
	return ""
}

// testAt is the test whose lines hold line n, nil when none does.
func (s *source) testAt(n int) *testUnit {
	if s == nil {
		return nil
	}
	var found *testUnit
	for i := range s.tests {
		if t := &s.tests[i]; t.start <= n && n <= t.end {
			found = t // the innermost: tests do not nest, but keep the last
		}
	}
	return found
}

// hasTest reports whether a test of that name is in s.
func (s *source) hasTest(name string) bool {
	if s == nil {
		return false
	}
	for _, t := range s.tests {
		if t.name == name {
			return true
		}
	}
	return false
}

// textLines is the parsed text's lines, line n at n-1, split once.
func (s *source) textLines() []string {
	s.linesOnce.Do(func() { s.lines = strings.Split(s.text, "\n") })
	return s.lines
}

// linesOf is the text of lines from..to (1-based, both held), as far as
// the file has them.
func (s *source) linesOf(from, to int) string {
	lines := s.textLines()
	return strings.Join(lines[min(max(from-1, 0), len(lines)):min(to, len(lines))], "\n")
}

// callsAt are the calls of one of names whose lines hold line n.
func (s *source) callsAt(n int, names ...string) []callSite {
	if s == nil {
		return nil
	}
	var out []callSite
	for _, name := range names {
		for _, i := range s.named[name] {
			if c := s.calls[i]; c.start <= n && n <= c.end {
				out = append(out, c)
			}
		}
	}
	return out
}
