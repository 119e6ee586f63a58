package evidence

import (
	"regexp"
	"strings"
)

var (
	// anyError is a rescue or catch clause that takes any error: rescue
	// e ->, rescue _ ->, catch _, _ ->, catch :exit, _ ->.
	anyError = regexp.MustCompile(`^\s*(?:rescue\s+|catch\s+)?(?:_\w*|[a-z]\w*|:exit,\s*_\w*|:throw,\s*_\w*|_\w*,\s*_\w*|[a-z]\w*,\s*[a-z_]\w*)\s*->`)
	// stillFails is what a clause does that still reports the failure.
	stillFails = regexp.MustCompile(`\b(raise|reraise|throw|exit|fail\w*)\b|\{:error\b|\B:error\b|\{:stop\b|Message\.failed`)
)

// errorsSwallowed: in the code under test, a rescue or catch added that
// takes any error and goes on as if the work succeeded (a log line, the
// input returned): the failure the flaky test saw no longer reaches it.
func errorsSwallowed(c change) []Finding {
	if c.test || !strings.HasSuffix(c.path, ".ex") || c.removedMentions("rescue") || c.removedMentions("catch") {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		for i, l := range b.added {
			if !anyError.MatchString(l.code) || !c.rescuing(b.added[:i+1]) || c.removedSame(l) {
				continue
			}
			if clauseDoes(stillFails, l, b.added[i+1:]) {
				continue
			}
			out = append(out, c.finding("error-swallowed", Concern, l, "an error is now rescued and the code goes on as if it succeeded: the failure the test saw is hidden, not fixed"))
		}
	}
	return out
}
