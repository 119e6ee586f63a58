package evidence

import (
	"fmt"
	"regexp"
	"strings"
)

// doctestLine is a doctest/2 call: its module and its options.
var doctestLine = hinted{regexp.MustCompile(`^\s*doctest\s*\(?\s*([\w.]+)\s*(?:,\s*(.*?))?\)?\s*$`), []string{"doctest"}}

// doctestsNarrowed: a module's doctests given an except: list or more of
// it, or an only: list where there was none: the examples left out no
// longer run, the flaky one among them.
func doctestsNarrowed(c change) []Finding {
	if !c.test {
		return nil
	}
	was := map[string]string{}
	for _, l := range c.removed() {
		if m := doctestLine.FindStringSubmatch(l.code); m != nil {
			was[m[1]] = m[2]
		}
	}
	var out []Finding
	for _, l := range c.added() {
		m := doctestLine.FindStringSubmatch(l.code)
		if m == nil {
			continue
		}
		old, had := was[m[1]]
		if !had {
			continue // a new doctest runs more, whatever it leaves out
		}
		if n, o := listed(m[2], "except"), listed(old, "except"); n > o {
			out = append(out, c.finding("test-skipped", Concern, l, fmt.Sprintf("%d of %s's doctests are left out where %d were: they no longer run", n, m[1], o)))
		} else if strings.Contains(m[2], "only:") && !strings.Contains(old, "only:") {
			out = append(out, c.finding("test-skipped", Concern, l, "only some of "+m[1]+"'s doctests run now: the others no longer do"))
		}
	}
	return out
}

// listed counts the entries of a doctest option's list (except: [f: 1,
// g: 2]); 0 when the option is not given.
func listed(opts, key string) int {
	i := strings.Index(opts, key+":")
	if i < 0 {
		return 0
	}
	rest := opts[i+len(key)+1:]
	if j := strings.IndexByte(rest, ']'); j >= 0 {
		rest = rest[:j]
	}
	return strings.Count(rest, ",") + 1
}
