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
		var byCall map[string]Line // each added line by the call it ends with, read once per block
		for _, r := range b.removed {
			if !strings.Contains(r.code, "=") || !strings.ContainsAny(r.code, ":{%[") {
				continue
			}
			code, asserted := strings.CutPrefix(strings.TrimSpace(r.code), "assert ")
			m := matchLine.FindStringSubmatch(code)
			if m == nil || !asserted && strings.HasPrefix(code, "assert") {
				continue
			}
			if byCall == nil {
				byCall = callEnds(b.added)
			}
			pattern, expr := strings.TrimSpace(m[1]), strings.TrimSpace(m[2])
			a, ok := byCall[expr]
			if !ok {
				continue
			}
			lhs := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(a.code), expr))
			bound := strings.TrimSpace(strings.TrimSuffix(lhs, "="))
			if asserted && lhs != "" {
				continue // an assertion kept on the call: the assertion rules compare the two
			}
			switch {
			case lhs == "assert":
				out = append(out, c.finding("assertion-weakened", Concern, a, "the result of "+expr+" was matched ("+pattern+") and is now only checked to be truthy: {:error, _} passes too"))
			case bareName.MatchString(bound) || strings.HasPrefix(lhs, "assert"):
				// Bound to a name, the result is read later; an assert
				// with a pattern is the assertion rules' to compare.
			case lhs == "" || ignored.MatchString(bound):
				out = append(out, c.finding("assertion-weakened", Concern, a, "the result of "+expr+" was matched ("+pattern+") and is no longer checked: the test passes whatever it returns"))
			case strings.HasSuffix(lhs, "=") && !strings.Contains(lhs, "^") && literals(strings.TrimSuffix(lhs, "=")) < literals(pattern):
				out = append(out, c.finding("assertion-weakened", Concern, a, "the match on "+expr+" accepts more than before ("+pattern+"): a value gave way to a wildcard"))
			}
		}
	}
	return out
}

// callEnds indexes lines by what they end with after a match or an
// assert: the whole line, the part after its last "= ", the part after
// "assert ".
func callEnds(lines []Line) map[string]Line {
	out := map[string]Line{}
	put := func(k string, l Line) {
		if _, ok := out[k]; !ok && k != "" {
			out[k] = l
		}
	}
	for _, l := range lines {
		code := strings.TrimSpace(l.code)
		put(code, l)
		if i := strings.LastIndex(code, "= "); i >= 0 {
			put(strings.TrimSpace(code[i+2:]), l)
		}
		put(strings.TrimSpace(strings.TrimPrefix(code, "assert ")), l)
	}
	return out
}

// literal is a value a pattern pins: an atom, a number, a string, an
// alias (a struct's name).
var literal = regexp.MustCompile(`:[a-z_]\w*|\b\d[\d_.]*\b|"[^"]*"|\b[A-Z]\w*`)

// literals counts the values a pattern pins: a bound name or a wildcard
// pins none, so {:ok, order} made {:ok, _order} loses nothing.
func literals(pattern string) int { return len(literal.FindAllString(pattern, -1)) }

var (
	moxExpect = regexp.MustCompile(`\bexpect\(\s*([\w.]+)\s*,\s*(:\w+)|(?:([\w.]+)\s*)?\|>\s*expect\(\s*(:\w+)`)
	moxStub   = regexp.MustCompile(`\bstub\(\s*([\w.]+)\s*,\s*(:\w+)|(?:([\w.]+)\s*)?\|>\s*stub\(\s*(:\w+)`)
)

var (
	// bypassExpect and bypassStub are Bypass's (and Req.Test's)
	// expectation of a request, which fails the test when it does not
	// come, and its stub, which does not.
	bypassExpect = regexp.MustCompile(`\b(Bypass|Req\.Test)\.expect(?:_once)?\(\s*(\w+)\s*(?:,\s*"(\w+)"\s*,\s*"([^"]*)")?`)
	bypassStub   = regexp.MustCompile(`\b(Bypass|Req\.Test)\.stub\(\s*(\w+)\s*(?:,\s*"(\w+)"\s*,\s*"([^"]*)")?`)
)

// bypassed reads a Bypass or Req.Test call's server and, when given, the
// request's method and path.
func bypassed(re *regexp.Regexp, text string) (string, bool) {
	m := re.FindStringSubmatch(withStrings(text))
	if m == nil {
		return "", false
	}
	return strings.TrimSpace(m[1] + " " + m[2] + " " + m[3] + " " + m[4]), true
}

// mocked reads a Mox call's mock and function, called directly or piped
// (the mock then on the line before, left out).
func mocked(re *regexp.Regexp, code string) (string, bool) {
	m := re.FindStringSubmatch(code)
	switch {
	case m == nil:
		return "", false
	case m[1] != "":
		return m[1] + "." + m[2], true
	}
	return m[3] + "." + m[4], true
}

// expectationsDropped: a Mox expectation turned into a stub on the same
// mock and function, with no expectation of it left in the file's
// change: the test no longer fails when the call does not happen (or
// happens a different number of times). A stub in setup with the
// expectations moved into the tests keeps them.
func expectationsDropped(c change) []Finding {
	if !c.test {
		return nil
	}
	expectations := func(lines []Line) map[string]bool {
		out := map[string]bool{}
		for _, l := range lines {
			if !strings.Contains(l.code, "expect") {
				continue
			}
			if k, ok := mocked(moxExpect, l.code); ok {
				out[k] = true
			}
			if k, ok := bypassed(bypassExpect, l.Text); ok {
				out[k] = true
			}
		}
		return out
	}
	expected := expectations(c.removed())
	if len(expected) == 0 {
		return nil
	}
	kept := expectations(c.added())
	var out []Finding
	for _, l := range c.added() {
		k, ok := mocked(moxStub, l.code)
		if !ok {
			k, ok = bypassed(bypassStub, l.Text)
		}
		if ok && expected[k] && !kept[k] {
			out = append(out, c.finding("assertion-weakened", Concern, l, "an expectation of "+k+" became a stub: the test no longer checks that the call happens"))
		}
	}
	return out
}
