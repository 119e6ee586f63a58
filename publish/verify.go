package publish

import (
	"fmt"
	"strings"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/runs"
)

// verifyWords sums an independent verification up: "red on base with
// seed 4242, green on head, 0 of 149 after"; what it is waiting for, or
// why there is none. Notes and problems are pitcrew's own words (a
// sandbox's reason in them was made safe when the run stored it).
func verifyWords(v *runs.Verify) string {
	switch {
	case v.Note != "" && (v.Result == nil || v.Result.AfterRuns == 0):
		return Clip(v.Note, 400)
	case v.Result == nil:
		return "running"
	}
	r := v.Result
	base := fmt.Sprintf("seed %d not run on base", r.Seed)
	switch {
	case r.RedOnBase:
		base = fmt.Sprintf("red on base with seed %d", r.Seed)
	case r.BaseRan:
		base = fmt.Sprintf("green on base with seed %d", r.Seed)
	}
	head := "not run on head"
	switch {
	case r.GreenOnHead:
		head = "green on head"
	case r.HeadRan:
		head = "red on head"
	}
	return fmt.Sprintf("%s, %s, %d of %d after", base, head, r.AfterFailed, r.AfterRuns)
}

// verifyLine is the verification under a followed pull request's line in
// a status comment, with what it found wrong; "" before one was decided.
func verifyLine(p *runs.Pull) string {
	v := p.Verify
	if v == nil || v.Head != p.Checked || (v.RunID == "" && v.Note == "" && v.CI == nil) { // none decided, or turned off
		return ""
	}
	var b strings.Builder
	if v.InCI {
		b.WriteString("\n    - " + ciWords(v))
		if v.Result != nil {
			for _, pr := range v.Result.Problems {
				b.WriteString("\n      - " + pr)
			}
		}
		return b.String()
	}
	b.WriteString("\n    - independent verification: " + verifyWords(v))
	if v.Result != nil {
		switch v.Result.Verdict {
		case evidence.VerdictClean:
			b.WriteString(" · ✔️ agrees with the fix")
		case evidence.VerdictConcern:
			b.WriteString(" · ⚠️ concern: it disagrees with the fix")
		}
		for _, pr := range v.Result.Problems {
			b.WriteString("\n      - " + pr)
		}
	}
	return b.String()
}

// VerifiedEvidence adds an ended independent verification to a head's
// evidence check run (RenderEvidence). A verification that disagrees with
// the fix is a concern: the check is then neutral, never a success. The
// annotations were posted with the check run and are not repeated.
func VerifiedEvidence(out github.CheckOutput, v *runs.Verify) github.CheckOutput {
	out.Annotations = nil
	if v == nil {
		return out
	}
	if v.InCI {
		section, title, conclusion := ciEvidence(v)
		out.Title += title
		if conclusion != "" {
			out.Conclusion = conclusion
		}
		out.Summary = Clip(out.Summary+section, maxCheckSummary)
		return out
	}
	var b strings.Builder
	b.WriteString("\n\n### Independent verification\n\n")
	b.WriteString("A separate session, which changed no code, ran the test with the seed that failed on this pull request's base and on this head, then again and again on the head: " + verifyWords(v) + ".\n")
	if v.Result != nil {
		for _, pr := range v.Result.Problems {
			b.WriteString("- " + pr + "\n")
		}
		if c := v.Result.Polluter; c != nil {
			b.WriteString("- The pair the fix names, " + Code(c.Test, 300) + " then the test: " + polluterWords(c) + "\n")
		}
		switch v.Result.Verdict {
		case evidence.VerdictClean:
			out.Title += " · verified"
		case evidence.VerdictConcern:
			out.Title += " · the verification disagrees"
			out.Conclusion = "neutral"
		default:
			out.Title += " · verification incomplete"
		}
	}
	out.Summary = Clip(out.Summary+b.String(), maxCheckSummary)
	return out
}
