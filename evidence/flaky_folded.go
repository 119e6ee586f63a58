package evidence

import (
	"regexp"
	"strings"
)

// Checks rewritten, not dropped: a removed check whose value is now
// written into another assertion's pattern, and an assertion read by
// its own operator rather than its arguments'.

// comparedTo is an equality's expected side: assert got == expected.
var comparedTo = regexp.MustCompile(`^\s*assert(?:\s+|\s*\(\s*)[a-z_][\w.]*\s*===?\s*(.+?)\s*$`)

// commonValue is a value many assertions name: nil, true, :ok.
var commonValue = regexp.MustCompile(`^(nil|true|false|:\w+|""|\[\]|%\{\})$`)

// folded reports whether a removed equality's expected value is now
// written into an added assertion's pattern of its block (assert id == job_id
// folded into assert_receive {:done, ^job_id}): checked there, not
// dropped.
func folded(l Line, addedChecks []string) bool {
	m := comparedTo.FindStringSubmatch(withStrings(l.Text))
	if m == nil {
		return false
	}
	want := squashSpace(m[1])
	if strings.HasPrefix(strings.TrimSpace(l.code), "assert(") {
		want = strings.TrimSpace(strings.TrimSuffix(want, ")")) // the macro's own parenthesis
	}
	if len(want) < 3 || intLit.MatchString(want) || commonValue.MatchString(want) {
		return false // too common to be told apart from anything else
	}
	for _, a := range addedChecks {
		if strings.Contains(a, want) {
			return true
		}
	}
	return false
}

// topLevel is an assertion with what its calls' arguments say left out
// (assert [a] = Repo.all(from r in R, where: r.id == ^id) compares with
// =, not ==); the assertion's own parentheses are kept.
func topLevel(line string) string {
	var b strings.Builder
	depth, keep := 0, 0
	if m := macro(line); m != "" && strings.HasPrefix(strings.TrimSpace(line)[len(m):], "(") {
		keep = 1 // assert(x == y): the macro's own parentheses
	}
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '(':
			depth++
			if depth > keep+1 {
				continue
			}
		case ')':
			depth--
			if depth > keep {
				continue
			}
		default:
			if depth > keep {
				continue
			}
		}
		b.WriteByte(line[i])
	}
	return b.String()
}

// checkedName is an assertion about one bound name: assert retry_after in
// 1..1_000.
var checkedName = regexp.MustCompile(`^\s*(?:assert|refute)\s*\(?\s*([a-z_]\w*)(?:\s*[^\w.(\s]|\s+(?:not\s+)?in\b)`)

// literalValue is a value written out (500, :late, "x", ^id).
var literalValue = regexp.MustCompile(`^\^?[\w"':.]+$`)

// maxPinned bounds the assertions of a block pinnedInstead reads: a
// test's block holds a few, a diff at the bounds thousands.
const maxPinned = 50

// pinnedInstead reports whether a removed check of a name is now a
// literal in the pattern that bound it, a few lines above (assert
// {:error, :late, after} = f() with assert after in 1..1_000, made
// assert {:error, :late, 500} = f()): the value is checked exactly, not
// dropped.
func pinnedInstead(l Line, above []Line, addedChecks []string) bool {
	m := checkedName.FindStringSubmatch(l.code)
	if m == nil {
		return false
	}
	for _, bound := range above {
		r := squashSpace(withStrings(bound.Text))
		at := indexWord(r, m[1])
		if at < 0 || !matchAssert.MatchString(bound.code) || !strings.Contains(r[at:], "=") {
			continue // not the pattern that bound it
		}
		before, after := r[:at], r[at+len(m[1]):]
		for _, a := range addedChecks {
			if len(a) <= len(before)+len(after) || !strings.HasPrefix(a, before) || !strings.HasSuffix(a, after) {
				continue
			}
			if v := a[len(before) : len(a)-len(after)]; literalValue.MatchString(v) && !bareName.MatchString(v) && !strings.HasPrefix(v, "_") {
				return true
			}
		}
	}
	return false
}

// matchedText is what =~ matches: a string's or a regex sigil's text.
var matchedText = regexp.MustCompile(`=~\s*(?:"((?:[^"\\]|\\.)*)"|~[rR][/"(|{\[<']((?:[^/"()|{}\[\]<>'\\]|\\.)*)[/")|}\]>']\w*)`)

// textShortened reports whether an =~ now matches a part of the text it
// matched (a log line's "[warning] Rate limit exceeded for key=pk_7Hq"
// made ~r/rate limit/i): the rest of it is no longer checked.
func textShortened(was, now string) bool {
	text := func(line string) (string, bool) {
		m := matchedText.FindStringSubmatch(line)
		if m == nil {
			return "", false
		}
		return strings.ToLower(strings.ReplaceAll(m[1]+m[2], "\\", "")), true
	}
	old, ok1 := text(was)
	neu, ok2 := text(now)
	return ok1 && ok2 && neu != "" && len(neu)*3 < len(old)*2 && strings.Contains(old, neu)
}
