package evidence

import (
	"fmt"
	"slices"
)

// Claim is what an agent's answer says it measured.
type Claim struct {
	Seed                          *int64
	FailuresBefore, FailuresAfter *int
	Runs                          *int // the verification runs after the fix
}

// Verification sets a claim beside what the run log shows.
type Verification struct {
	// Verified: the log shows the test failing before and passing every
	// run after, and backs every count the answer gives.
	Verified    bool     `json:"verified"`
	Differences []string `json:"differences,omitempty"` // where claim and log differ, plainly
	// Needed is how many clean runs after the fix give 95% confidence at
	// the measured before-rate (RunsNeeded); Enough says the log has them.
	Needed int  `json:"needed,omitempty"`
	Enough bool `json:"enough"`
}

// Verify compares a claim with a run log.
func Verify(m Measured, c Claim) Verification {
	before, after := m.Phase(PhaseBefore), m.Phase(PhaseAfter)
	var v Verification
	differ := func(format string, args ...any) { v.Differences = append(v.Differences, fmt.Sprintf(format, args...)) }
	if c.Runs != nil && *c.Runs != after.Runs {
		differ("the log shows %d %s after the fix; the answer says %d", after.Runs, runsWord(after.Runs), *c.Runs)
	}
	if c.FailuresBefore != nil && *c.FailuresBefore != before.FailedRuns {
		differ("the log shows %d failed %s before the fix; the answer says %d", before.FailedRuns, runsWord(before.FailedRuns), *c.FailuresBefore)
	}
	if c.FailuresAfter != nil && *c.FailuresAfter != after.FailedRuns {
		differ("the log shows %d failed %s after the fix; the answer says %d", after.FailedRuns, runsWord(after.FailedRuns), *c.FailuresAfter)
	}
	if c.Seed != nil {
		if !slices.Contains(before.FailingSeeds, *c.Seed) {
			differ("seed %d failed in none of the log's runs before the fix", *c.Seed)
		}
		if !slices.Contains(after.Seeds, *c.Seed) {
			differ("no run after the fix used seed %d", *c.Seed)
		}
	}
	switch {
	case before.FailedRuns == 0:
		differ("the log shows no failing run before the fix")
	case after.Runs == 0:
		differ("the log shows no run after the fix")
	case after.FailedRuns > 0:
		differ("%d of %d runs after the fix failed", after.FailedRuns, after.Runs)
	}
	if m.Phase(PhaseFile).Runs == 0 {
		differ("the test's file was not run after the fix")
	}
	if m.Phase(PhaseSuite).Runs == 0 {
		differ("the suite was not run after the fix")
	}
	if m.Truncated {
		differ("the log is longer than pitcrew reads: it was counted up to there, and what follows was not read")
	}
	v.Needed = RunsNeeded(before.FailureRate())
	v.Enough = before.FailedRuns > 0 && after.FailedRuns == 0 && after.Runs >= v.Needed
	v.Verified = len(v.Differences) == 0
	return v
}

func runsWord(n int) string {
	if n == 1 {
		return "run"
	}
	return "runs"
}

// VerifyRegression reads an alert fix's log: its new test must fail on the
// unfixed code and pass on the fix. "" when the log shows that; otherwise
// what it shows instead.
func VerifyRegression(m Measured) string {
	before, after := m.Phase(PhaseBefore), m.Phase(PhaseAfter)
	switch {
	case before.Runs == 0:
		return "the log shows no run of the new test on the unfixed code"
	case before.FailedRuns == 0:
		return "the new test passed on the unfixed code, so it does not show the production failure"
	case after.Runs == 0:
		return "the log shows no run of the new test on the fix"
	case after.FailedRuns > 0:
		return fmt.Sprintf("the new test failed in %d of %d runs on the fix", after.FailedRuns, after.Runs)
	}
	return ""
}
