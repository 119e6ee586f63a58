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
		for _, w := range word.FindAllString(sigil.ReplaceAllString(l.code, "~"), -1) {
			if operatorWords[w] {
				continue
			}
			words[w] = true
			// slots = f(); assert length(slots) > 0 checks f()'s result:
			// it pairs with the assertion that matched f() directly.
			for _, v := range word.FindAllString(bound[w], -1) {
				words[v] = true
			}
		}
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
