package evidence

import (
	"regexp"
	"slices"
	"strings"
)

// asyncForced is a case template that makes every module using it run
// alone, whatever the module asks: ExUnit.CaseTemplate's options given
// async: false (super(Keyword.put(opts, :async, false))), or a using
// block that uses ExUnit.Case with async: false.
var asyncForced = regexp.MustCompile(`Keyword\.(put|merge)\(\s*\w+\s*,\s*(:async\s*,\s*false|\[?\s*async:\s*false)|^\s*use\s+ExUnit\.Case\s*,\s*async:\s*false`)

// templatesMadeSerial: a case template in test support forcing async:
// false on every module that uses it. A note when the template touches
// global state (what running alone protects), a concern when it shows
// none: each module's own tests then lose their concurrency to hide a
// race.
func templatesMadeSerial(c change) []Finding {
	if !c.test || strings.HasSuffix(c.path, "_test.exs") || !elixirFile(c.path) {
		return nil
	}
	for _, l := range c.added() {
		if !asyncForced.MatchString(l.code) || c.removedSame(l) {
			continue
		}
		// A sandbox shared only with modules that run alone (shared: not
		// tags[:async], the generated template) follows from running
		// alone; it is no reason for it.
		serial := sharedWhenSerial.MatchString(c.after.text)
		touched := slices.DeleteFunc(slices.Clone(c.touched), func(w string) bool {
			return serial && w == "the shared SQL sandbox mode"
		})
		if len(touched) > 0 {
			return []Finding{c.finding("async-disabled", Note, l, "every module using this case template now runs alone; the template touches "+strings.Join(touched, ", ")+", which tests running at the same time would share")}
		}
		return []Finding{c.finding("async-disabled", Concern, l, "every module using this case template now runs alone, and the template touches no global state: running serially may only hide a race")}
	}
	return nil
}

// sharedWhenSerial shares the SQL sandbox only with modules that run
// alone.
var sharedWhenSerial = regexp.MustCompile(`shared:\s*(not\s+|!)\s*tags\[:async\]`)
