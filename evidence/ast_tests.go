package evidence

import (
	"slices"
	"strings"
)

// Tests across a change's two sides read as code: the same test by its
// name (or ExUnit's, when regrouped under a describe), and what it still
// does there.

// testKeeps reports whether the test a removed line was in is still
// there, by describe and name, making at least as many of the calls
// counted (assertions, processes started): the lines moved or were
// restructured, the test does not do less. False when a side is not read
// as code or the line is in no test.
func (c change) testKeeps(l Line, counted func(name string) bool) bool {
	return c.testKeepsFolded(l, counted, 0)
}

// testKeepsFolded is testKeeps when folded of the test's removed checks
// are now written into its other assertions' patterns (folded).
func (c change) testKeepsFolded(l Line, counted func(name string) bool, folded int) bool {
	if c.before == nil || c.after == nil || c.before.broken || c.after.broken || l.Kind != '-' {
		return false
	}
	was := c.before.testAt(l.Old)
	if was == nil {
		return false
	}
	count := func(s *source, name string, own bool) (n int, found bool) {
		for i, t := range s.tests {
			if t.name != name && !(own && (t.full == was.full || t.own == was.own)) {
				continue
			}
			found = true
			sent := s.sentIn(i)
			for _, call := range s.calls {
				if call.test != i && !(call.test < 0 && s.setupFor(t, call.start)) {
					continue
				}
				if call.test != i && strings.HasSuffix(call.name, "!") && !strings.HasPrefix(call.name, "assert") {
					continue // a setup's bang call makes a fixture; what it checks is not the test's
				}
				if s.defined[call.name] && counted("assert") {
					n += s.helperAsserts()[call.name] // what the file's helper asserts, not its name
					continue
				}
				if k := c.diff.supportAsserts[call.name]; k > 0 && s == c.after && counted("assert") {
					n += k // what a helper of the diff's test support asserts
					continue
				}
				if counted(call.name) && !(strings.HasPrefix(call.name, "assert_receive") && len(call.args) > 0 && sent[messageTag(call.args[0])]) {
					n++
				}
			}
		}
		return n, found
	}
	before, _ := count(c.before, was.name, false)
	after, found := count(c.after, was.name, false)
	if !found && c.after.holds(*was) {
		after, found = count(c.after, was.name, true)
	}
	return found && after+folded >= before
}

// setupFor reports whether line n is in a setup block that runs before
// test t: the module's, or its describe's.
func (s *source) setupFor(t testUnit, n int) bool {
	for _, st := range s.setups {
		if st[0] <= n && n <= st[1] && (st[2] == 0 || st[2] == t.describe[0] && st[3] == t.describe[1]) {
			return true
		}
	}
	return false
}

// ownNamed counts the tests that give themselves that name, whatever
// their describe.
func (s *source) ownNamed(own string) int {
	n := 0
	for _, t := range s.tests {
		if t.own == own {
			n++
		}
	}
	return n
}

// holds reports whether s has test t of the other side: by describe and
// name, or regrouped under another describe, by ExUnit's name (test
// "post/3 rejects" made describe "post/3", test "rejects") or by the
// test's own name when one test alone has it.
func (s *source) holds(t testUnit) bool {
	if s == nil {
		return false
	}
	if s.hasTest(t.name) || s.ownNamed(t.own) == 1 {
		return true
	}
	for _, u := range s.tests {
		if u.full == t.full {
			return true
		}
	}
	return false
}

// assertionCall is an ExUnit assertion, or a bang call, which raises when
// what it checks does not hold.
func assertionCall(name string) bool {
	return strings.HasPrefix(name, "assert") || strings.HasPrefix(name, "refute") || strings.HasSuffix(name, "!") || statusAsserted[name]
}

// statusAsserted are Phoenix.ConnTest's helpers that assert a response's
// status as they read it (json_response(conn, 200)).
var statusAsserted = map[string]bool{"json_response": true, "html_response": true, "text_response": true, "response": true, "redirected_to": true}

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

// helperAsserts is how many assertions each of the file's own
// functions makes (every clause of it, one level deep), read once: a test
// that calls a helper that asserts checks what the helper asserts.
func (s *source) helperAsserts() map[string]int {
	s.helperOnce.Do(func() {
		s.helpers = s.assertsInDefs(func(callSite) int { return 1 })
	})
	return s.helpers
}

// assertsInDefs sums, for each function of the file, the weight of each
// assertion made in it outside any test.
func (s *source) assertsInDefs(weight func(callSite) int) map[string]int {
	out := map[string]int{}
	spans := make([][2]int, len(s.defs))
	for i, d := range s.defs {
		spans[i] = [2]int{d.start, d.end}
	}
	inDef := newSpanIndex(spans)
	for _, call := range s.calls {
		if call.test >= 0 || !assertionCall(call.name) {
			continue
		}
		inDef.holding(call.start, call.end, func(i int) bool {
			out[s.defs[i].name] += weight(call)
			return false
		})
	}
	return out
}
