package evidence

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The defaults of wait and retry helpers: raised, every caller waits or
// tries longer.

// amount writes a default's value: a count of tries as a number, a time
// in its unit.
func amount(key string, v int64) string {
	if countWords.MatchString(key) {
		return strconv.FormatInt(v, 10)
	}
	return ms(v)
}

var countWords = regexp.MustCompile(`(?i)attempt|tries|retries|times|count|(^|_)(max|n)($|_)`)

var waitDef = regexp.MustCompile(`^\s*defp?\s+(\w+[?!]?)\s*\(`)

// waitDefaults: a wait helper's default time raised (def wait_for(f,
// timeout \\ 5_000) made 30_000), or a polling helper's default number
// of tries: every caller waits longer.
func waitDefaults(c change) []Finding {
	if !c.test {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		before := map[string]int64{}
		for _, l := range b.removed {
			for k, v := range c.waitDefaultsOf(l.code) {
				before[k] = v
			}
		}
		for _, l := range b.added {
			for k, v := range c.waitDefaultsOf(l.code) {
				if old, had := before[k]; had && v > old {
					out = append(out, c.finding("wait-default-raised", Concern, l, fmt.Sprintf("the default of %s went from %s to %s: every wait through it is longer, not fixed", k, amount(k, old), amount(k, v))))
				}
			}
		}
	}
	return out
}

// keywordDefault is an option read with a default: Keyword.get(opts,
// :attempts, 3).
var keywordDefault = hinted{regexp.MustCompile(`\bKeyword\.get\(\s*\w+\s*,\s*:(\w+)\s*,\s*([^()]+(?:\([^()]*\))?)\)`), []string{"Keyword.get("}}

// waitDefaultsOf reads a def's defaults whose names say time or tries,
// and the defaults of such options read in a helper's body.
func (c change) waitDefaultsOf(line string) map[string]int64 {
	out := map[string]int64{}
	for _, d := range keywordDefault.FindAllStringSubmatch(line, -1) {
		if timerKey.MatchString(d[1]) || waitWords.MatchString(d[1]) || countWords.MatchString(d[1]) {
			if v, ok := c.millis(d[2]); ok {
				out["option :"+d[1]] = v
			}
		}
	}
	m := waitDef.FindStringSubmatch(line)
	if m == nil {
		return out
	}
	poller := pollDef.MatchString(line)
	for _, d := range argDefault.FindAllStringSubmatch(line, -1) {
		if !poller && !timerKey.MatchString(d[1]) && !waitWords.MatchString(d[1]) && !strings.Contains(d[1], "sec") {
			continue
		}
		if v, ok := c.millis(d[2]); ok {
			out[m[1]+"'s "+d[1]] = v
		}
	}
	return out
}
