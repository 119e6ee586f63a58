package evidence

import (
	"fmt"
	"slices"
)

// CheckCI reads what the team's CI counted of a fix, both sides run by
// pitcrew's workflow and counted by pitcrew from its logs: the base's runs
// (the test should fail) and the head's (it should never fail). It agrees
// with the fix (clean) only when the base failed at least once and the
// head passed as many runs as the base's failure rate needs for 95%
// confidence (RunsNeeded); a head that failed is a concern; anything else
// is not verified (a note), with why.
func CheckCI(base, head PhaseCount, seed int64, truncated bool) FixCheck {
	c := FixCheck{Seed: seed, InCI: true, Verdict: VerdictClean,
		BaseRuns: base.Runs, BaseFailed: base.FailedRuns, AfterRuns: head.Runs, AfterFailed: head.FailedRuns,
		BaseRan: slices.Contains(base.Seeds, seed), RedOnBase: slices.Contains(base.FailingSeeds, seed),
		HeadRan: slices.Contains(head.Seeds, seed), Needed: RunsNeeded(base.FailureRate())}
	c.GreenOnHead = c.HeadRan && !slices.Contains(head.FailingSeeds, seed)
	note := func(format string, args ...any) {
		c.Problems = append(c.Problems, fmt.Sprintf(format, args...))
		if c.Verdict == VerdictClean {
			c.Verdict = VerdictNote
		}
	}
	switch {
	case base.Runs == 0:
		note("the base's workflow run shows no finished mix test run")
	case base.FailedRuns == 0:
		note("the base never failed in %d %s: the flake is not reproduced in CI", base.Runs, runsWord(base.Runs))
	}
	switch {
	case head.FailedRuns > 0:
		c.Problems = append(c.Problems, fmt.Sprintf("%d of %d runs on the head failed", head.FailedRuns, head.Runs))
		c.Verdict = VerdictConcern
	case head.Runs == 0:
		note("the head's workflow run shows no finished mix test run")
	case base.FailedRuns > 0 && head.Runs < c.Needed:
		note("%d %s on the head; the base's failure rate in CI (%s) needs %d for 95%% confidence", head.Runs, runsWord(head.Runs), Percent(base.FailureRate()), c.Needed)
	}
	if truncated {
		note("a log is longer than pitcrew reads: it was counted up to there, and what follows was not read")
	}
	return c
}
