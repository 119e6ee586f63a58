package evidence

import (
	"fmt"
	"slices"
)

// FixCheck is what an independent verification's run log shows of a fix:
// the test with the failing seed on the pull request's base (phase
// before: expected red), then on its head (phase after: expected green),
// then the after-loop on the head.
type FixCheck struct {
	Seed int64 `json:"seed"`
	// BaseRan and HeadRan say a run with the seed is in the log on the
	// base and on the head; RedOnBase that one on the base failed,
	// GreenOnHead that those on the head all passed.
	BaseRan     bool `json:"base_ran"`
	RedOnBase   bool `json:"red_on_base"`
	HeadRan     bool `json:"head_ran"`
	GreenOnHead bool `json:"green_on_head"`
	// AfterRuns and AfterFailed count every run on the head; Needed is how
	// many the verification was asked for.
	AfterRuns   int `json:"after_runs"`
	AfterFailed int `json:"after_failed"`
	Needed      int `json:"needed"`
	// Polluter is what the log shows of the polluting pair the fix's
	// answer named; nil when it named none.
	Polluter *PolluterCheck `json:"polluter,omitempty"`
	// InCI says the runs were the team's own CI's (CheckCI), BaseRuns and
	// BaseFailed what it counted on the base.
	InCI       bool `json:"in_ci,omitempty"`
	BaseRuns   int  `json:"base_runs,omitempty"`
	BaseFailed int  `json:"base_failed,omitempty"`
	// Verdict is clean when the log agrees with the fix, concern when it
	// disagrees (the seed passed on the base, or a run on the head
	// failed), note when it is incomplete; Problems say why, plainly.
	Verdict  Verdict  `json:"verdict"`
	Problems []string `json:"problems,omitempty"`
}

// CheckFix reads an independent verification's run log (nil: the session
// left none) for a fix that should turn seed from red to green, over
// needed runs after.
func CheckFix(m *Measured, seed int64, needed int) FixCheck {
	c := FixCheck{Seed: seed, Needed: needed, Verdict: VerdictClean}
	concern := func(format string, args ...any) {
		c.Problems, c.Verdict = append(c.Problems, fmt.Sprintf(format, args...)), VerdictConcern
	}
	note := func(format string, args ...any) {
		c.Problems = append(c.Problems, fmt.Sprintf(format, args...))
		if c.Verdict == VerdictClean {
			c.Verdict = VerdictNote
		}
	}
	if m == nil {
		note("the verification left no evidence log (`%s`)", RunLogName)
		return c
	}
	base, head := m.Phase(PhaseBefore), m.Phase(PhaseAfter)
	c.BaseRan, c.RedOnBase = slices.Contains(base.Seeds, seed), slices.Contains(base.FailingSeeds, seed)
	c.HeadRan = slices.Contains(head.Seeds, seed)
	c.GreenOnHead = c.HeadRan && !slices.Contains(head.FailingSeeds, seed)
	c.AfterRuns, c.AfterFailed = head.Runs, head.FailedRuns
	switch {
	case !c.BaseRan:
		note("the log shows no run on the base with seed %d", seed)
	case !c.RedOnBase:
		n := 0
		for _, s := range base.Seeds {
			if s == seed {
				n++
			}
		}
		concern("seed %d passed on the base (%d %s): the failure the fix is for did not reproduce there", seed, n, runsWord(n))
	}
	switch {
	case !c.HeadRan:
		note("the log shows no run on the head with seed %d", seed)
	case !c.GreenOnHead:
		concern("seed %d still fails on the head", seed)
	}
	switch {
	case c.AfterFailed > 0:
		concern("%d of %d runs on the head failed", c.AfterFailed, c.AfterRuns)
	case c.AfterRuns < needed:
		note("%d runs on the head of the %d asked for", c.AfterRuns, needed)
	}
	if m.Truncated {
		note("the log is longer than pitcrew reads: it was counted up to there, and what follows was not read")
	}
	return c
}

// NeededRuns is how many clean runs after a fix to ask for: enough for 95%
// confidence at the failure rate the fix run measured before (RunsNeeded),
// at least floor and at most 500.
func NeededRuns(fix *Measured, floor int) int {
	n := 0
	if fix != nil {
		n = RunsNeeded(fix.Phase(PhaseBefore).FailureRate())
	}
	return min(max(n, floor), 500)
}

// FailingSeed is the seed a verification should try: the claimed one when
// the fix run's log shows it failing (or there is no log), else the first
// the log shows failing. ok is false when neither names one.
func FailingSeed(fix *Measured, claimed *int64) (seed int64, ok bool) {
	var failing []int64
	if fix != nil {
		failing = fix.Phase(PhaseBefore).FailingSeeds
	}
	switch {
	case claimed != nil && (fix == nil || slices.Contains(failing, *claimed)):
		return *claimed, true
	case len(failing) > 0:
		return failing[0], true
	case claimed != nil:
		return *claimed, true
	}
	return 0, false
}
