package publish

import (
	"fmt"
	"strings"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/runs"
)

// notBacked heads a flaky fix whose answer opened a pull request when the
// run's own log contradicts the answer's counts: said instead of "fixed",
// with the differences listed below it (measuredLines).
const notBacked = "⚠️ the answer claims a fix; its log does not back it"

// verifyClaim sets the counts a run's answer claims beside its own log.
func verifyClaim(m evidence.Measured, res *prompts.Result) evidence.Verification {
	return evidence.Verify(m, evidence.Claim{Seed: res.Seed, FailuresBefore: res.FailuresBefore, FailuresAfter: res.FailuresAfter, Runs: res.Runs})
}

// fixNotBacked says a flaky fix's answer claims a fix (it names a pull
// request) that the run's own log contradicts: the log was read and
// differs from the answer. A run without a log has no comparison and is
// not said to be contradicted.
func fixNotBacked(r runs.Run) bool {
	res := r.Result
	return res != nil && res.PRURL != "" && r.Measured != nil && !verifyClaim(*r.Measured, res).Verified
}

// measuredLines set what the answer claims beside what pitcrew counted in
// the run's own log, for a run whose job keeps one: verified, or each
// difference said plainly, and whether the after-runs are enough.
func measuredLines(r runs.Run, res *prompts.Result) string {
	if r.Measured == nil {
		return "\n  - Counts not verified: the run left no evidence log (`" + evidence.RunLogName + "`)."
	}
	m := *r.Measured
	before, after := m.Phase(evidence.PhaseBefore), m.Phase(evidence.PhaseAfter)
	v := verifyClaim(m, res)
	var b strings.Builder
	fmt.Fprintf(&b, "\n  - Measured in the run's log: %d of %d runs failed before the fix", before.FailedRuns, before.Runs)
	if len(before.FailingSeeds) > 0 {
		fmt.Fprintf(&b, " (seeds %s)", seedList(before.FailingSeeds))
	}
	fmt.Fprintf(&b, ", %d of %d after", after.FailedRuns, after.Runs)
	if v.Verified {
		b.WriteString(" · ✔️ the answer's counts are verified")
	}
	for _, d := range v.Differences {
		b.WriteString("\n    - " + d)
	}
	if v.Needed > 0 {
		fmt.Fprintf(&b, "\n    - %d clean runs after the fix give 95%% confidence that the failure rate (%s before) dropped: ", v.Needed, evidence.Percent(before.FailureRate()))
		if v.Enough {
			b.WriteString("reached")
		} else {
			fmt.Fprintf(&b, "not reached (%d clean of %d)", after.Runs-after.FailedRuns, v.Needed)
		}
	}
	return b.String()
}

func seedList(seeds []int64) string {
	parts := make([]string, 0, 5)
	for i, s := range seeds {
		if i == 5 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprintf("`%d`", s))
	}
	return strings.Join(parts, ", ")
}

// WithRunLog adds to a pull request's evidence check run what the run that
// opened it measured in its own log: the counts beside the claim for a
// flaky fix, the regression test's before and after for an alert fix. A
// fix whose log contradicts its answer says so in the title, and the check
// is neutral, never a success.
func WithRunLog(out github.CheckOutput, job evidence.Job, r runs.Run) github.CheckOutput {
	var lines string
	contradicted := false
	switch {
	case job == evidence.JobAlert:
		lines = regressionLine(r)
		contradicted = r.Measured != nil && evidence.VerifyRegression(*r.Measured) != ""
	case job == evidence.JobFlaky && r.Result != nil:
		lines = measuredLines(r, r.Result)
		contradicted = fixNotBacked(r)
	default:
		return out
	}
	if contradicted {
		out.Title = notBacked + " · " + out.Title
		out.Conclusion = "neutral"
		lines = "\n" + notBacked + ":" + lines
	}
	out.Summary = Clip(out.Summary+"\n\n### The run's own log\n"+lines+"\n", maxCheckSummary)
	return out
}
