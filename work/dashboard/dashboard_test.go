package dashboard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/exunit"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/github/githubtest"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/dashboard"
	"github.com/pitcrew/pitcrew/work/flaky"
	"github.com/pitcrew/pitcrew/work/worktest"
)

var repo = github.Repo{Owner: "hexpm", Name: "hexpm"}

// seen records a sighting of test, as a CI signal would.
func seen(t *testing.T, b work.Env, test, occurrence string) {
	t.Helper()
	ref, err := exunit.ParseTestRef(test)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Ledger.RecordSighting(context.Background(), repo.String(), runs.Seen{Key: flaky.Key(repo.String(), ref), Occurrence: occurrence,
		Commit: strings.Repeat("a", 40), Where: "https://github.com/hexpm/hexpm/actions/runs/1"}); err != nil {
		t.Fatal(err)
	}
}

func dashboardBody(gh *githubtest.Fake) (int, string) {
	for i, is := range gh.Issues {
		if strings.Contains(is.Body, publish.DashboardMarker) {
			return i + 1, is.Body
		}
	}
	return 0, ""
}

// A refresh writes the dashboard from pitcrew's records: opened once,
// edited only when it changes, each row naming its file's owners.
func TestARefreshWritesTheDashboardOnlyWhenItChanges(t *testing.T) {
	gh := &githubtest.Fake{Config: "", Committers: map[string]string{"test/a_test.exs": "bob"}}
	b := worktest.Env(t, gh, &testenv.Sessions{})
	ctx := context.Background()
	seen(t, b, "test/a_test.exs:3", "workflow_run:1/1")
	if err := dashboard.Refresh(ctx, &b, repo.String(), testenv.Installation); err != nil {
		t.Fatal(err)
	}
	n, body := dashboardBody(gh)
	if n == 0 || !strings.Contains(body, "- [ ] `test/a_test.exs:3`") || !strings.Contains(body, "Seen 1 time") || !strings.Contains(body, "Last changed by `bob`") {
		t.Fatalf("dashboard:\n%s", body)
	}
	writes := len(gh.WritesSoFar())
	if err := dashboard.Refresh(ctx, &b, repo.String(), testenv.Installation); err != nil {
		t.Fatal(err)
	}
	if got := gh.WritesSoFar()[writes:]; len(got) != 0 {
		t.Fatalf("an unchanged dashboard was written: %q", got)
	}
	seen(t, b, "test/a_test.exs:3", "workflow_run:2/1")
	if err := dashboard.Refresh(ctx, &b, repo.String(), testenv.Installation); err != nil {
		t.Fatal(err)
	}
	if _, body = dashboardBody(gh); !strings.Contains(body, "Seen 2 times") || strings.Count(strings.Join(gh.WritesSoFar(), "\n"), "CreateIssue") != 1 {
		t.Fatalf("writes %q, dashboard:\n%s", gh.WritesSoFar(), body)
	}
}

// Ticking a test's box starts its fix run, for a writer only.
func TestTickingABoxStartsAFixForAWriter(t *testing.T) {
	for _, c := range []struct {
		editor   string
		sessions int
	}{{"alice", 1}, {"mallory", 0}} {
		t.Run(c.editor, func(t *testing.T) {
			gh := &githubtest.Fake{Permissions: map[string]string{"alice": "write"}}
			sb := &testenv.Sessions{}
			b := worktest.Env(t, gh, sb)
			seen(t, b, "test/a_test.exs:3", "workflow_run:1/1")
			key := flaky.Key(repo.String(), exunit.TestRef{Path: "test/a_test.exs", Line: 3})
			if _, err := dashboard.StartTicked(context.Background(), &b, dashboard.Edit{InstallationID: testenv.Installation, Repo: repo, Issue: 500, Editor: c.editor,
				Ticks: []string{publish.TickID(key)}}, testenv.DeliveryID()); err != nil {
				t.Fatal(err)
			}
			if n := sb.Started(); n != c.sessions {
				t.Fatalf("%d sessions, want %d", n, c.sessions)
			}
		})
	}
}

// A known flake whose quarantine ran out says so in its row.
func TestARowSaysWhenItsQuarantineRanOut(t *testing.T) {
	gh := &githubtest.Fake{Config: "flaky:\n  quarantine_days: 1\n"}
	b := worktest.Env(t, gh, &testenv.Sessions{})
	seen(t, b, "test/a_test.exs:3", "workflow_run:1/1")
	b.Now = func() time.Time { return time.Now().Add(3 * 24 * time.Hour) }
	if err := dashboard.Refresh(context.Background(), &b, repo.String(), testenv.Installation); err != nil {
		t.Fatal(err)
	}
	if _, body := dashboardBody(gh); !strings.Contains(body, "⏳ Out of quarantine since") {
		t.Fatalf("dashboard:\n%s", body)
	}
}
