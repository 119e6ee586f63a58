package handlers

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pitcrew/pitcrew/internal/metrics"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/dashboard"

	"github.com/pitcrew/pitcrew/internal/github/githubtest"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/publish"
)

// refreshes records the dashboard refreshes handlers ask for; the test
// runs them, as the queue would once per window.
type refreshes struct {
	mu    sync.Mutex
	repos []string
}

func (r *refreshes) ScheduleDashboard(_ context.Context, repo string, _ int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.repos = append(r.repos, repo)
	return nil
}

func (r *refreshes) take() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.repos)
	r.repos = nil
	return n
}

// dashboardBase is a rule base whose dashboard refreshes are recorded.
func dashboardBase(t *testing.T, gh *githubtest.Fake, sb work.Sandbox) (work.Env, *refreshes) {
	r := &refreshes{}
	b := ruleBase(t, gh, sb)
	b.Dashboards = r
	return NewEnv(b), r
}

// refresh runs the refresh the queue would run, if one was asked for.
func refresh(t *testing.T, b work.Env, r *refreshes) {
	t.Helper()
	if r.take() == 0 {
		return
	}
	if err := dashboard.Refresh(context.Background(), &b, "hexpm/hexpm", testenv.Installation); err != nil {
		t.Fatal(err)
	}
}

func dashboardIssue(gh *githubtest.Fake) (number int, body string) {
	for _, is := range gh.Issues {
		if strings.Contains(is.Body, publish.DashboardMarker) {
			return is.Number, is.Body
		}
	}
	return 0, ""
}

const (
	dashTestA = "test/hexpm/web/controllers/package_controller_test.exs:42"
	dashTestB = "test/hexpm/accounts/user_test.exs:7"
)

// The dashboard opens at the first signal, lists each test with its
// sightings and its run, and is written again only when that changes.
func TestTheDashboardOpensAtTheFirstSignalAndIsEditedOnlyWhenItChanges(t *testing.T) {
	gh := &githubtest.Fake{Permissions: map[string]string{"alice": "write"}}
	sb := &testenv.Sessions{}
	b, r := dashboardBase(t, gh, sb)
	ctx := context.Background()
	label := func(issue int) {
		if err := (&IssueLabeled{b}).Handle(ctx, "issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky", "alice", issue, "Flaky tests", dashTestA+"\n"+dashTestB)); err != nil {
			t.Fatal(err)
		}
	}
	label(12)
	refresh(t, b, r)
	n, body := dashboardIssue(gh)
	if n == 0 {
		t.Fatalf("no dashboard issue; issues %+v", gh.Issues)
	}
	if got := gh.Issues[0]; got.Title != publish.DashboardTitle || len(got.Labels) != 1 || got.Labels[0] != publish.DashboardLabel {
		t.Fatalf("dashboard issue %q labelled %v", got.Title, got.Labels)
	}
	for _, want := range []string{"- [ ] `" + dashTestA + "`", "- [ ] `" + dashTestB + "`", "Seen 1 time, first on", "in [issue](https://github.com/hexpm/hexpm/issues/12)", "the agent is working on it"} {
		if !strings.Contains(body, want) {
			t.Errorf("dashboard lacks %q:\n%s", want, body)
		}
	}

	writes := len(gh.WritesSoFar())
	label(12) // the same issue again: no new sighting, no change
	refresh(t, b, r)
	if got := gh.WritesSoFar()[writes:]; len(got) != 1 || !strings.HasPrefix(got[0], "EditComment") {
		t.Fatalf("an unchanged dashboard was written: %q", got)
	}
	label(13) // another issue naming them: a second sighting of each
	refresh(t, b, r)
	if _, body = dashboardIssue(gh); !strings.Contains(body, "Seen 2 times") || !strings.Contains(body, "issues/13") {
		t.Fatalf("second sighting not shown:\n%s", body)
	}
	if got := gh.WritesSoFar(); strings.Count(strings.Join(got, "\n"), "CreateIssue") != 1 {
		t.Fatalf("writes %q: one dashboard issue, edited in place", got)
	}
}

// What ticking a box of the dashboard does, decided by DashboardTick alone.
func TestWhatTickingADashboardBoxDoes(t *testing.T) {
	for _, c := range []struct {
		name, config, editor string
		tick                 string // the test whose box is ticked; "" ticks a box of a test pitcrew does not know
		live                 bool   // the ticked test's run is still going on
		otherIssue           bool   // the edit is of another issue carrying the label
		sessions             int
		rewritten            bool   // the body is written again, unticked
		note                 string // in the body after
	}{
		{name: "a writer ticks an ended run's test", editor: "alice", tick: dashTestA, sessions: 1, rewritten: true},
		{name: "an admin", editor: "eric", tick: dashTestB, sessions: 1, rewritten: true},
		{name: "a reader", editor: "mallory", tick: dashTestA, rewritten: true, note: "A box ticked by `mallory` was unticked: only people with write access"},
		{name: "a bot", editor: "renovate[bot]", tick: dashTestA},
		{name: "a test pitcrew does not know", editor: "alice", tick: "", rewritten: true},
		{name: "a test whose run is live", editor: "alice", tick: dashTestA, live: true, rewritten: true},
		{name: "past the daily limit", config: "daily_limit: 2\n", editor: "alice", tick: dashTestA, rewritten: true, note: "the daily limit of 2 runs"},
		{name: "the dashboard switched off", config: "flaky:\n  dashboard: false\n", editor: "alice", tick: dashTestA},
		{name: "another issue with the label", editor: "alice", tick: dashTestA, otherIssue: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			gh := &githubtest.Fake{Permissions: map[string]string{"alice": "write", "eric": "admin"}}
			sb := &testenv.Sessions{}
			b, r := dashboardBase(t, gh, sb)
			ctx := context.Background()
			if err := (&IssueLabeled{b}).Handle(ctx, "issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky", "alice", 12, "Flaky tests", dashTestA+"\n"+dashTestB)); err != nil {
				t.Fatal(err)
			}
			if !c.live {
				endRuns(t, b)
			}
			if err := dashboard.Refresh(ctx, &b, "hexpm/hexpm", testenv.Installation); err != nil {
				t.Fatal(err)
			}
			r.take()
			gh.Config = c.config
			if err := b.Ledger.Uncache(ctx, "config:hexpm/hexpm"); err != nil {
				t.Fatal(err)
			}
			n, body := dashboardIssue(gh)
			if n == 0 {
				t.Fatal("no dashboard before the tick")
			}
			key := "flaky:hexpm/hexpm:" + c.tick
			if c.tick == "" {
				key = "flaky:hexpm/hexpm:test/unknown_test.exs:1"
				body += "- [x] `test/unknown_test.exs:1` " + "<!-- pitcrew:tick:" + publish.TickID(key) + " -->\n"
			}
			ticked := strings.Replace(body, "- [ ] `"+c.tick+"` ", "- [x] `"+c.tick+"` ", 1)
			if c.otherIssue {
				n = 999
			}
			before, started := len(gh.WritesSoFar()), len(sb.Prompts)
			for range 2 { // delivered twice: one run
				if err := (&DashboardTick{b}).Handle(ctx, "issues", testenv.DeliveryID(), testenv.DashboardEditEvent(t, c.editor, n, ticked)); err != nil {
					t.Fatal(err)
				}
			}
			refresh(t, b, r)
			if got := len(sb.Prompts) - started; got != c.sessions {
				t.Errorf("%d sessions, want %d", got, c.sessions)
			}
			writes := gh.WritesSoFar()[before:]
			if c.rewritten != (len(writes) > 0) {
				t.Errorf("writes %q; rewritten: %v", writes, c.rewritten)
			}
			_, after := dashboardIssue(gh)
			if c.rewritten && strings.Contains(after, "- [x]") {
				t.Errorf("a box stays ticked:\n%s", after)
			}
			if !strings.Contains(after, c.note) {
				t.Errorf("dashboard lacks %q:\n%s", c.note, after)
			}
			if c.sessions > 0 && !strings.Contains(after, "the agent is working on it") {
				t.Errorf("the new run is not shown:\n%s", after)
			}
		})
	}
}

// BenchmarkDashboardRefresh is what one refresh of a dashboard of 50 tests
// costs, when a new sighting changed it and when nothing did (the queue's
// own round trips for the task aside).
func BenchmarkDashboardRefresh(b *testing.B) {
	for _, changed := range []bool{true, false} {
		name := map[bool]string{true: "changed", false: "unchanged"}[changed]
		b.Run(name, func(b *testing.B) {
			rdb := testenv.Redis(b)
			counter := &testenv.Trips{}
			rdb.AddHook(counter)
			gh := &githubtest.Fake{Permissions: map[string]string{"alice": "write"}}
			base := NewEnv(work.Env{Clients: gh.Clients(), Ledger: runs.NewLedger(rdb), Sandbox: &testenv.Sessions{},
				Metrics: metrics.New(prometheus.NewRegistry()), AppSlug: "pitcrew", Dashboards: &refreshes{}})
			ctx := context.Background()
			for i := range 50 {
				if _, err := base.Ledger.RecordSighting(ctx, "hexpm/hexpm", runs.Seen{Key: fmt.Sprintf("flaky:hexpm/hexpm:test/t%d_test.exs:1", i), Occurrence: "o"}); err != nil {
					b.Fatal(err)
				}
			}
			if err := dashboard.Refresh(ctx, &base, "hexpm/hexpm", testenv.Installation); err != nil {
				b.Fatal(err)
			}
			trips, calls := counter.RoundTrips.Load(), len(gh.WritesSoFar())
			for i := 0; i < b.N; i++ {
				if changed {
					if _, err := base.Ledger.RecordSighting(ctx, "hexpm/hexpm", runs.Seen{Key: "flaky:hexpm/hexpm:test/t1_test.exs:1", Occurrence: fmt.Sprint(i)}); err != nil {
						b.Fatal(err)
					}
					trips-- // the sighting is the signal's, not the refresh's
				}
				if err := dashboard.Refresh(ctx, &base, "hexpm/hexpm", testenv.Installation); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(counter.RoundTrips.Load()-trips)/float64(b.N), "redis-trips/refresh")
			b.ReportMetric(float64(len(gh.WritesSoFar())-calls)/float64(b.N), "github-writes/refresh")
		})
	}
}

// The flaky label added to the dashboard itself is no report of the tests
// it lists: nothing is counted, started or written.
func TestTheFlakyLabelOnTheDashboardStartsNothing(t *testing.T) {
	gh := &githubtest.Fake{Permissions: map[string]string{"alice": "write"}}
	sb := &testenv.Sessions{}
	b, r := dashboardBase(t, gh, sb)
	payload := testenv.Event(t, "issues.labeled.json", func(ev map[string]any) {
		ev["label"].(map[string]any)["name"] = "flaky"
		is := ev["issue"].(map[string]any)
		is["number"], is["title"], is["body"] = 500, publish.DashboardTitle, "- [ ] `"+dashTestA+"` <!-- pitcrew:tick:0123456789ab -->"
		is["labels"] = []any{map[string]any{"name": publish.DashboardLabel}, map[string]any{"name": "flaky"}}
		ev["sender"].(map[string]any)["login"] = "alice"
	})
	if err := (&IssueLabeled{b}).Handle(context.Background(), "issues", testenv.DeliveryID(), payload); err != nil {
		t.Fatal(err)
	}
	tests, total, _ := b.Ledger.FlakyTests(context.Background(), "hexpm/hexpm", 10)
	if len(sb.Prompts) != 0 || len(gh.WritesSoFar()) != 0 || total != 0 || len(tests) != 0 || r.take() != 0 {
		t.Fatalf("%d sessions, writes %q, %d tests", len(sb.Prompts), gh.WritesSoFar(), total)
	}
}
