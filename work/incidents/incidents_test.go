package incidents_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/github/githubtest"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work/incidents"
	"github.com/pitcrew/pitcrew/work/worktest"
)

// An incident's key ignores the case of the repository GitHub names it
// with; its tracking issue is found again by the marker it hides, once
// Redis has forgotten it, and remembered.
func TestAnIncidentsIssueIsFoundAgainByItsMarker(t *testing.T) {
	repo := github.Repo{Owner: "hexpm", Name: "hexpm"}
	key := incidents.Key(runs.KindAlert, github.Repo{Owner: "HexPM", Name: "Hexpm"}, "42")
	if key != incidents.Key(runs.KindAlert, repo, "42") || key != "alert:hexpm/hexpm:42" {
		t.Fatalf("key %q", key)
	}
	gh := &githubtest.Fake{}
	gh.Issues = append(gh.Issues, githubtest.Issue{Number: 9, Title: "Datadog alert: x", Body: "...\n<!-- pitcrew:" + key + " -->", Labels: []string{"pitcrew:alert"}})
	b := worktest.Env(t, gh, &testenv.Sessions{})
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		n, err := incidents.Issue(ctx, &b, gh, repo, key, "pitcrew:alert")
		if err != nil || n != 9 {
			t.Fatalf("issue %d, %v", n, err)
		}
		gh.Issues = nil // the second time, from the ledger
	}
	if n, err := incidents.Issue(ctx, &b, gh, repo, incidents.Key(runs.KindAlert, repo, "43"), "pitcrew:alert"); err != nil || n != 0 {
		t.Fatalf("another incident's issue: %d, %v", n, err)
	}
}

// A retry rebuilds the prompt from the alert the run kept, or says it
// kept none.
func TestARetryRebuildsThePromptFromTheKeptAlert(t *testing.T) {
	data, _ := json.Marshal(prompts.AlertInput{Repo: "hexpm/hexpm", Data: map[string]any{"title": "Error rate"}})
	in, err := incidents.Retry(runs.Run{Data: data}, repoconfig.Config{})
	if got, ok := in.(prompts.AlertInput); err != nil || !ok || got.Repo != "hexpm/hexpm" {
		t.Fatalf("%+v %v", in, err)
	}
	if _, err := incidents.Retry(runs.Run{}, repoconfig.Config{}); err == nil {
		t.Fatal("a run with no alert retried")
	}
}
