package evidence

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The flaky rules about a fix's assertions: deleted, or replaced by
// looser ones.

// deletedAssertions: fewer assertions in a test file than before, not
// counting those added in another file of the diff (moved with their test).
func deletedAssertions(c change) []Finding {
	if !c.test || c.file.Deleted() {
		return nil
	}
	var gone []Line
	added := 0
	foldedIn := map[string]int{} // removed checks folded into a pattern, by test
	for _, b := range c.blocks {
		var blockChecks []string
		for _, l := range b.added {
			if checksSomething(l.code) && len(blockChecks) <= maxPinned {
				blockChecks = append(blockChecks, squashSpace(withStrings(l.Text)))
			}
		}
		for i, l := range b.removed {
			switch {
			case !checksSomething(l.code) || c.movedTo(l.Text):
			case len(blockChecks) <= maxPinned && (folded(l, blockChecks) || pinnedInstead(l, b.removed[max(0, i-3):i], blockChecks)):
				if t := c.before.testAt(l.Old); t != nil {
					foldedIn[t.name]++
				}
			default:
				gone = append(gone, l)
			}
		}
	}
	for _, l := range c.added() {
		if checksSomething(l.code) && !trivial.MatchString(l.code) {
			added++
		}
	}
	if len(gone) <= added {
		// As many assertions in the file, but one test may check less:
		// read per test when both sides are whole files.
		if c.before == nil || c.after == nil || c.before.fragment || c.after.fragment {
			return nil
		}
		readded := map[string]bool{} // an assertion moved to another test of the file checks as much
		for _, l := range c.added() {
			readded[squashSpace(l.code)] = true
		}
		for _, l := range gone {
			if t := c.before.testAt(l.Old); t != nil && c.after.holds(*t) && !readded[squashSpace(l.code)] && !c.testKeepsFolded(l, assertionCall, foldedIn[t.name]) {
				return []Finding{c.finding("assertion-deleted", Concern, l, fmt.Sprintf("the test %q makes fewer assertions than before: it checks less", t.name))}
			}
		}
		return nil
	}
	restructured := true
	for _, l := range gone {
		restructured = restructured && c.testKeeps(l, assertionCall)
	}
	if restructured {
		return nil // each test still checks as much, read as code
	}
	return []Finding{c.finding("assertion-deleted", Concern, gone[0], fmt.Sprintf("%d %s removed and %d added: the test checks less than before", len(gone), plural(len(gone), "assertion", "assertions"), added))}
}

// strength orders assertions from strict to loose: equality on a value,
// then a match or a regex, then a comparison or a type check, then mere
// truthiness.
func strength(line string) (score, wildcards int) {
	s := topLevel(line)
	switch {
	case nonEmpty.MatchString(s):
		score = 1 // anything at all passes, as with a truthy assert
	case alternative.MatchString(s):
		score = 2 // either of two outcomes passes
	case sizeOnly.MatchString(s):
		score = 2 // a count or a size, not the values
	case equalCall.MatchString(s):
		score = 4 // an equality by the type's own rule (Decimal.equal?/2)
	case ordered.MatchString(s):
		score = 2 // an order (DateTime.compare(a, b) == :gt), not the value
	case strings.Contains(s, "==="), strings.Contains(s, "=="):
		score = 4
	case indexWord(s, "assert_receive") >= 0, indexWord(s, "assert_received") >= 0, strings.Contains(s, "match?("), matchAssert.MatchString(s):
		score = 3
	case strings.Contains(s, "=~"):
		score = 3
	case looseAssert.MatchString(s):
		score = 2
	default:
		score = 1
	}
	wildcards = len(wildcard.FindAllString(line, -1)) // in a call's arguments too: match?({:ok, _}, f())
	if m := macro(s); m == "assert_receive" || m == "assert_received" {
		if args, ok := callArgs(s, m); ok && len(args) > 0 && barePattern.MatchString(args[0]) {
			wildcards++ // a bare name as the pattern takes any message
		}
	}
	return score, wildcards
}

// checksSomething reports whether a line asserts: an assertion, or a
// flunk (in a case branch, it asserts the others).
func checksSomething(code string) bool {
	return anyAssertion.MatchString(code) || strings.Contains(code, "flunk") && flunkCall.MatchString(code)
}

var flunkCall = regexp.MustCompile(`(^\s*|->\s*|\bdo:?\s+)flunk\b`)

// trivial is an assertion that cannot fail: it replaces a check, it is
// not one.
var trivial = regexp.MustCompile(`^\s*(assert\s*\(?\s*(true|:ok|1|"[^"]*")|refute\s*\(?\s*(false|nil))\s*\)?\s*$`)

var (
	pinnedMatch = regexp.MustCompile(`^\s*assert\w*\s*\(?.*\^[a-z_]\w*`)
	matchAssert = regexp.MustCompile(`^\s*assert\w*[\s(]+[%{\[].*[^=!<>]=[^=~]`)
	nonEmpty    = regexp.MustCompile(`\b(length|Enum\.count|map_size|MapSet\.size)\([^=]*\)\s*(>|>=|!=)\s*[01]\b|!=\s*(\[\]|%\{\}|nil|"")\s*\)?\s*$|\bEnum\.any\?\(\s*\w+\s*\)|\bnot\s+Enum\.empty\?|refute\s*\(?\s*Enum\.empty\?`)
	sizeOnly    = regexp.MustCompile(`\b(length|Enum\.count|map_size|tuple_size|byte_size|MapSet\.size|Enum\.empty\?)\([^=]*\)\s*===?|===?\s*(length|Enum\.count|map_size|tuple_size|byte_size|MapSet\.size)\(`)
	looseAssert = regexp.MustCompile(`!=|>=|<=|[^-=]>|<[^-=>]|\bis_\w+\(|\blength\(|\bnot\b|\bin\b`)
	wildcard    = regexp.MustCompile(`(^|[^\w])_(\w*)`)
	// equalCall is a type's own equality (Decimal.equal?(a, b)).
	equalCall = regexp.MustCompile(`\b[A-Z][\w.]*\.(equal|eq|equivalent)\?\(`)
	// ordered is a compare function's answer checked: an order between
	// two values, not what either is.
	ordered     = regexp.MustCompile(`\.compare\(.*(===?|!=|\bin)\s*\[?\s*:(gt|lt|eq)\b`)
	alternative = regexp.MustCompile(`\sor(\s|$)|\|\|`)
	barePattern = regexp.MustCompile(`^[a-z]\w*$`)
)

// weakenedAssertions: an assertion replaced by a looser one: == turned
// into a match, a comparison or truthiness, or a pattern given more
// wildcards, unless the new pattern pins the test's own values. Each
// removed assertion is compared with the added one most like it (same
// macro, most names in common), so unrelated new assertions are not read
// as replacements.
var (
	// orderedList compares with, or matches, a list literal: its order is checked.
	orderedList = regexp.MustCompile(`===?\s*\[|\]\s*=[^=~]`)
	// unordered compares without the order.
	unordered = regexp.MustCompile(`\bEnum\.sort(_by)?\(|\bMapSet\.new\(|\|>\s*Enum\.sort\b`)
	// orderWords in a test's name say the order is what it checks.
	orderWords = regexp.MustCompile(`(?i)\b(order\w*|sort\w*|first|last|newest|oldest|latest|earliest|rank\w*|top|ascending|descending|chronolog\w*|before|after|sequence)\b`)
)

// orderUnchecked reports whether an assertion on a list in order became
// one that ignores the order, in a test whose name says order is what it
// checks (when it does not, sorting both sides is how a test stops
// depending on an order it never meant to check).
func (c change) orderUnchecked(was Line, now string) bool {
	if !orderedList.MatchString(was.code) || unordered.MatchString(was.code) || !unordered.MatchString(now) {
		return false
	}
	t := c.before.testAt(was.Old)
	return t != nil && orderWords.MatchString(t.full)
}

// kept reports whether an assertion as strong as w (strength s0) on much
// the same words is among the block's new ones: a looser check added
// beside it weakens nothing.
func kept(w assertLine, now []assertLine, s0 int) bool {
	for _, n := range now {
		if s, _ := strength(n.line.code); n.macro == w.macro && s >= s0 && similarity(w.words, n.words) >= 0.5 {
			return true
		}
	}
	return false
}

func weakenedAssertions(c change) []Finding {
	if !c.test {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		was, now := asserts(b.removed), asserts(b.added)
		// An assertion of a test the base does not have replaces nothing.
		now = slices.DeleteFunc(now, func(a assertLine) bool { return c.newTest(a.line) })
		used := map[int]bool{}
		for _, w := range was {
			best, bestScore := -1, 0.5
			for i, n := range now {
				if used[i] || w.macro != n.macro {
					continue
				}
				sim := similarity(w.words, n.words)
				if len(n.words) == 1 {
					sim = 1 // the same macro with nothing left to check: assert_email_sent()
				}
				if sim > bestScore || sim == bestScore && best < 0 {
					best, bestScore = i, sim // the first of equals: replaced in order
				}
			}
			if best < 0 {
				continue
			}
			used[best] = true
			n := now[best]
			s0, w0 := strength(w.line.code)
			s1, w1 := strength(n.line.code)
			switch {
			case pinnedMatch.MatchString(n.line.code) && !pinnedMatch.MatchString(w.line.code):
				// A match on the test's own data (%{^id => 1} = counts) reads
				// only its own rows where others' may be: narrower, not looser.
			case c.orderUnchecked(w.line, n.line.code):
				out = append(out, c.finding("assertion-weakened", Concern, n.line, "the test is about order (its name says so) and no longer compares it ("+strings.TrimSpace(w.line.Text)+"): any order now passes"))
			case fieldMatched(w.line.code, n.line.code):
				// assert x.name == "a" made assert %{name: "a"} = x: the same
				// field checked for the same value.
			case s1 < s0 && !kept(w, now, s0):
				out = append(out, c.finding("assertion-weakened", Concern, n.line, "the assertion checks less than the one it replaces ("+strings.TrimSpace(w.line.Text)+"): it may pass without the behaviour"))
			case s1 == s0 && w1 > w0 && !renamedUnused(w.line.code, n.line.code):
				out = append(out, c.finding("assertion-weakened", Concern, n.line, "the pattern accepts more than the one it replaces ("+strings.TrimSpace(w.line.Text)+"): a wildcard took a value's place"))
			case s1 == s0 && textShortened(w.line.Text, n.line.Text):
				out = append(out, c.finding("assertion-weakened", Concern, n.line, "the text matched is a part of the one it replaces ("+strings.TrimSpace(w.line.Text)+"): what it no longer names now passes whatever it says"))
			case s1 == s0 && keysDropped(w.line.code, n.line.code):
				out = append(out, c.finding("assertion-weakened", Concern, n.line, "the assertion names fewer of what it checks than the one it replaces ("+strings.TrimSpace(w.line.Text)+"): what it left out now passes whatever it is"))
			case s1 <= s0 && pinnedMatch.MatchString(topLevel(w.line.code)) && !strings.Contains(n.line.code, "^"):
				out = append(out, c.finding("assertion-weakened", Concern, n.line, "the pattern accepts more than the one it replaces ("+strings.TrimSpace(w.line.Text)+"): a pinned value gave way to a pattern"))
			}
		}
	}
	return out
}

var (
	exactAssert = regexp.MustCompile(`^\s*assert\s*\(?\s*([\w.]+(?:\([^()]*\))?)\s*===?\s*\S`)
	refuteOf    = regexp.MustCompile(`^\s*refute\s*\(?\s*([\w.]+(?:\([^()]*\))?)\s*(=~|!=|==|in\b)`)
)

// refutedInstead: an exact check of a value (assert x == ...) replaced by
// a refutation on the same value (refute x =~ "warning"): anything but
// the one thing refuted now passes.
func refutedInstead(c change) []Finding {
	if !c.test {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		exact := map[string]Line{}
		for _, l := range b.removed {
			if m := exactOf(l.code); m != nil {
				exact[m[1]] = l
			}
		}
		if len(exact) == 0 {
			continue
		}
		for _, l := range b.added {
			if m := exactOf(l.code); m != nil {
				delete(exact, m[1]) // still checked exactly
			}
		}
		for _, l := range b.added {
			if !strings.Contains(l.code, "refute") {
				continue
			}
			if m := refuteOf.FindStringSubmatch(l.code); m != nil {
				if was, ok := exact[m[1]]; ok {
					out = append(out, c.finding("assertion-weakened", Concern, l, "a refutation replaces an exact check ("+strings.TrimSpace(was.Text)+"): anything but what it refutes now passes"))
				}
			}
		}
	}
	return out
}

// exactOf reads an exact check (assert x == ...): its subject.
func exactOf(code string) []string {
	if !strings.Contains(code, "==") || !strings.Contains(code, "assert") {
		return nil
	}
	return exactAssert.FindStringSubmatch(code)
}

var (
	fieldEquals = regexp.MustCompile(`^\s*assert\s*\(?\s*([a-z_]\w*)\.([a-z_]\w*)\s*==\s*(.+?)\s*\)?\s*$`)
	matchOnto   = regexp.MustCompile(`=\s*([a-z_]\w*)\s*\)?\s*$`)
)

// fieldMatched reports whether an assertion that compared one field of a
// value (assert x.name == "a") became a match of the same value whose
// pattern holds that field with the same value (assert %{name: "a"} = x).
func fieldMatched(was, now string) bool {
	f := fieldEquals.FindStringSubmatch(was)
	m := matchOnto.FindStringSubmatch(now)
	if f == nil || m == nil || f[1] != m[1] {
		return false
	}
	value := regexp.QuoteMeta(f[3])
	return regexp.MustCompile(`\b`+regexp.QuoteMeta(f[2])+`:\s*`+value+`\s*[,}]`).MatchString(now) ||
		regexp.MustCompile(`"`+regexp.QuoteMeta(f[2])+`"\s*=>\s*`+value+`\s*[,}]`).MatchString(now)
}

var (
	unusedName = regexp.MustCompile(`(^|[^\w])_([a-z]\w*)`)
	keyName    = regexp.MustCompile(`\b([a-z_]\w*):\s|"([^"]*)"\s*=>`)
)

// renamedUnused reports whether two lines differ only in names marked
// unused ({:ok, reservation} made {:ok, _reservation}): a fresh name
// matched anything already.
func renamedUnused(was, now string) bool {
	return squashSpace(unusedName.ReplaceAllString(was, "$1$2")) == squashSpace(unusedName.ReplaceAllString(now, "$1$2"))
}
