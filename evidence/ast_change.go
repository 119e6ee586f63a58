package evidence

import (
	"regexp"
	"slices"
	"sort"
	"strings"
)

// What the rules ask of a change's two sides read as code (ast.go): the
// test a line is in, the calls around it, what a test still does.

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
	return t != nil && !c.before.holds(*t)
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

// pollName is the name of a helper that polls for a condition.
var pollName = regexp.MustCompile(`^(` + pollNames + `)[!?]?$`)

// loopCalls run what they are given again and again, not once per item
// of data (a for or an Enum.map over rows inserts them); with a sleep,
// they poll.
var loopCalls = []string{"Enum.reduce_while", "Stream.repeatedly", "Stream.iterate", "Stream.cycle"}

// localPollers are the functions a file defines whose body sleeps and
// either calls the function again or repeats (loopCalls): they poll,
// whatever their names say. defined holds every function it defines.
func (s *source) localPollers() (pollers, defined map[string]bool) {
	pollers, defined = map[string]bool{}, map[string]bool{}
	for _, def := range s.calls {
		if def.name != "def" && def.name != "defp" || len(def.args) == 0 {
			continue
		}
		name := nameAt([]byte(def.args[0]), 0)
		if name == "" {
			continue
		}
		defined[name] = true
		sleeps := 0
		for _, n := range sleepCalls {
			sleeps += s.callsIn(n, def, 1)
		}
		if sleeps == 0 {
			continue
		}
		// The head is a call of the name only when written with
		// parentheses; one more call of it in the body calls itself.
		again := s.callsIn(name, def, 2)
		if !strings.Contains(def.args[0], "(") {
			again++
		}
		for _, n := range loopCalls {
			again += 2 * s.callsIn(n, def, 1)
		}
		if again >= 2 {
			pollers[name] = true
		}
	}
	return pollers, defined
}

// callsIn counts the calls of name within span's lines, up to most: the
// calls are in the order they start, so the ones inside are found by a
// binary search, not a scan.
func (s *source) callsIn(name string, span callSite, most int) int {
	idx := s.named[name]
	i := sort.Search(len(idx), func(i int) bool { return s.calls[idx[i]].start >= span.start })
	n := 0
	for ; i < len(idx) && n < most && s.calls[idx[i]].start <= span.end; i++ {
		if s.calls[idx[i]].end <= span.end {
			n++
		}
	}
	return n
}

// definesPoller reports whether a block adds a function that polls
// (localPollers): its sleep and rescue are how it polls.
func (c change) definesPoller(b block) bool {
	if c.after == nil || len(c.after.pollers) == 0 {
		return false
	}
	for _, l := range b.added {
		if m := defName.FindStringSubmatch(l.code); m != nil && c.after.pollers[m[1]] {
			return true
		}
	}
	return false
}

// defName is a function definition's name, with or without parentheses.
var defName = regexp.MustCompile(`^\s*defp?\s+([a-z_]\w*[?!]?)`)

// pollsByName reports whether a name is a polling helper's: a function of
// the file that polls (localPollers), or one named like a poll
// (pollName) that the file does not define as something else. A
// wait_for_done that only asserts a message is not a poll.
func (s *source) pollsByName(name string, named bool) bool {
	if s.pollers[name] {
		return true
	}
	return named && (s.fragment || !s.defined[name])
}

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
	s.pollIndexOnce.Do(func() {
		spans := make([][2]int, len(s.polls))
		for k, i := range s.polls {
			spans[k] = [2]int{s.calls[i].start, s.calls[i].end}
		}
		s.pollIndex = newSpanIndex(spans)
	})
	return s.pollIndex.any(n, n)
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

// sleeps reports whether the source sleeps anywhere.
func (s *source) sleeps() bool {
	if s == nil {
		return false
	}
	for _, n := range sleepCalls {
		if len(s.named[n]) > 0 {
			return true
		}
	}
	return false
}

// cleanupOnly reports whether an added `try do` line starts a try that
// rescues and catches nothing.
func (c change) cleanupOnly(l Line) bool {
	return l.Kind == '+' && c.after != nil && slices.Contains(c.after.cleanups, l.New)
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
