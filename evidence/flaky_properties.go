package evidence

import (
	"fmt"
	"regexp"
)

// propertyBound is an option that bounds how much a property-based test
// tries: StreamData's max_runs and generator sizes, PropCheck's numtests.
var propertyBound = hinted{regexp.MustCompile(`\b(max_runs|numtests|max_length|max_size|initial_size):\s*([0-9][0-9_]*)\b`), []string{"max_runs", "numtests", "max_length", "max_size", "initial_size"}}

// propertiesShrunk: in a test or the tests' configuration, a property
// checked on fewer runs or smaller inputs than before: the inputs that
// found the failure are rarer, not handled.
func propertiesShrunk(c change) []Finding {
	if !c.test && !testConfig(c.path) {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		was := map[string]int64{}
		for _, l := range b.removed {
			for _, m := range propertyBound.FindAllStringSubmatch(l.code, -1) {
				was[m[1]], _ = largestLiteral(m[2])
			}
		}
		for _, l := range b.added {
			for _, m := range propertyBound.FindAllStringSubmatch(l.code, -1) {
				now, _ := largestLiteral(m[2])
				if old, had := was[m[1]]; had && now < old {
					out = append(out, c.finding("property-weakened", Concern, l, fmt.Sprintf("the property is checked with %s: %d where it was %d: the inputs that made it fail are rarer, not handled", m[1], now, old)))
				}
			}
		}
	}
	return out
}
