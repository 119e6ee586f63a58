package evidence

import (
	"regexp"
	"strings"
)

// The flaky rules about checks that are not written as assert: a match
// (`:ok = stop(pid)`, `{:ok, %{status: 200}} = get(url)`), which raises
// when the value does not match, and a Mox expectation, which fails the
// test when the call does not happen.

// matchLine is a statement that matches a literal pattern against a
// call's result: the pattern (an atom, a tuple, a map, a list) and the
// expression.
var matchLine = regexp.MustCompile(`^\s*([:{%\[].*?[^=!<>])=\s*([\w.:]+\(.*)$`)

// matchesLoosened: in a test, a match on a call's result dropped (the call
// kept, its result unchecked) or given a looser pattern (more wildcards):
// the test no longer fails when the call goes wrong.
func matchesLoosened(c change) []Finding {
	if !c.test {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		for _, r := range b.removed {
			if !strings.Contains(r.code, "=") || !strings.ContainsAny(r.code, ":{%[") {
				continue
			}
			m := matchLine.FindStringSubmatch(r.code)
			if m == nil || strings.HasPrefix(strings.TrimSpace(r.code), "assert") {
				continue
			}
			pattern, expr := strings.TrimSpace(m[1]), strings.TrimSpace(m[2])
			_, w0 := strength(pattern)
			for _, a := range b.added {
				code := strings.TrimSpace(a.code)
				if !strings.HasSuffix(code, expr) {
					continue
				}
				lhs := strings.TrimSpace(strings.TrimSuffix(code, expr))
				switch {
				case lhs == "" || lhs == "_ =" || strings.HasPrefix(lhs, "_") && strings.HasSuffix(lhs, "="):
					out = append(out, c.finding("assertion-weakened", Concern, a, "the result of "+expr+" was matched ("+pattern+") and is no longer checked: the test passes whatever it returns"))
				case strings.HasSuffix(lhs, "=") && !strings.Contains(lhs, "^"):
					if _, w1 := strength(strings.TrimSuffix(lhs, "=")); w1 > w0 {
						out = append(out, c.finding("assertion-weakened", Concern, a, "the match on "+expr+" accepts more than before ("+pattern+"): a wildcard took a value's place"))
					}
				}
				break
			}
		}
	}
	return out
}

var (
	moxExpect = regexp.MustCompile(`\bexpect\(\s*([\w.]+)\s*,\s*(:\w+)`)
	moxStub   = regexp.MustCompile(`\bstub\(\s*([\w.]+)\s*,\s*(:\w+)`)
)

// expectationsDropped: a Mox expectation turned into a stub on the same
// mock and function: the test no longer fails when the call does not
// happen (or happens a different number of times).
func expectationsDropped(c change) []Finding {
	if !c.test {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		expected := map[string]bool{}
		for _, l := range b.removed {
			if !strings.Contains(l.code, "expect(") {
				continue
			}
			if m := moxExpect.FindStringSubmatch(l.code); m != nil {
				expected[m[1]+"."+m[2]] = true
			}
		}
		if len(expected) == 0 {
			continue
		}
		for _, l := range b.added {
			if m := moxExpect.FindStringSubmatch(l.code); m != nil {
				delete(expected, m[1]+"."+m[2])
			}
		}
		for _, l := range b.added {
			if m := moxStub.FindStringSubmatch(l.code); m != nil && expected[m[1]+"."+m[2]] {
				out = append(out, c.finding("assertion-weakened", Concern, l, "an expectation of "+m[1]+"."+strings.TrimPrefix(m[2], ":")+" became a stub: the test no longer checks that the call happens"))
			}
		}
	}
	return out
}
