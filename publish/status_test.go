package publish

import (
	"strings"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/runs"
)

func TestRenderStatus(t *testing.T) {
	now := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	seed, before, after, n := int64(48213), 7, 0, 50
	runsByID := map[string]runs.Run{
		"started":  {State: runs.Started, StartedAt: now.Add(-time.Hour), SessionURL: "https://rush.example/s/1", Origin: 3},
		"fixed":    {State: runs.Completed, EndedAt: now.Add(-2 * time.Hour), Origin: 3, Result: &prompts.Result{Outcome: prompts.OutcomeFixed, PRURL: "https://github.com/hexpm/hexpm/pull/9", Cause: "shared ETS table", Seed: &seed, FailuresBefore: &before, FailuresAfter: &after, Runs: &n}},
		"notrepro": {State: runs.NotReproduced, Result: &prompts.Result{Outcome: prompts.OutcomeNotReproduced, Runs: &n}},
		"notfixed": {State: runs.Completed, Result: &prompts.Result{Outcome: prompts.OutcomeNotFixed, Cause: "needs a schema change"}},
		"failed":   {State: runs.Failed, Error: "the sandbox gave no reason", Origin: 3},
		"noresult": {State: runs.Completed, Error: "its answer had no readable result block (the answer has no result block)", Answer: "I looked at it.\n@octocat it is fine"},
		"linked": {State: runs.Completed, Error: "its answer had no readable result block (the answer has no result block)", Answer: "Opened the PR.",
			AnswerPRs: []string{"https://github.com/hexpm/hexpm/pull/77", "https://github.com/hexpm/hexpm/pull/78"}},
		"queued": {State: runs.Queued, Origin: 3},
	}
	cases := []struct {
		entry runs.Entry
		want  []string
	}{
		{runs.Entry{RunID: "started", Relation: runs.ClaimNew}, []string{"working on it since 14:00 UTC", "([run](https://rush.example/s/1))"}},
		{runs.Entry{RunID: "started", Relation: runs.ClaimAttached}, []string{"already being fixed by a run started from #3", "will show its outcome too"}},
		{runs.Entry{RunID: "fixed", Relation: runs.ClaimNew}, []string{"✅ fixed in https://github.com/hexpm/hexpm/pull/9", "Cause: shared ETS table", "Failing seed: `48213`", "7 before, 0 after (50 verification runs)"}},
		{runs.Entry{RunID: "fixed", Relation: runs.ClaimCooldown, Cooldown: 24 * time.Hour}, []string{"answered 2 hours ago by a run started from #3", "a new run can start after 2026-12-03 13:00 UTC", "pull/9"}},
		{runs.Entry{RunID: "notrepro", Relation: runs.ClaimNew}, []string{"could not reproduce the failure in 50 runs; no pull request was opened"}},
		{runs.Entry{RunID: "notfixed", Relation: runs.ClaimNew}, []string{"reproduced the failure but opened no fix", "Cause: needs a schema change"}},
		{runs.Entry{RunID: "failed", Relation: runs.ClaimNew}, []string{"❌ the run failed: the sandbox gave no reason", "remove the `flaky-test` label and add it again"}},
		{runs.Entry{RunID: "noresult", Relation: runs.ClaimNew}, []string{"the run ended but its answer had no readable result block (the answer has no result block); its answer is below.",
			"<details><summary>The agent's answer</summary>\n\n```\nI looked at it.\n@octocat it is fine\n```\n\n</details>"}},
		{runs.Entry{RunID: "linked", Relation: runs.ClaimNew}, []string{"🔗 the agent ended without its result block; its answer links https://github.com/hexpm/hexpm/pull/77, https://github.com/hexpm/hexpm/pull/78.",
			"```\nOpened the PR.\n```"}},
		{runs.Entry{RunID: "queued", Relation: runs.ClaimAttached}, []string{"a run started from #3 is queued"}},
		{runs.Entry{RunID: "gone", Relation: runs.ClaimNew}, []string{"the run record has expired"}},
	}
	for _, c := range cases {
		c.entry.About = "test/a_test.exs:1"
		body := RenderStatus(runs.View{Status: runs.Status{Label: "flaky-test", Entries: []runs.Entry{c.entry}}, Runs: runsByID, Now: now})
		if !strings.HasPrefix(body, StatusMarker) || !strings.Contains(body, "- `test/a_test.exs:1`: ") {
			t.Errorf("%s: no marker or test line:\n%s", c.entry.RunID, body)
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s/%s: lacks %q:\n%s", c.entry.RunID, c.entry.Relation, w, body)
			}
		}
	}
	body := RenderStatus(runs.View{Status: runs.Status{Notice: "Nothing was started: x.", Rejected: []string{"`test/x_test.exs`: has no line number"}}, Runs: nil, Now: now})
	if !strings.Contains(body, "Nothing was started: x.") || !strings.Contains(body, "Not used") || !strings.Contains(body, "has no line number") {
		t.Errorf("notice:\n%s", body)
	}
}

// An alert's tracking issue shows the agent's answer whatever the outcome,
// since that is what the incident needs; a flaky issue whose run gave a
// result shows the result only.
func TestTheAnswerIsShownWhereItIsNeeded(t *testing.T) {
	fixed := runs.Run{State: runs.Completed, SessionURL: "https://rush.example/s/1", Answer: "Root cause: the ETS table.",
		Result: &prompts.Result{Outcome: prompts.OutcomeFixed, PRURL: "https://github.com/hexpm/hexpm/pull/9"}}
	entry := runs.Entry{RunID: "r", Relation: runs.ClaimNew, About: "5xx on hexpm"}
	v := runs.View{Status: runs.Status{Entries: []runs.Entry{entry}}, Runs: map[string]runs.Run{"r": fixed}}
	alert := RenderAlert(v)
	for _, w := range []string{"✅ Fixed in https://github.com/hexpm/hexpm/pull/9 ([run](https://rush.example/s/1))", "<details><summary>The agent's answer</summary>", "Root cause: the ETS table."} {
		if !strings.Contains(alert, w) {
			t.Errorf("alert comment lacks %q:\n%s", w, alert)
		}
	}
	if status := RenderStatus(v); strings.Contains(status, "<details>") {
		t.Errorf("a flaky issue with a result folds the answer too:\n%s", status)
	}
	unread := fixed
	unread.Result, unread.AnswerPRs = nil, []string{"https://github.com/hexpm/hexpm/pull/77"}
	v.Runs["r"] = unread
	if alert := RenderAlert(v); !strings.Contains(alert, "🔗 The agent ended without its result block; its answer links https://github.com/hexpm/hexpm/pull/77 ([run](https://rush.example/s/1)).") {
		t.Errorf("alert comment of an answer without a block:\n%s", alert)
	}
}
