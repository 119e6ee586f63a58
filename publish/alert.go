package publish

import (
	"fmt"
	"strings"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/runs"
)

// RenderAlert writes the status comment on an alert's tracking issue: the
// run's link while it works, then the agent's answer: the pull request, or
// what the logs show and what to check when the cause is outside the code.
func RenderAlert(v runs.View) string {
	st, byID := v.Status, v.Runs
	b, _, r, link, ok := singleRunComment("alert fix", "Nothing was started", st, byID)
	if !ok {
		return b.String()
	}
	res := r.Result
	switch {
	case r.State == runs.Queued && r.Waiting != "":
		b.WriteString(waitingLine(r.Waiting) + "\n")
	case r.State == runs.Queued:
		b.WriteString("🕓 The agent starts shortly.\n")
	case r.State == runs.Started:
		b.WriteString("🔄 The agent is reading the monitor, the error logs and traces around the alert, to write a failing test and fix the cause" + link + ".\n")
	case r.State == runs.Failed:
		fmt.Fprintf(b, "❌ The run failed: %s%s.\n", orDefault(r.Error, "no reason was given"), link)
	case res == nil:
		b.WriteString(capitalFirst(unreadResult(r, link)) + ".\n")
	case res.Outcome == prompts.OutcomeOutsideCode:
		fmt.Fprintf(b, "🔎 The cause is outside this code%s: %s\n", link, orDefault(Text(res.Cause, prompts.MaxCauseLen), "the agent gave no detail."))
		if res.Dependency != "" {
			fmt.Fprintf(b, "\nCheck: %s\n", Text(res.Dependency, 200))
		}
	case res.PRURL != "" && r.Measured != nil && evidence.VerifyRegression(*r.Measured) != "":
		// The log contradicts the regression test the answer claims: no
		// tick; the regression line below says how.
		fmt.Fprintf(b, "%s: %s%s.\n", capitalFirst(notBacked), res.PRURL, link)
		if res.Cause != "" {
			b.WriteString("\nCause: " + Text(res.Cause, prompts.MaxCauseLen) + "\n")
		}
	case res.PRURL != "":
		fmt.Fprintf(b, "✅ Fixed in %s%s, with a regression test.\n", res.PRURL, link)
		if res.Cause != "" {
			b.WriteString("\nCause: " + Text(res.Cause, prompts.MaxCauseLen) + "\n")
		}
	default:
		fmt.Fprintf(b, "⚠️ The agent found no fix%s.", link)
		if res.Cause != "" {
			b.WriteString(" " + Text(res.Cause, prompts.MaxCauseLen))
		}
		b.WriteString("\n")
	}
	if r.State.Terminal() && res != nil && res.Outcome == prompts.OutcomeFixed {
		b.WriteString(regressionLine(r) + "\n")
	}
	if line := pullLine(r); line != "" {
		b.WriteString(strings.TrimPrefix(line, "\n") + "\n")
	}
	// The incident needs what the agent found, whatever its outcome.
	b.WriteString(answerDetails("The agent's answer", r))
	return b.String()
}

// capitalFirst starts a sentence built from a clause with a capital
// (the clauses start with an emoji, then a space).
func capitalFirst(s string) string {
	emoji, rest, ok := strings.Cut(s, " ")
	if !ok || rest == "" {
		return s
	}
	return emoji + " " + strings.ToUpper(rest[:1]) + rest[1:]
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// regressionLine says what the run's own log shows of its regression test.
func regressionLine(r runs.Run) string {
	if r.Measured == nil {
		return "\nRegression test not verified: the run left no evidence log (`" + evidence.RunLogName + "`)."
	}
	if problem := evidence.VerifyRegression(*r.Measured); problem != "" {
		return "\nRegression test: " + problem + "."
	}
	return "\nRegression test ✔️ verified in the run's log: it fails on the unfixed code and passes on the fix."
}
