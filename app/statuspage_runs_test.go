package app

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/runs"
)

// The status page names an alert run by its source and title, beside the
// source's id, and says how each ended run ended, not only "completed".
func TestTheStatusPageShowsWhatEachRunWasAboutAndHowItEnded(t *testing.T) {
	h := newHarness(t, false, func(o *Options) { o.StatusToken = "s" })
	ctx := context.Background()
	ledger := h.app.Ledger
	add := func(r runs.Run, end runs.State, change func(*runs.Run)) {
		t.Helper()
		run, _, err := ledger.Claim(ctx, r, 0, 100, runs.Subject{})
		if err != nil {
			t.Fatal(err)
		}
		if run, err = ledger.Move(ctx, run, runs.Started, nil); err != nil {
			t.Fatal(err)
		}
		if end != runs.Started {
			if _, err = ledger.Move(ctx, run, end, change); err != nil {
				t.Fatal(err)
			}
		}
	}
	add(runs.Run{Key: "alert:hexpm/hexpm:4242", Kind: runs.KindAlert, Repo: "HexPM/hexpm", Origin: 31, About: "4242", Title: "Error rate on <api> above 5%"},
		runs.Completed, func(r *runs.Run) {
			r.Result = &prompts.Result{Outcome: prompts.OutcomeOutsideCode, Dependency: "postgres"}
		})
	add(runs.Run{Key: "sentry:hexpm/hexpm:77", Kind: "sentry", Repo: "hexpm/hexpm", About: "77", Title: "KeyError in Hexpm.Accounts"},
		runs.Completed, func(r *runs.Run) {
			r.Result = &prompts.Result{Outcome: prompts.OutcomeFixed, PRURL: "https://github.com/hexpm/hexpm/pull/90"}
		})
	add(runs.Run{Key: "flaky:hexpm/hexpm:test/a_test.exs:1", Kind: runs.KindFlaky, Repo: "hexpm/hexpm", About: "test/a_test.exs:1"},
		runs.Failed, func(r *runs.Run) { r.Error = "the sandbox session ended without an answer" })
	add(runs.Run{Key: "flaky:hexpm/hexpm:test/b_test.exs:2", Kind: runs.KindFlaky, Repo: "hexpm/hexpm", About: "test/b_test.exs:2"},
		runs.NotReproduced, func(r *runs.Run) { r.Result = &prompts.Result{Outcome: prompts.OutcomeNotReproduced} })

	code, body := h.getAs("pitcrew.example.com", "/", "Authorization", "Bearer s")
	if code != http.StatusOK {
		t.Fatalf("%d", code)
	}
	for _, want := range []string{
		`<td>completed</td><td>the cause is outside the code</td><td>HexPM/hexpm</td><td>Datadog: Error rate on &lt;api&gt; above 5% <span class="muted">(4242)</span></td>`,
		`<td>completed</td><td>fixed</td><td>hexpm/hexpm</td><td>Sentry: KeyError in Hexpm.Accounts <span class="muted">(77)</span></td>`,
		`<a href="https://github.com/hexpm/hexpm/pull/90">pull request</a>`,
		`<td>failed</td><td>the sandbox session ended without an answer</td><td>hexpm/hexpm</td><td>test/a_test.exs:1</td>`,
		`<td>not reproduced</td><td>not reproduced</td>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(body, "<api>") {
		t.Error("an alert title reached the page unescaped")
	}
}

// /flaky names a repository as GitHub spells it, though the ledger keys
// it by its lower-case name.
func TestTheFlakyPageKeepsTheRepositorysCase(t *testing.T) {
	h := newHarness(t, false, func(o *Options) { o.StatusToken = "s" })
	for i, occ := range []string{"workflow_run:1/1", "workflow_run:2/1"} {
		if _, err := h.app.Ledger.RecordSighting(context.Background(), "HexPM/Hexpm", runs.Seen{Key: "flaky:hexpm/hexpm:test/a_test.exs:1",
			Occurrence: occ, Commit: testenv.HeadSHA, Where: "https://github.com/HexPM/Hexpm/actions/runs/" + string(rune('1'+i))}); err != nil {
			t.Fatal(err)
		}
	}
	_, body := h.getAs("pitcrew.example.com", "/flaky", "Authorization", "Bearer s")
	if !strings.Contains(body, "<h2>HexPM/Hexpm</h2>") || !strings.Contains(body, "<code>test/a_test.exs:1</code>") {
		t.Fatalf("the page does not name HexPM/Hexpm as GitHub does:\n%s", body)
	}
}
