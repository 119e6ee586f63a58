package evidence

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// The checks pitcrew makes of a profiling run's measurements: that each
// time agrees with the plan quoted for it, that a fix shown faster is
// faster by its own plan, and what a reviewer would ask of a fix that was
// not measured (the rows of a rewrite, the write cost of an index).

// QueryCheck is what pitcrew found of one slow query's numbers.
type QueryCheck struct {
	// Problems are disagreements: a time its plan does not show, a fix
	// its own plan does not show faster, a rewrite that returns other rows.
	Problems []string
	// NotChecked is what the run did not measure that a reviewer asks.
	NotChecked []string
}

// Checked reports whether the query's numbers were all found to agree.
func (c QueryCheck) Checked() bool { return len(c.Problems) == 0 }

// CheckSlowQuery checks one query's numbers against its plans.
func CheckSlowQuery(q SlowQuery) QueryCheck {
	var c QueryCheck
	c.measure("before the migration", q.Before)
	after := c.measure("after the migration", q.After)
	if f := q.Fix; f != nil {
		fixed := c.measure("with the fix", f.Measure)
		if fixed >= 0 && after >= 0 && f.Measure.MS < q.After.MS && fixed >= after {
			c.Problems = append(c.Problems, fmt.Sprintf("the fix is shown faster (%s → %s) but its plan's Execution Time is %s, against %s without it", FormatMS(q.After.MS), FormatMS(f.Measure.MS), FormatMS(fixed), FormatMS(after)))
		}
		switch f.Kind {
		case "rewrite", "join", "preload":
			switch {
			case f.SameRows == nil:
				c.NotChecked = append(c.NotChecked, "same rows: not checked")
			case !*f.SameRows:
				c.Problems = append(c.Problems, "the rewrite returns other rows than the query it replaces on the seeded data")
			}
		case "index":
			if f.WriteCost == nil {
				c.NotChecked = append(c.NotChecked, "write cost: not checked")
			}
		}
	}
	return c
}

// measure checks a time against its plan and returns the plan's Execution
// Time (-1 when there is none to read).
func (c *QueryCheck) measure(what string, m Measure) float64 {
	if m.Plan == nil || *m.Plan == "" {
		c.Problems = append(c.Problems, "no plan quoted for the time "+what)
		return -1
	}
	exec, ok := ExecutionTime(*m.Plan)
	switch {
	case !ok:
		c.Problems = append(c.Problems, "the plan quoted for the time "+what+" shows no Execution Time (EXPLAIN without ANALYZE?)")
		return -1
	case math.Abs(m.MS-exec) > max(0.1*exec, 0.5):
		c.Problems = append(c.Problems, fmt.Sprintf("the time %s (%s) disagrees with its plan's Execution Time (%s)", what, FormatMS(m.MS), FormatMS(exec)))
	}
	return exec
}

var executionTime = regexp.MustCompile(`(?i)"?(?:Execution Time|Total runtime)"?\s*:\s*([0-9]+(?:\.[0-9]+)?)`)

// ExecutionTime reads the Execution Time of an EXPLAIN ANALYZE output, in
// text or JSON format (PostgreSQL before 10: Total runtime).
func ExecutionTime(plan string) (float64, bool) {
	m := executionTime.FindStringSubmatch(plan)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	return v, err == nil
}

// Slower reports whether a page is slower after the migration: by at
// least a quarter and 5 ms.
func (p PageTime) Slower() bool { return p.AfterMS >= 1.25*p.BeforeMS && p.AfterMS-p.BeforeMS >= 5 }

var ectoFile = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_./-]*\.exs?$`)

// ValidEctoFile reports whether an Ecto site's file is a path pitcrew
// links to and reads: letters, digits, _ . / - only, no "..", .ex or .exs.
func ValidEctoFile(p string) bool { return ectoFile.MatchString(p) && !strings.Contains(p, "..") }

// NPlusOne reports whether a query runs once per row of its page rather
// than once per page.
func (q SlowQuery) NPlusOne() bool { return q.CallsPerPage >= 10 }

// FormatMS prints a time for a reader: 28.7 ms, 412 ms.
func FormatMS(ms float64) string {
	if ms >= 100 {
		return strconv.FormatFloat(math.Round(ms), 'f', -1, 64) + " ms"
	}
	return strconv.FormatFloat(math.Round(ms*10)/10, 'f', -1, 64) + " ms"
}
