package evidence

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// The flaky rules about a test's tolerance: a timing check given more
// slack, or its upper bound dropped.

// deltaSlack: assert_in_delta given a larger delta than the one it
// replaces (integers or floats).
func deltaSlack(c change) []Finding {
	if !c.test {
		return nil
	}
	delta := func(line string) (float64, bool) {
		for _, n := range []string{"assert_in_delta", "refute_in_delta"} {
			if args, ok := callArgs(line, n); ok && len(args) >= 3 {
				return c.number(args[2])
			}
		}
		return 0, false
	}
	// Only a delta that replaces one is compared.
	out := longerWaits(c, delta, math.Inf(1), func(l Line, old, now float64) Finding {
		return c.finding("bound-loosened", Concern, l, fmt.Sprintf("the tolerance grew from %s to %s: the check accepts more, the flake is hidden", fmtNumber(old), fmtNumber(now)))
	})
	// A delta written as a share of a value (expected * 0.1) is compared
	// with one of the same value by its share.
	for _, b := range c.blocks {
		was := map[string]float64{}
		for _, l := range b.removed {
			if base, k, ok := deltaShare(l.code); ok {
				was[base] = max(was[base], k)
			}
		}
		for _, l := range b.added {
			if base, k, ok := deltaShare(l.code); ok && was[base] > 0 && k > was[base] {
				out = append(out, c.finding("bound-loosened", Concern, l, fmt.Sprintf("the tolerance grew from %s to %s of %s: the check accepts more, the flake is hidden", fmtNumber(was[base]), fmtNumber(k), base)))
			}
		}
	}
	return out
}

// valueName is a variable, a field or an attribute: expected, opts.base.
var valueName = regexp.MustCompile(`^[a-z_@][\w.@]*$`)

// deltaShare reads an assert_in_delta's delta as a share of a value:
// expected * 0.1 is 0.1 of expected, expected alone all of it.
func deltaShare(line string) (base string, k float64, ok bool) {
	args, found := callArgs(line, "assert_in_delta")
	if !found || len(args) < 3 {
		return "", 0, false
	}
	a, b, product := strings.Cut(args[2], "*")
	if !product {
		a, b = args[2], "1"
	}
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	if f, err := strconv.ParseFloat(a, 64); err == nil {
		a, b = b, fmtNumber(f)
	}
	k, err := strconv.ParseFloat(b, 64)
	if err != nil || !valueName.MatchString(a) {
		return "", 0, false
	}
	return a, k, true
}

// number reads a literal, integer or float, or a timeout expression.
func (c change) number(expr string) (float64, bool) {
	if f, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(expr), "_", ""), 64); err == nil {
		return f, true
	}
	v, ok := c.millis(expr)
	return float64(v), ok
}

// exactly is an assertion of equality (==, ===), not a comparison.
var exactly = regexp.MustCompile(`[^=!<>]===?[^=~]`)

func fmtNumber(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

var (
	// lessThan is S < N or S <= N; greaterThan N > S or N >= S; inRange
	// S in A..B: what bounds S from above.
	lessThan    = regexp.MustCompile(`\b([a-z_][\w.]*)\s*<=?\s*([\w@.]+)`)
	greaterThan = regexp.MustCompile(`([\w@.]+)\s*>=?\s*([a-z_][\w.]*)\b`)
	inRange     = regexp.MustCompile(`\b([a-z_][\w.]*)\s+in\s+[\w@.]+\.\.([\w@.]+)`)
	// exprBound is an assertion of one comparison whose left side is an
	// expression (abs(div(elapsed, 1000) - 100) < 20); refuteAbove is refute
	// S > N, which bounds S from above.
	exprBound   = regexp.MustCompile(`^\s*assert\s+(.+?)\s*<=?\s*([\w@.]+)\s*$`)
	refuteAbove = regexp.MustCompile(`^\s*refute\s+(.+?)\s*>=?\s*([\w@.]+)\s*$`)
	equalTo     = regexp.MustCompile(`\b([a-z_][\w.]*)\s*===?\s*([\w@.]+)`)
	numberLike  = regexp.MustCompile(`^(@\w+|[0-9][0-9_]*|:timer\.\w+\(.*\))$`)
)

// upperBounds reads, from an assertion, the subjects it bounds from above
// and each bound as written; exact counts an equality as a bound (an
// assertion that replaces a range with a value keeps it bounded).
func upperBounds(line string, exact bool) map[string]string {
	out := map[string]string{}
	if !strings.ContainsAny(line, "<>") && !strings.Contains(line, "..") && !strings.Contains(line, "assert_in_delta") && !(exact && strings.Contains(line, "==")) {
		return out // no comparison: the regexps below would find nothing
	}
	if m := refuteAbove.FindStringSubmatch(line); m != nil {
		out[m[1]] = m[2]
		return out
	}
	if !assertion.MatchString(line) || strings.HasPrefix(strings.TrimSpace(line), "refute") {
		return out
	}
	if m := exprBound.FindStringSubmatch(line); m != nil && strings.ContainsAny(m[1], "()") {
		out[m[1]] = m[2]
	}
	if args, ok := callArgs(line, "assert_in_delta"); ok && len(args) >= 3 {
		out[args[0]] = args[1] + " ± " + args[2] // bounded on both sides
	}
	for _, m := range lessThan.FindAllStringSubmatch(line, -1) {
		out[m[1]] = m[2]
	}
	for _, m := range greaterThan.FindAllStringSubmatch(line, -1) {
		if numberLike.MatchString(m[1]) {
			out[m[2]] = m[1]
		}
	}
	for _, m := range inRange.FindAllStringSubmatch(line, -1) {
		out[m[1]] = m[2]
	}
	for _, m := range equalTo.FindAllStringSubmatch(line, -1) {
		if exact {
			out[m[1]] = m[2]
		}
	}
	return out
}

// boundsDropped: an assertion that bounded a value from above replaced by
// one that checks the same value without that bound, or with a larger
// one (assert elapsed >= 100 and elapsed < 150 made assert elapsed >= 100).
func boundsDropped(c change) []Finding {
	if !c.test {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		was := map[string]string{}
		for _, l := range b.removed {
			for s, v := range upperBounds(l.code, false) {
				was[s] = v
			}
		}
		for _, l := range b.added {
			if len(was) == 0 || !assertion.MatchString(l.code) {
				continue
			}
			now := upperBounds(l.code, true)
			for s, old := range was {
				if !mentions(l.code, s) {
					continue
				}
				bound, kept := now[s]
				switch {
				case !kept && exactly.MatchString(l.code):
					// assert_in_delta x, 1.2, 0.1 made assert x == 1.2: an
					// exact value bounds it on both sides.
				case !kept:
					out = append(out, c.finding("bound-loosened", Concern, l, fmt.Sprintf("%s was bounded by %s and no longer is: the check accepts any value above its floor", s, old)))
				default:
					o, ok1 := c.millis(old)
					n, ok2 := c.millis(bound)
					if ok1 && ok2 && n > o {
						out = append(out, c.finding("bound-loosened", Concern, l, fmt.Sprintf("the bound on %s grew from %s to %s: the check accepts more", s, old, bound)))
					}
				}
				delete(was, s)
			}
		}
	}
	return out
}

// mentions reports whether line checks subject: a name as a whole word,
// an expression (div(elapsed, 1000)) as written.
func mentions(line, subject string) bool {
	if strings.ContainsAny(subject, "( ") {
		return strings.Contains(line, subject)
	}
	return indexWord(line, subject) >= 0
}
