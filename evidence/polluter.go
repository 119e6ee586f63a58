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

// CheckPolluter reads the pair's phases of a verification's log.
func CheckPolluter(m *Measured, test, shares string) PolluterCheck {
	c := PolluterCheck{Test: test, Shares: shares}
	if m == nil {
		c.Why = "the verification left no log"
		return c
	}
	base, alone, head := m.Phase(PhasePairBase), m.Phase(PhaseAlone), m.Phase(PhasePairHead)
	c.BaseRuns, c.BaseFailed, c.AloneRuns, c.AloneFailed, c.HeadRuns, c.HeadFailed = base.Runs, base.FailedRuns, alone.Runs, alone.FailedRuns, head.Runs, head.FailedRuns
	switch {
	case base.Runs == 0:
		c.Why = "the log shows no run of the pair on the base"
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
