package evidence

import (
	"fmt"
	"slices"
)

// CIAsked is what a verification in CI asked of each side: the runs, and
// the failures after which the base stops (0: it never stops early).
type CIAsked struct{ Base, Head, BaseStopAfter int }

// minCIRuns is the fewest clean runs on the head a verification in CI
// takes: 5 in a row show, with 95% confidence, a failure rate below 45%.
const minCIRuns = 5

// CheckCI reads what the team's CI counted of a fix, both sides run by
// pitcrew's workflow and counted by pitcrew from its logs: the base's runs
// (the test should fail) and the head's (it should never fail). It agrees
// with the fix (clean) only when the base failed at least once, and the
// head passed every run asked of it and at least as many as the base's
// failure rate needs for 95% confidence (RunsNeeded; a base that stopped
// early is read as (r-1)/(n-1), which its early stop does not inflate); a
// head that failed is a concern; anything else is not verified (a note),
// with why.
func CheckCI(base, head PhaseCount, seed int64, asked CIAsked, truncated bool) FixCheck {
	c := FixCheck{Seed: seed, InCI: true, Verdict: VerdictClean,
		BaseRuns: base.Runs, BaseFailed: base.FailedRuns, AfterRuns: head.Runs, AfterFailed: head.FailedRuns,
		BaseRan: slices.Contains(base.Seeds, seed), RedOnBase: slices.Contains(base.FailingSeeds, seed),
		HeadRan: slices.Contains(head.Seeds, seed), Needed: max(RunsNeeded(baseRate(base, asked)), minCIRuns)}
	c.GreenOnHead = c.HeadRan && !slices.Contains(head.FailingSeeds, seed)
	note := func(format string, args ...any) {
		c.Problems = append(c.Problems, fmt.Sprintf(format, args...))
		if c.Verdict == VerdictClean {
			c.Verdict = VerdictNote
		}
	}
	stopped := asked.BaseStopAfter > 0 && base.FailedRuns >= asked.BaseStopAfter
	switch {
	case base.Runs == 0:
		note("the base's workflow run shows no finished mix test run")
	case base.FailedRuns == 0:
		note("the base never failed in %d %s: the flake is not reproduced in CI", base.Runs, runsWord(base.Runs))
	case base.Runs < asked.Base && !stopped:
		note("the base finished %d of the %d runs asked and did not stop on its failures: a run was cut short", base.Runs, asked.Base)
	}
	switch {
	case head.FailedRuns > 0:
		c.Problems = append(c.Problems, fmt.Sprintf("%d of %d runs on the head failed", head.FailedRuns, head.Runs))
		c.Verdict = VerdictConcern
	case head.Runs == 0:
		note("the head's workflow run shows no finished mix test run")
	case head.Runs < asked.Head:
		note("the head finished %d of the %d runs asked: a run was cut short or never printed its result", head.Runs, asked.Head)
	case base.FailedRuns > 0 && head.Runs < c.Needed:
		note("%d %s on the head; the base's failure rate in CI (%s) needs %d for 95%% confidence", head.Runs, runsWord(head.Runs), Percent(base.FailureRate()), c.Needed)
	}
	if truncated {
		note("a log is longer than pitcrew reads, or a run has more jobs than it reads: it was counted up to there, and what follows was not read")
	}
	return c
}

// baseRate is the base's failure rate: (r-1)/(n-1) when it stopped at its
// r-th failure, which an early stop would otherwise inflate.
func baseRate(base PhaseCount, asked CIAsked) float64 {
	if asked.BaseStopAfter > 0 && base.FailedRuns >= asked.BaseStopAfter && base.Runs > 1 {
		return float64(base.FailedRuns-1) / float64(base.Runs-1)
	}
	return base.FailureRate()
}
