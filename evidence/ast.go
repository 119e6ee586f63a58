package evidence

import (
	"context"
	"regexp"
	"slices"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/elixir"
)

// source is one side of an Elixir file read as code, by tree-sitter's
// Elixir grammar (tree-sitter-elixir): its tests, by describe and name,
// and its calls, each with its arguments and the test it is in. A file
// read from its hunks alone has blank lines where the diff shows nothing
// (the grammar recovers from fragments), so line numbers are the file's.
type source struct {
	tests  []testUnit
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
}

// testUnit is one ExUnit test: `describe/test` name and its lines.
type testUnit struct {
	name       string
	start, end int
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
	col        int // where it starts on its first line
}

// parseSource reads src as Elixir. It never fails: what the grammar
// cannot read is left out and broken is set. The tree is read through one
// query run in tree-sitter itself (the calls, anonymous functions and
// pipes), not node by node: each node visited from Go costs a cgo call.
func parseSource(src []byte) *source {
	parser := sitter.NewParser()
	defer parser.Close()
	parser.SetLanguage(elixir.GetLanguage())
	tree, err := parser.ParseCtx(context.Background(), nil, src)
	if err != nil {
		return &source{broken: true}
	}
	defer tree.Close()
	root := tree.RootNode()
	s := &source{broken: root.HasError(), named: map[string][]int{}}
	w := walker{src: src, s: s}
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
					stubs = append(stubs, [2]int{line(n.StartPoint()), line(n.EndPoint())})
				}
			case "piped":
				w.piped = append(w.piped, [2]int{line(n.StartPoint()), int(n.StartPoint().Column)})
			}
		}
	}
	w.finish(stubs)
	return s
}

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
	m := map[string]bool{"test": true, "property": true, "describe": true, "def": true, "defp": true, "send": true, "try": true}
	for _, names := range [][]string{receiveMacros, sleepCalls, awaitCalls} {
		for _, n := range names {
			m[n] = true
		}
	}
	return m
}()

// walker collects a tree's calls, then places them (finish).
type walker struct {
	src       []byte
	s         *source
	piped     [][2]int // line and column where a piped call starts
	describes []describeUnit
	polls     map[string]bool // pollName's answer, by name
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
	name := w.callName(n)
	if name == "" {
		return
	}
	c := callSite{name: name, start: line(n.StartPoint()), end: line(n.EndPoint()), test: -1, col: int(n.StartPoint().Column)}
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
	if (name == "def" || name == "defp") && args != nil {
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

// finish places what call collected: each test under its describe, each
// call in its test, in a stub, or piped; and indexes the calls.
func (w *walker) finish(stubs [][2]int) {
	for i := range w.s.tests {
		t := &w.s.tests[i]
		for _, d := range w.describes {
			if d.start <= t.start && t.end <= d.end {
				t.name = d.name + "/" + t.name
				break
			}
		}
		if !strings.Contains(t.name, "/") {
			t.name = "/" + t.name
		}
	}
	for i := range w.s.calls {
		c := &w.s.calls[i]
		for j, t := range w.s.tests {
			if t.start <= c.start && c.end <= t.end && !(t.start == c.start && t.end == c.end) {
				c.test = j
			}
		}
		for _, st := range stubs {
			if st[0] <= c.start && c.end <= st[1] {
				c.inFn = true
			}
		}
		for _, p := range w.piped {
			if p[0] == c.start && p[1] == c.col {
				c.piped = true
			}
		}
		w.s.named[c.name] = append(w.s.named[c.name], i)
		if w.poll(c.name) {
			w.s.polls = append(w.s.polls, i)
		}
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

func namedChildOfType(n *sitter.Node, typ string) *sitter.Node {
	for i := 0; i < int(n.NamedChildCount()); i++ {
		if c := n.NamedChild(i); c.Type() == typ {
			return c
		}
	}
	return nil
}

func line(p sitter.Point) int { return int(p.Row) + 1 }

// nameOf is a test or describe name without its quotes.
func nameOf(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
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

// sideText is one side of a file as its hunks show it: each line the
// hunks show on that side ('-' for the old one, '+' for the new) at its
// line number, blank lines elsewhere.
func sideText(f File, side byte) []byte {
	var b strings.Builder
	at := 1
	for _, h := range f.Hunks {
		for _, l := range h.Lines {
			n := l.New
			if side == '-' {
				n = l.Old
			}
			if n == 0 || l.Kind != ' ' && l.Kind != side {
				continue
			}
			for ; at < n; at++ {
				b.WriteByte('\n')
			}
			if at == n {
				b.WriteString(l.Text)
				b.WriteByte('\n')
				at++
			}
		}
	}
	return []byte(b.String())
}

// readCode reads both sides of the change's file as code: whole, from
// base and head when given, else from the hunks.
func (c *change) readCode(base, head string) {
	read := func(whole string, side byte) *source {
		if whole != "" {
			return parseSource([]byte(whole))
		}
		s := parseSource(sideText(c.file, side))
		s.fragment = true
		return s
	}
	// The two sides are parsed at once: tree-sitter's parse is most of the
	// cost on a large diff, and a parser is one goroutine's.
	done := make(chan struct{})
	go func() {
		defer close(done)
		if c.file.OldPath != "" {
			c.before = read(base, '-')
		}
	}()
	if c.file.NewPath != "" {
		c.after = read(head, '+')
	}
	<-done
}

// newTest reports whether an added line is in a test the other side does
// not have (by describe and name): its waits were chosen, not raised.
// False when either side's tests are unknown.
func (c change) newTest(l Line) bool {
	if c.after == nil || l.Kind != '+' || c.before == nil && c.file.OldPath != "" {
		return false
	}
	t := c.after.testAt(l.New)
	return t != nil && !c.before.hasTest(t.name)
}

// stubSleep reports whether the sleep on an added line is inside an
// anonymous function (a stub made slow, a process kept alive) or sleeps
// forever: the test does not wait on it.
func (c change) stubSleep(l Line) bool {
	if l.Kind != '+' || c.after == nil {
		return false
	}
	// A line's code may hold the lines after it (joinCalls): every sleep
	// that starts there counts.
	found := false
	for _, name := range sleepCalls {
		for _, i := range c.after.named[name] {
			if s := c.after.calls[i]; s.start >= l.New && s.start < l.New+maxJoined {
				if !s.inFn && !(len(s.args) > 0 && s.args[0] == ":infinity") {
					return false
				}
				found = true
			}
		}
	}
	return found
}

// pollName is a helper that polls for a condition (ExUnit has none, so
// each project names its own).
var pollName = regexp.MustCompile(`^(eventually|eventually_\w+|assert_eventually|assert_soon|assert_until\w*|wait_until\w*|wait_for\w*|poll|poll_until\w*)[!?]?$`)

// pollAt reports whether an added line holds a call of a polling helper,
// with or without parentheses.
func (c change) pollAt(l Line) bool {
	if l.Kind != '+' || c.after == nil {
		return false
	}
	return c.after.pollSpans(l.New)
}

// pollSpans reports whether a polling helper's call holds line n.
func (s *source) pollSpans(n int) bool {
	for _, i := range s.polls {
		if c := s.calls[i]; c.start <= n && n <= c.end {
			return true
		}
	}
	return false
}

// immediateAssertionReplaced reports whether a block removes an assertion
// that was checked once (not itself polled) and no sleep: a poll added
// there retries the assertion instead of replacing a blind wait.
func (c change) immediateAssertionReplaced(b block) bool {
	asserted := false
	for _, l := range b.removed {
		if _, found, _ := c.sleepOf(l.code); found {
			return false
		}
		if pollCall.MatchString(l.code) || c.before != nil && c.pollAtOld(l) {
			return false
		}
		asserted = asserted || assertion.MatchString(l.code)
	}
	return asserted
}

// pollAtOld is pollAt for a removed line.
func (c change) pollAtOld(l Line) bool { return c.before.pollSpans(l.Old) }

// testKeeps reports whether the test a removed line was in is still
// there, by describe and name, making at least as many of the calls
// counted (assertions, processes started): the lines moved or were
// restructured, the test does not do less. False when a side is not read
// as code or the line is in no test.
func (c change) testKeeps(l Line, counted func(name string) bool) bool {
	if c.before == nil || c.after == nil || c.before.broken || c.after.broken || l.Kind != '-' {
		return false
	}
	was := c.before.testAt(l.Old)
	if was == nil {
		return false
	}
	count := func(s *source, name string) (n int, found bool) {
		for i, t := range s.tests {
			if t.name != name {
				continue
			}
			found = true
			sent := s.sentIn(i)
			for _, call := range s.calls {
				if call.test == i && counted(call.name) && !(strings.HasPrefix(call.name, "assert_receive") && len(call.args) > 0 && sent[messageTag(call.args[0])]) {
					n++
				}
			}
		}
		return n, found
	}
	before, _ := count(c.before, was.name)
	after, found := count(c.after, was.name)
	return found && after >= before
}

// assertionCall is an ExUnit assertion, or a bang call, which raises when
// what it checks does not hold.
func assertionCall(name string) bool {
	return strings.HasPrefix(name, "assert") || strings.HasPrefix(name, "refute") || strings.HasSuffix(name, "!")
}

// concurrentCall is a call that starts something running beside the test.
func concurrentCall(name string) bool { return slices.Contains(concurrentCalls, name) }

// sentIn are the tags of the messages test i sends itself (send/2 in its
// body): waiting for one of them is the test's own plumbing, not a check
// of the code under test.
func (s *source) sentIn(i int) map[string]bool {
	out := map[string]bool{}
	for _, call := range s.calls {
		if call.test == i && call.name == "send" && len(call.args) == 2 {
			out[messageTag(call.args[1])] = true
		}
	}
	return out
}

// messageTag is a message's leading atom: ":pool" of `{:pool, pool}`,
// ":done" of `:done`; "" when it has none.
func messageTag(msg string) string {
	msg = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(msg), "{"))
	if !strings.HasPrefix(msg, ":") {
		return ""
	}
	end := strings.IndexAny(msg, ", }")
	if end < 0 {
		end = len(msg)
	}
	return msg[:end]
}

// cleanupOnly reports whether an added `try do` line starts a try that
// rescues and catches nothing.
func (c change) cleanupOnly(l Line) bool {
	return l.Kind == '+' && c.after != nil && slices.Contains(c.after.cleanups, l.New)
}

// testsStay reports whether each test whose definition a removed line
// held is still in the file, by describe and name (moved into a nested
// module, or into a describe of the same name). False when a side is not
// read as code.
func (c change) testsStay(removed []Line) bool {
	if c.before == nil || c.after == nil || c.before.fragment || c.after.fragment {
		return false
	}
	for _, l := range removed {
		t := c.before.testAt(l.Old)
		if t == nil || !c.after.hasTest(t.name) {
			return false
		}
	}
	return true
}

// unparsed notes each side read whole that does not parse as Elixir: the
// rules then read its lines, without the tests and calls around them.
func (c *change) unparsed() []Finding {
	var out []Finding
	for _, side := range []struct {
		s    *source
		name string
	}{{c.before, "base"}, {c.after, "head"}} {
		if side.s != nil && side.s.broken && !side.s.fragment {
			out = append(out, Finding{Rule: "not-parsed", Severity: Note, File: c.path,
				Why: "the file at the " + side.name + " does not parse as Elixir: the rules read its lines, without the tests and calls around them"})
		}
	}
	return out
}
