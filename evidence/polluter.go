package evidence

import "fmt"

// PolluterCheck is what a verification's log shows of the pair a fix's
// answer says pollutes its test (Test, run first, then the flaky test,
// with one seed): the pair on the base, the flaky test alone there, and
// the pair on the head.
type PolluterCheck struct {
	Test        string `json:"test"`
	Shares      string `json:"shares,omitempty"` // as the answer says (untrusted text)
	BaseRuns    int    `json:"base_runs,omitempty"`
	BaseFailed  int    `json:"base_failed,omitempty"`
	AloneRuns   int    `json:"alone_runs,omitempty"`
	AloneFailed int    `json:"alone_failed,omitempty"`
	HeadRuns    int    `json:"head_runs,omitempty"`
	HeadFailed  int    `json:"head_failed,omitempty"`
	// Proven: the pair failed on the base in every run, the test alone
	// never did, and the pair never failed on the head; else Why says
	// what is missing.
	Proven bool   `json:"proven"`
	Why    string `json:"why,omitempty"`
}

// minPairRuns is the fewest runs of each of the pair's phases that prove
// it (the verification asks for 5).
const minPairRuns = 5

// CheckPolluter reads the pair's phases of a verification's log: the pair
// test then victim, every run with seed.
func CheckPolluter(m *Measured, test, victim string, seed int64, shares string) PolluterCheck {
	c := PolluterCheck{Test: test, Shares: shares}
	if m == nil {
		c.Why = "the verification left no log"
		return c
	}
	base, alone, head := m.Phase(PhasePairBase), m.Phase(PhaseAlone), m.Phase(PhasePairHead)
	c.BaseRuns, c.BaseFailed, c.AloneRuns, c.AloneFailed, c.HeadRuns, c.HeadFailed = base.Runs, base.FailedRuns, alone.Runs, alone.FailedRuns, head.Runs, head.FailedRuns
	switch {
	case m.Truncated:
		c.Why = "the log is longer than pitcrew reads: what follows the cut was not counted"
	case base.Runs < minPairRuns || alone.Runs < minPairRuns || head.Runs < minPairRuns:
		c.Why = fmt.Sprintf("the log shows %d, %d and %d runs of the pair on the base, the test alone and the pair on the head; it takes %d of each", base.Runs, alone.Runs, head.Runs, minPairRuns)
	case !allSeed(base, seed) || !allSeed(alone, seed) || !allSeed(head, seed):
		c.Why = fmt.Sprintf("not every run of the pair's phases used seed %d", seed)
	case !onlyFails(base, victim):
		c.Why = "the pair failed on the base in another test than " + victim + ": the polluter may fail on its own"
	case base.FailedRuns < base.Runs:
		c.Why = fmt.Sprintf("the pair failed %d of %d times on the base, not every time", base.FailedRuns, base.Runs)
	case alone.Runs == 0:
		c.Why = "the log shows no run of the test alone"
	case alone.FailedRuns > 0:
		c.Why = fmt.Sprintf("the test alone failed %d of %d times: it fails without the polluter", alone.FailedRuns, alone.Runs)
	case head.Runs == 0:
		c.Why = "the log shows no run of the pair on the head"
	case head.FailedRuns > 0:
		c.Why = fmt.Sprintf("the pair still failed %d of %d times on the head", head.FailedRuns, head.Runs)
	default:
		c.Proven = true
	}
	return c
}

// allSeed reports whether every run of a phase printed seed (a run kept
// past maxSeedsKept counts as it).
func allSeed(c PhaseCount, seed int64) bool {
	for _, s := range c.Seeds {
		if s != seed {
			return false
		}
	}
	return len(c.Seeds) == min(c.Runs, maxSeedsKept)
}

// onlyFails reports whether the tests a phase saw failing are the victim
// alone (by file:line).
func onlyFails(c PhaseCount, victim string) bool {
	for _, t := range c.FailingTests {
		if t != victim {
			return false
		}
	}
	return true
}
