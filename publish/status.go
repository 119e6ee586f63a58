package publish

import (
	"fmt"
	"strings"
	"time"

	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/runs"
)

// StatusMarker identifies pitcrew's status comment on an issue.
const StatusMarker = "<!-- pitcrew:status -->"

// RenderStatus writes the status comment of an issue from what the ledger
// knows: one line per named test with its run's state and links, the
// mentions that were not usable, and a notice when nothing started. It is
// pure, so every wording is tested without HTTP.
func RenderStatus(v runs.View) string {
	st, byID, now := v.Status, v.Runs, v.Now
	var b strings.Builder
	b.WriteString(StatusMarker + "\n**pitcrew** · flaky test fix\n\n")
	if st.Notice != "" {
		b.WriteString(st.Notice + "\n")
	}
	for _, e := range st.Entries {
		if e.RunID == "" {
			fmt.Fprintf(&b, "- `%s`: %s.\n", e.About, e.Note)
			continue
		}
		r, ok := byID[e.RunID]
		if !ok {
			fmt.Fprintf(&b, "- `%s`: the run record has expired.\n", e.About)
			continue
		}
		fmt.Fprintf(&b, "- `%s`: %s\n", e.About, describeRun(e, r, st.Label, now))
	}
	if len(st.Rejected) > 0 {
		b.WriteString("\nNot used (a test is named as `test/path/to/file_test.exs:LINE`):\n")
		for _, r := range st.Rejected {
			b.WriteString("- " + r + "\n")
		}
	}
	writeUnreadAnswers(&b, st, byID)
	return Clip(b.String(), MaxCommentLen)
}

// MaxCommentLen is GitHub's limit on a comment body.
const MaxCommentLen = 65536

// Clip cuts s to at most max bytes at a line boundary.
func Clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const note = "\n\n… (cut at GitHub's length limit)\n"
	cut := strings.LastIndexByte(s[:max-len(note)], '\n')
	if cut < 0 {
		cut = max - len(note)
	}
	return s[:cut] + note
}

// writeUnreadAnswers folds the answer of each run whose result block could
// not be read (or that failed), so the reader sees what the agent said.
// Tests are named by their place in the list: a summary is HTML, where
// Markdown escapes would show.
func writeUnreadAnswers(b *strings.Builder, st runs.Status, byID map[string]runs.Run) {
	for i, e := range st.Entries {
		if r, ok := byID[e.RunID]; ok && (r.Result == nil || r.State == runs.Failed) {
			title := "The agent's answer"
			if len(st.Entries) > 1 {
				title += fmt.Sprintf(" for test %d of %d", i+1, len(st.Entries))
			}
			b.WriteString(answerDetails(title, r))
		}
	}
}

func describeRun(e runs.Entry, r runs.Run, label string, now time.Time) string {
	return cameBack(e, r, now) + describeState(e, r, label, now)
}

// cameBack says the test flaked again after a merged fix: the fix this run
// starts from, or, within the cooldown, the answering run's own merged
// pull request.
func cameBack(e runs.Entry, r runs.Run, now time.Time) string {
	if f := r.PriorFix; f != nil && e.Relation != runs.ClaimCooldown {
		return fmt.Sprintf("↩️ came back after [PR #%d](%s) (merged on %s). ", f.Number, f.URL, f.MergedAt.UTC().Format("2 Jan"))
	}
	if p := r.PR; p != nil && e.Relation == runs.ClaimCooldown && p.State == runs.PullMerged && now.After(p.MergedAt) {
		return fmt.Sprintf("↩️ came back after [PR #%d](%s) (merged on %s). ", p.Number, p.URL, p.MergedAt.UTC().Format("2 Jan"))
	}
	return ""
}

func describeState(e runs.Entry, r runs.Run, label string, now time.Time) string {
	link := ""
	if r.SessionURL != "" {
		link = fmt.Sprintf(" ([run](%s))", r.SessionURL)
	}
	origin := ""
	if e.Relation != runs.ClaimNew && r.Origin != 0 {
		origin = fmt.Sprintf(" started from #%d", r.Origin)
	}
	switch r.State {
	case runs.Queued:
		if r.Waiting != "" {
			return waitingLine(r.Waiting)
		}
		if origin != "" {
			return "🕓 a run" + origin + " is queued; the agent starts shortly."
		}
		return "🕓 queued; the agent starts shortly."
	case runs.Started:
		if len(r.FollowUps) > 0 {
			return "🔄 the agent is working on a follow-up" + link + "." + pullLine(r)
		}
		if e.Relation == runs.ClaimAttached {
			return "🔄 already being fixed by a run" + origin + link + "; this issue will show its outcome too."
		}
		return fmt.Sprintf("🔄 the agent is working on it since %s UTC: reproducing the failure with random seeds, then fixing the cause%s.", r.StartedAt.UTC().Format("15:04"), link)
	case runs.Failed:
		return fmt.Sprintf("❌ the run%s failed: %s%s. To retry, remove the `%s` label and add it again.", origin, orDefault(r.Error, "no reason was given"), link, label)
	}
	prefix := ""
	if e.Relation == runs.ClaimCooldown {
		prefix = fmt.Sprintf("answered %s ago by a run%s; a new run can start after %s UTC. ", ago(now.Sub(r.EndedAt)), origin, r.EndedAt.Add(e.Cooldown).UTC().Format("2006-01-02 15:04"))
	}
	return prefix + describeResult(r, link)
}

func describeResult(r runs.Run, link string) string {
	res := r.Result
	if res == nil {
		return unreadResult(r, link) + "." + pullLine(r)
	}
	// A flaky fix's answer stands beside its run's own log; when the log
	// contradicts it, the line says so instead of "fixed".
	flaky := r.Kind == runs.KindFlaky || r.Kind == ""
	var b strings.Builder
	switch {
	case res.Outcome == prompts.OutcomeNotReproduced:
		b.WriteString("➖ the agent could not reproduce the failure")
		if res.Runs != nil {
			fmt.Fprintf(&b, " in %d runs", *res.Runs)
		}
		b.WriteString("; no pull request was opened" + link + ".")
		return b.String()
	case res.PRURL != "" && flaky && fixNotBacked(r):
		fmt.Fprintf(&b, "%s: %s%s.", notBacked, res.PRURL, link)
	case res.PRURL != "":
		fmt.Fprintf(&b, "✅ fixed in %s%s.", res.PRURL, link)
	default:
		fmt.Fprintf(&b, "⚠️ the agent reproduced the failure but opened no fix%s.", link)
	}
	if res.Cause != "" {
		b.WriteString("\n  - Cause: " + Text(res.Cause, prompts.MaxCauseLen))
	}
	if line := polluterLine(r); line != "" {
		b.WriteString("\n  - " + line)
	}
	if res.Seed != nil {
		fmt.Fprintf(&b, "\n  - Failing seed: `%d`", *res.Seed)
	}
	if res.FailuresBefore != nil || res.FailuresAfter != nil {
		b.WriteString("\n  - Failures: " + count(res.FailuresBefore) + " before, " + count(res.FailuresAfter) + " after")
		if res.Runs != nil {
			fmt.Fprintf(&b, " (%d verification runs)", *res.Runs)
		}
	}
	if flaky {
		b.WriteString(measuredLines(r, res))
	}
	b.WriteString(pullLine(r))
	return b.String()
}

func count(n *int) string {
	if n == nil {
		return "?"
	}
	return fmt.Sprint(*n)
}

func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "moments"
	case d < time.Hour:
		return fmt.Sprintf("%d minutes", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d hours", int(d.Hours()))
	}
	return fmt.Sprintf("%d days", int(d.Hours()/24))
}

// waitingLine says a run is queued because the sandbox did not answer,
// and that pitcrew tries again.
func waitingLine(why string) string {
	return "🕓 queued: " + Text(why, 200) + "; pitcrew tries again, and says here if it gives up."
}
