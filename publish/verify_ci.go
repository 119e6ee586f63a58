package publish

import (
	"fmt"
	"strings"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/runs"
)

// ciWords sums a verification in the team's CI up: "verified in CI: base
// 6 of 50 failed (seed 4242 failed), head 0 of 50"; "not verified: ..."
// with why; or where its two workflow runs stand.
func ciWords(v *runs.Verify) string {
	ci, r := v.CI, v.Result
	switch {
	case v.Note != "":
		return Clip(v.Note, 400)
	case r == nil:
		return fmt.Sprintf("verifying in CI (base: %s, head: %s)", sideState(ci.Base), sideState(ci.Head))
	}
	counts := fmt.Sprintf("base %d of %d failed%s, head %d of %d", r.BaseFailed, r.BaseRuns, seedWords(r), r.AfterFailed, r.AfterRuns)
	switch r.Verdict {
	case evidence.VerdictClean:
		return fmt.Sprintf("verified in CI: %s (%d needed for 95%% confidence at the base's failure rate)", counts, r.Needed)
	case evidence.VerdictConcern:
		return "not verified in CI: the head failed: " + counts
	}
	why := "incomplete"
	if len(r.Problems) > 0 {
		why = r.Problems[0]
	}
	return fmt.Sprintf("not verified in CI: %s (%s)", why, counts)
}

func seedWords(r *evidence.FixCheck) string {
	switch {
	case r.RedOnBase:
		return fmt.Sprintf(" (seed %d failed)", r.Seed)
	case r.BaseRan:
		return fmt.Sprintf(" (seed %d passed)", r.Seed)
	}
	return ""
}

// sideState is where one side's workflow run stands, linked once GitHub
// named it.
func sideState(s runs.CISide) string {
	state := "dispatched"
	if s.Status != "" {
		state = strings.ReplaceAll(s.Status, "_", " ")
	}
	if u := SafeURL(s.URL); u != "" {
		return "[" + state + "](" + u + ")"
	}
	return state
}

// ciEvidence is the section a verification in CI adds to the evidence
// check run, and the title's suffix and conclusion it makes: green only
// when both sides were counted and agree with the fix; neutral otherwise.
func ciEvidence(v *runs.Verify) (section, title, conclusion string) {
	var b strings.Builder
	b.WriteString("\n\n### Verified in your CI\n\n")
	b.WriteString("pitcrew's workflow (`.github/workflows/pitcrew-verify.yml`) ran the test on this pull request's base, where it should fail, and on this head, where it should not; pitcrew counted the runs in the workflow runs' logs itself: " + ciWords(v) + ".\n")
	if ci := v.CI; ci != nil {
		b.WriteString("\n| side | commit | runs asked | runs counted | failed | workflow run |\n|---|---|---|---|---|---|\n")
		for _, side := range []struct {
			name string
			s    runs.CISide
		}{{"base", ci.Base}, {"head", ci.Head}} {
			ran, failed := "–", "–"
			if c := side.s.Count; c != nil {
				ran, failed = fmt.Sprint(c.Runs), fmt.Sprint(c.FailedRuns)
			}
			fmt.Fprintf(&b, "| %s | `%s` | %d | %s | %s | %s |\n", side.name, short(side.s.SHA), side.s.Runs, ran, failed, sideState(side.s))
		}
	}
	if r := v.Result; r != nil {
		for _, p := range r.Problems {
			b.WriteString("- " + p + "\n")
		}
		if r.Verdict == evidence.VerdictClean {
			return b.String(), " · verified in CI", ""
		}
	}
	if v.Result == nil && v.Note == "" {
		return b.String(), " · verifying in CI", "neutral"
	}
	return b.String(), " · not verified in CI", "neutral"
}

func short(sha string) string { return sha[:min(len(sha), 12)] }
