package evidence

import (
	"regexp"
	"strings"
)

// Pairing a removed assertion with the added one most like it: by the
// names they share, not their order.

// maxPaired bounds the assertions of a block compared pairwise.
const maxPaired = 200

// assertLine is an assert-family assertion with what pairing reads of it.
// refute is left out: a looser refutation is a stricter test.
type assertLine struct {
	line  Line
	macro string
	words map[string]bool
}

func asserts(lines []Line) []assertLine {
	var out []assertLine
	bound := map[string]string{} // a name bound in the lines, to the expression it holds
	for _, l := range lines {
		if m := resultBound.FindStringSubmatch(l.code); m != nil {
			bound[m[1]] = m[2]
		}
		m := macro(l.code)
		if m == "" || strings.HasPrefix(m, "refute") {
			continue
		}
		words := map[string]bool{}
		eachWord(sigil.ReplaceAllString(l.code, "~"), func(w string) {
			if operatorWords[w] {
				return
			}
			words[w] = true
			// slots = f(); assert length(slots) > 0 checks f()'s result:
			// it pairs with the assertion that matched f() directly.
			eachWord(bound[w], func(v string) { words[v] = true })
		})
		if out = append(out, assertLine{l, m, words}); len(out) == maxPaired {
			break
		}
	}
	return out
}

var word = regexp.MustCompile(`[A-Za-z_][\w?!]*`)

// sigil is a sigil's literal (~U[2024-03-04 08:00:00Z]): a value, not names.
var sigil = regexp.MustCompile(`~[a-zA-Z]\w*(\[[^\]]*\]|\([^)]*\)|\{[^}]*\}|<[^>]*>|"[^"]*"|'[^']*'|\|[^|]*\||/[^/]*/)[a-zA-Z]*`)

// resultBound is a line that binds a name to a call's result.
var resultBound = regexp.MustCompile(`^\s*([a-z_]\w*)\s*=\s*([\w.]+\(.*)$`)

// operatorWords are Elixir's word operators: what an assertion computes,
// not what it names, so they do not count towards pairing.
var operatorWords = map[string]bool{"and": true, "or": true, "not": true, "in": true, "when": true}

// macro is an assertion's macro: assert, refute, assert_receive, ...; ""
// for a line that is not an assertion.
func macro(line string) string { return assertion.FindString(strings.TrimSpace(line)) }

// similarity is the share of names two lines have in common (Jaccard).
func similarity(x, y map[string]bool) float64 {
	common := 0
	for w := range x {
		if y[w] {
			common++
		}
	}
	if union := len(x) + len(y) - common; union > 0 {
		return float64(common) / float64(union)
	}
	return 0
}

// keysDropped reports whether an assertion names a strict subset of the
// keys it named (options such as assert_enqueued's args:, a map
// pattern's fields): what it no longer names is no longer checked.
func keysDropped(was, now string) bool {
	keys := func(s string) map[string]bool {
		out := map[string]bool{}
		for _, m := range keyName.FindAllStringSubmatch(s, -1) {
			out[m[1]+m[2]] = true
		}
		return out
	}
	k0, k1 := keys(patternSide(was)), keys(patternSide(now))
	if len(k1) >= len(k0) {
		return false
	}
	for k := range k1 {
		if !k0[k] {
			return false
		}
	}
	return true
}

// patternSide is what a match assertion matches (left of its =), and
// for any other the assertion's own arguments without the calls in them:
// the options a function under test is called with are not checked.
func patternSide(line string) string {
	if m := matchAssert.FindStringIndex(line); m != nil {
		if i := strings.Index(line, " = "); i >= 0 {
			return line[:i]
		}
	}
	m := macro(line)
	if m == "" {
		return line
	}
	rest := strings.TrimSpace(line)[len(m):]
	if strings.HasPrefix(rest, "(") && strings.HasSuffix(rest, ")") {
		rest = rest[1 : len(rest)-1] // the macro's own parentheses
	}
	return m + " " + callsBlanked(rest)
}

// callsBlanked is s without the arguments of the calls in it (f(x: 1)
// made f()).
func callsBlanked(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteByte(s[i])
		if s[i] != '(' || i == 0 || !(s[i-1] == '_' || s[i-1] == '?' || s[i-1] == '!' || s[i-1] >= 'a' && s[i-1] <= 'z' || s[i-1] >= 'A' && s[i-1] <= 'Z' || s[i-1] >= '0' && s[i-1] <= '9') {
			continue
		}
		depth := 1
		for i++; i < len(s) && depth > 0; i++ {
			switch s[i] {
			case '(':
				depth++
			case ')':
				depth--
			}
		}
		i -= 2 // back to before the closing parenthesis, written next
		if i < 0 || depth > 0 {
			return b.String()
		}
	}
	return b.String()
}
