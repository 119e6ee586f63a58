package app

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

// manyFailures is crafted ExUnit output naming n failing tests.
func manyFailures(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%3d) test crafted %d (EvilTest)\n     test/evil_%d_test.exs:%d\n     Assertion with == failed\n\n", i, i, i, i+1)
	}
	fmt.Fprintf(&b, "Finished in 0.1 seconds\n%d tests, %d failures\n\nRandomized with seed 1\n", n, n)
	return b.String()
}

func TestCheckRunFromAForkStartsNothing(t *testing.T) {
	h := newHarness(t, true)
	h.gh.SetFile("hexpm/hexpm", ".github/pitcrew.yml", "daily_limit: 1000\nflaky:\n  track_issues: true\n")
	h.gh.AddCheckRun(testenv.HeadSHA, "ci/test", "failure", "Tests failed", manyFailures(500))
	h.deliver("check_run", testenv.DeliveryID(), testenv.ForkCheckEvent(t, 9001, testenv.HeadSHA, "ci/test", ""))
	h.eventually("the delivery handled", func() bool { return strings.Count(h.logs.String(), "delivery handled") == 1 })
	if h.sandbox.SessionCount() != 0 || len(h.gh.Issues()) != 0 || len(h.gh.CheckRuns()) != 0 || len(h.gh.Requests()) != 0 {
		t.Fatalf("%d sessions, %d issues, %d check runs, %d GitHub calls", h.sandbox.SessionCount(), len(h.gh.Issues()), len(h.gh.CheckRuns()), len(h.gh.Requests()))
	}
}

func TestCheckRunOnABranchCountsOnlyIfTheCommitIsOnIt(t *testing.T) {
	h := newHarness(t, true)
	h.gh.SetBranch("hexpm/hexpm", "feature/login", strings.Repeat("1", 40), testenv.HeadSHA)
	other := strings.Repeat("d", 40)
	h.gh.AddCheckRun(other, "ci/test", "failure", "Tests failed", testenv.ExUnitLog(t, "fail_seed_4.txt"))
	// A fork's branch of the same name: its commit is not on ours.
	h.deliver("check_run", testenv.DeliveryID(), testenv.ForkCheckEvent(t, 9001, other, "ci/test", "feature/login"))
	h.eventually("the delivery handled", func() bool { return strings.Count(h.logs.String(), "delivery handled") == 1 })
	if h.sandbox.SessionCount() != 0 || h.gh.Count("GET /repos/{owner}/{repo}/compare/{basehead}") != 1 {
		t.Fatalf("%d sessions for a commit on no branch of ours", h.sandbox.SessionCount())
	}
	h.gh.AddCheckRun(testenv.HeadSHA, "ci/test", "failure", "Tests failed", testenv.ExUnitLog(t, "fail_seed_4.txt"))
	h.deliver("check_run", testenv.DeliveryID(), testenv.ForkCheckEvent(t, 9002, testenv.HeadSHA, "ci/test", "feature/login"))
	h.eventually("the fix run", func() bool { return h.sandbox.SessionCount() == 1 })
}

func TestRerunOfAForkPullRequestStartsNothing(t *testing.T) {
	h := newHarness(t, true)
	h.gh.SetJob(111, 1, 11, "test", "failure", testenv.ExUnitLog(t, "gha_fail_seed_1.txt"))
	h.gh.SetJob(111, 2, 110, "test", "success", testenv.ExUnitLog(t, "gha_pass_seed_2.txt"))
	payload := testenv.Event(t, "workflow_run.completed.json", func(ev map[string]any) {
		run := ev["workflow_run"].(map[string]any)
		run["id"], run["run_attempt"], run["conclusion"], run["head_sha"] = 111, 2, "success", testenv.HeadSHA
		run["head_repository"].(map[string]any)["full_name"] = "mallory/hexpm"
	})
	h.deliver("workflow_run", testenv.DeliveryID(), payload)
	h.eventually("the delivery handled", func() bool { return strings.Count(h.logs.String(), "delivery handled") == 1 })
	if h.sandbox.SessionCount() != 0 || len(h.gh.Requests()) != 0 {
		t.Fatalf("%d sessions, %d GitHub calls", h.sandbox.SessionCount(), len(h.gh.Requests()))
	}
}
