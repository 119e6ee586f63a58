package app

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/runs"
)

// dashboardIssue is the dashboard pitcrew opened: its number and body.
func (h *harness) dashboardIssue() (int, string) {
	for n, is := range h.gh.Issues() {
		if body, _ := is["body"].(string); strings.Contains(body, publish.DashboardMarker) {
			return n, body
		}
	}
	return 0, ""
}

// A burst of flaky signals makes a few edits of the dashboard, not one per
// signal; a writer's tick starts a run and is undone by the rewrite, a
// reader's is undone with a note. Through the signed route, the queue and
// its delayed refresh tasks, against the GitHub fake.
func TestABurstOfSignalsMakesAFewDashboardEditsAndATickStartsARun(t *testing.T) {
	const window = 300 * time.Millisecond
	h := newHarness(t, true, func(o *Options) { o.DashboardEvery = window })
	h.gh.SetFile("hexpm/hexpm", ".github/pitcrew.yml", "daily_limit: 5\n")
	const signals = 40
	start := time.Now()
	for i := 1; i <= signals; i++ {
		test := fmt.Sprintf("test/hexpm/burst_%d_test.exs:%d", i, 10+i)
		if code := h.deliver("issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky", "alice", i, "Flaky", test)); code != 202 {
			t.Fatalf("delivery %d: %d", i, code)
		}
	}
	h.eventually("every label handled", func() bool { return strings.Count(h.logs.String(), "delivery handled") == signals })
	h.eventually("every test on the dashboard", func() bool { _, body := h.dashboardIssue(); return strings.Count(body, "- [ ] ") == signals })
	took := time.Since(start)
	time.Sleep(3 * window) // nothing left to write
	creates := h.gh.Count("POST /repos/{owner}/{repo}/issues")
	edits := h.gh.Count("PATCH /repos/{owner}/{repo}/issues/{issue_number}")
	t.Logf("%d signals over %v: %d dashboard created, %d edits (window %v)", signals, took.Round(time.Millisecond), creates, edits, window)
	if creates != 1 || edits > int(took/window)+2 {
		t.Fatalf("%d creates and %d edits for %d signals in %v", creates, edits, signals, took)
	}

	// Past the daily limit most tests have no run: a writer ticks one once
	// the limit is raised.
	h.gh.SetFile("hexpm/hexpm", ".github/pitcrew.yml", "daily_limit: 50\n")
	if err := h.app.Ledger.Uncache(context.Background(), "config:hexpm/hexpm"); err != nil {
		t.Fatal(err)
	}
	n, body := h.dashboardIssue()
	row := regexp.MustCompile("(?m)^- \\[ \\] (`test/hexpm/burst_\\d+_test.exs:\\d+`).*\n  - .*\n  - No run yet").FindStringSubmatch(body)
	if row == nil {
		t.Fatalf("no test without a run:\n%s", body)
	}
	sessions := h.sandbox.SessionCount()
	ticked := strings.Replace(body, "- [ ] "+row[1], "- [x] "+row[1], 1)
	h.gh.EditIssue(n, ticked)
	h.deliver("issues", testenv.DeliveryID(), testenv.DashboardEditEvent(t, "alice", n, ticked))
	h.eventually("the ticked test's run", func() bool { return h.sandbox.SessionCount() == sessions+1 })
	h.eventually("the box unticked, with the run", func() bool {
		_, body := h.dashboardIssue()
		i := strings.Index(body, row[1])
		return !strings.Contains(body, "- [x]") && i > 0 && strings.Contains(body[i:min(len(body), i+600)], "the agent is working on it")
	})

	// A reader's tick is undone, with a note, and starts nothing.
	h.gh.SetPermission("mallory", "read")
	_, body = h.dashboardIssue()
	ticked = strings.Replace(body, "- [ ] ", "- [x] ", 1)
	h.gh.EditIssue(n, ticked)
	h.deliver("issues", testenv.DeliveryID(), testenv.DashboardEditEvent(t, "mallory", n, ticked))
	h.eventually("the reader's tick undone", func() bool {
		_, body := h.dashboardIssue()
		return !strings.Contains(body, "- [x]") && strings.Contains(body, "A box ticked by `mallory` was unticked")
	})
	if got := h.sandbox.SessionCount(); got != sessions+1 {
		t.Fatalf("%d sessions after a reader's tick, want %d", got, sessions+1)
	}
	// pitcrew's own edits come back as issues.edited and are not stored.
	if code := h.deliver("issues", testenv.DeliveryID(), testenv.DashboardEditEvent(t, "pitcrew[bot]", n, body)); code != 200 {
		t.Fatalf("pitcrew's own edit: %d, want 200 without storing it", code)
	}
}

// Without any signal, the periodic sweep rewrites each dashboard from the
// ledger (here: a sighting recorded behind its back).
func TestThePeriodicSweepRefreshesEveryDashboard(t *testing.T) {
	h := newHarness(t, true, func(o *Options) {
		o.DashboardEvery = 200 * time.Millisecond
		o.Schedule.DashboardsEvery = 800 * time.Millisecond
	})
	h.deliver("issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky", "alice", 12, "Flaky", "test/hexpm/swept_test.exs:1"))
	h.eventually("the dashboard", func() bool { n, _ := h.dashboardIssue(); return n != 0 })
	if _, err := h.app.Ledger.RecordSighting(context.Background(), "hexpm/hexpm", runs.Seen{Key: "flaky:hexpm/hexpm:test/hexpm/behind_test.exs:2", Occurrence: "x"}); err != nil {
		t.Fatal(err)
	}
	h.eventually("the sweep's rewrite", func() bool {
		_, body := h.dashboardIssue()
		return strings.Contains(body, "test/hexpm/behind_test.exs:2")
	})
}
