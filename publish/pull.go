package publish

import (
	"fmt"
	"strings"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/runs"
)

// EvidenceCheckName is the check run pitcrew puts on the head of an
// agent's pull request.
const EvidenceCheckName = "pitcrew / evidence"

// pullLine sums up the pull request a run opened, as pitcrew follows it:
// "PR #77 · CI passed · evidence: 1 concern · approved · merged 2 Dec",
// then the first findings of its diff. "" when the run follows none.
func pullLine(r runs.Run) string {
	p := r.PR
	if p == nil {
		return ""
	}
	parts := []string{fmt.Sprintf("[PR #%d](%s)", p.Number, p.URL)}
	switch {
	case p.State == runs.PullGone:
		return "\n  - " + parts[0] + " no longer exists."
	case p.Unread != "" && p.Checked == "":
		return "\n  - " + parts[0] + " not read yet: " + Text(p.Unread, 200) + "."
	case p.State == runs.PullNotOurs:
		where := "a repository that no longer exists"
		if p.HeadRepo != "" {
			where = "another repository, " + Code(p.HeadRepo, 100)
		}
		return "\n  - " + parts[0] + " is not the agent's pull request: its head is in " + where +
			". pitcrew does not check it, verify it or pass its comments to the run."
	}
	switch ci := p.CI(); {
	case p.SuitesUnread != "":
		parts = append(parts, "CI not read ("+Text(p.SuitesUnread, 100)+")")
	case ci == "":
		parts = append(parts, "CI not reported yet")
	default:
		parts = append(parts, "CI "+ci)
	}
	parts = append(parts, "evidence: "+evidenceWords(p.Verdict, p.NotChecked, p.Concerns, p.Notes))
	if rv := p.Review(); rv != "" {
		parts = append(parts, rv)
	}
	switch p.State {
	case runs.PullMerged:
		parts = append(parts, "merged "+p.MergedAt.UTC().Format("2 Jan"))
	case runs.PullClosed:
		parts = append(parts, "closed without merging")
	}
	if p.TakenOver {
		parts = append(parts, "a later run named it too and follows it from here on")
	}
	var b strings.Builder
	b.WriteString("\n  - " + strings.Join(parts, " · "))
	b.WriteString(verifyLine(p))
	b.WriteString(followUpLine(r))
	for _, f := range p.Findings {
		b.WriteString("\n    - " + findingLine(f))
	}
	if more := p.Concerns + p.Notes - len(p.Findings); more > 0 {
		fmt.Fprintf(&b, "\n    - and %d more on the %s check run", more, Code(EvidenceCheckName, 40))
	}
	return b.String()
}

// followUpLine says where a run is in its follow-ups: "💬 iteration 2 of
// 3: the review by `alice`"; "" before its first.
func followUpLine(r runs.Run) string {
	if len(r.FollowUps) == 0 {
		return ""
	}
	f := r.FollowUps[len(r.FollowUps)-1]
	line := fmt.Sprintf("\n  - 💬 iteration %d of %d: %s", f.N, f.Max, f.Reason) // Reason is built Markdown-safe
	switch {
	case r.State == runs.Started:
		line += " · the agent is working on it"
	case f.Error != "":
		line += " · the session failed on it: " + Text(f.Error, 300) + "; the answer above is the one before it"
	}
	return line
}

func evidenceWords(v evidence.Verdict, notChecked string, concerns, notes int) string {
	var w []string
	if concerns > 0 {
		w = append(w, fmt.Sprintf("%d %s", concerns, Plural(concerns, "concern", "concerns")))
	}
	if notes > 0 {
		w = append(w, fmt.Sprintf("%d %s", notes, Plural(notes, "note", "notes")))
	}
	switch {
	case notChecked != "" && len(w) > 0:
		// What was read, then what was not: a partial read is never clean.
		return strings.Join(w, ", ") + "; " + Text(notChecked, 200)
	case notChecked != "":
		return Text(notChecked, 200)
	case v == "":
		return "not read yet"
	case v == evidence.VerdictClean:
		return "clean"
	}
	return strings.Join(w, ", ")
}

// findingLine is one finding for a comment: where, what, why.
func findingLine(f evidence.Finding) string {
	return fmt.Sprintf("%s %s %s: %s", Code(fmt.Sprintf("%s:%d", f.File, f.Line), 200), f.Severity, Code(f.Text, 200), Text(f.Why, 300))
}

// RenderEvidence writes the "pitcrew / evidence" check run of a pull
// request's head: title, summary, an annotation on each finding's line,
// and its conclusion: success when clean, neutral otherwise (it informs a
// reviewer; it never blocks a merge).
func RenderEvidence(job evidence.Job, pr int, r evidence.Review) github.CheckOutput {
	concerns, others := 0, 0
	for _, f := range r.Findings {
		if f.Severity == evidence.Concern {
			concerns++
		} else {
			others++
		}
	}
	out := github.CheckOutput{Name: EvidenceCheckName, ExternalID: fmt.Sprintf("evidence:%d", pr), Conclusion: "neutral",
		Title: "Evidence: " + evidenceWords(r.Verdict, r.NotChecked, concerns, others)}
	var b strings.Builder
	what := map[evidence.Job]string{evidence.JobFlaky: "a flaky-test fix: no longer waits, retries, skips or tests less",
		evidence.JobAlert: "an alert fix: no loosened authorization, ownership or billing check, no changed default, no deleted test"}[job]
	fmt.Fprintf(&b, "pitcrew read this pull request's diff as a reviewer of %s. This check informs; it never blocks a merge.\n\n", what)
	switch {
	case r.NotChecked != "":
		b.WriteString(Text(r.NotChecked, 300) + ".\n")
		if len(r.Findings) > 0 {
			b.WriteString("\nIn the part that was read:\n")
		}
	case len(r.Findings) == 0:
		b.WriteString("Nothing in the diff looks like what the job must not do.\n")
	}
	for _, f := range r.Findings {
		b.WriteString("- " + findingLine(f) + "\n")
	}
	if r.Verdict == evidence.VerdictClean && r.NotChecked == "" {
		out.Conclusion = "success"
	}
	for _, f := range r.Findings {
		if f.Line <= 0 {
			continue
		}
		level := "notice"
		if f.Severity == evidence.Concern {
			level = "warning"
		}
		// Annotation messages are plain text: Line only drops what is not
		// shown and keeps it to one line.
		out.Annotations = append(out.Annotations, github.Annotation{Path: f.File, Line: f.Line, Level: level, Title: f.Rule, Message: Line(f.Why+" · "+f.Text, 1000)})
	}
	out.Summary = Clip(b.String(), maxCheckSummary)
	return out
}
