package app

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/runs"
)

// stormOfDistinctAlerts sends n alerts that are each a new incident and
// waits until every one is handled.
func stormOfDistinctAlerts(h *harness, n int) {
	for i := 0; i < n; i++ {
		if code := h.alert(datadogToken, testenv.DatadogAlert(fmt.Sprint(5000000+i), "cycle-1", "Triggered", testenv.DatadogTags, "storm")); code != 202 {
			h.t.Fatalf("answered %d", code)
		}
	}
	inspector := asynq.NewInspectorFromRedisClient(h.redis)
	h.eventually("every alert handled", func() bool {
		queues, err := inspector.Queues()
		for _, q := range queues {
			info, err := inspector.GetQueueInfo(q)
			if err != nil || info.Pending+info.Active+info.Retry > 0 {
				return false
			}
		}
		return err == nil && len(queues) > 0
	})
}

func TestAStormOfDistinctAlertsOpensNoMoreIssuesThanRunsStart(t *testing.T) {
	h := datadogHarness(t)
	stormOfDistinctAlerts(h, 300)
	// The default daily_limit is 5 runs: the other 295 incidents start no
	// run, so they get no issue.
	if len(h.gh.Issues()) != 5 || h.sandbox.SessionCount() != 5 {
		t.Fatalf("%d issues, %d sessions from 300 distinct alerts", len(h.gh.Issues()), h.sandbox.SessionCount())
	}
	if n, _ := runs.NewLedger(h.redis).IssuesOpened(context.Background(), "hexpm/hexpm"); n != 5 {
		t.Fatalf("the cap counted %d issues", n)
	}
}

func TestTheDailyIssueCapHoldsWhenRunsAreAllowed(t *testing.T) {
	h := datadogHarness(t)
	h.gh.SetFile("hexpm/hexpm", ".github/pitcrew.yml", "daily_limit: 1000\ndaily_issue_limit: 7\n")
	stormOfDistinctAlerts(h, 300)
	writes := 0
	for _, r := range h.gh.Requests() {
		if r.Method != "GET" && !strings.HasSuffix(r.Operation, "/access_tokens") {
			writes++
		}
	}
	if len(h.gh.Issues()) != 7 || h.sandbox.SessionCount() != 7 || writes > 7*2 {
		t.Fatalf("%d issues, %d sessions, %d GitHub writes from 300 distinct alerts", len(h.gh.Issues()), h.sandbox.SessionCount(), writes)
	}
	if got := strings.Count(h.logs.String(), "daily cap on issues"); got != 1 {
		t.Fatalf("the cap was reported %d times, want once", got)
	}
}

func TestTrackIssuesOpensNoIssueForALimitedRun(t *testing.T) {
	h := newHarness(t, true)
	h.gh.SetFile("hexpm/hexpm", ".github/pitcrew.yml", "daily_limit: 1\nflaky:\n  track_issues: true\n")
	h.gh.SetJob(111, 1, 11, "test (seed 1)", "failure", testenv.ExUnitLog(t, "gha_fail_seed_1.txt"))
	h.gh.SetJob(111, 2, 110, "test (seed 1)", "success", testenv.ExUnitLog(t, "gha_pass_seed_2.txt"))
	h.gh.SetJob(111, 1, 12, "test (seed 33)", "failure", testenv.ExUnitLog(t, "fail_seed_33.txt"))
	h.gh.SetJob(111, 2, 120, "test (seed 33)", "success", testenv.ExUnitLog(t, "gha_pass_seed_2.txt"))
	h.deliver("workflow_run", testenv.DeliveryID(), testenv.RerunPassedEvent(t, 111, testenv.HeadSHA))
	h.eventually("the check run", func() bool { return len(h.gh.CheckRuns()) == 1 })
	if len(h.gh.Issues()) != 1 || h.sandbox.SessionCount() != 1 {
		t.Fatalf("%d issues, %d sessions with a daily limit of one run", len(h.gh.Issues()), h.sandbox.SessionCount())
	}
}
