package app

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/publish"
)

// knownFlake makes test/racy_b_test.exs:25 a known flaky test: a re-run of
// CI run 111 passed after it failed.
func (h *harness) knownFlake() {
	h.t.Helper()
	h.gh.SetJob(111, 1, 11, "test", "failure", testenv.ExUnitLog(h.t, "gha_fail_seed_1.txt"))
	h.gh.SetJob(111, 2, 110, "test", "success", testenv.ExUnitLog(h.t, "gha_pass_seed_2.txt"))
	h.deliver("workflow_run", testenv.DeliveryID(), testenv.RerunPassedEvent(h.t, 111, testenv.HeadSHA))
	h.eventually("the flake known", func() bool { return len(h.checkRunsNamed(publish.CheckRunName)) == 1 })
}

// knownFlakesCheck waits for the "pitcrew / known flakes" check run on sha
// and returns its title and summary.
func (h *harness) knownFlakesCheck(sha string) (title, summary string) {
	h.t.Helper()
	h.eventually("the known flakes check run", func() bool {
		for _, c := range h.checkRunsNamed(publish.KnownFlakesCheckName) {
			if c["head_sha"] == sha {
				out := c["output"].(map[string]any)
				title, summary = fmt.Sprint(out["title"]), fmt.Sprint(out["summary"])
				return true
			}
		}
		return false
	})
	return title, summary
}

// A workflow run that only a known flaky test failed is re-run once, and
// says so; one where it failed beside an unknown failure is not, and says
// why; past the daily number, none is.
func TestKnownFlakesStopBlockingPullRequests(t *testing.T) {
	h := newHarness(t, true)
	h.gh.SetFile("hexpm/hexpm", ".github/pitcrew.yml", "flaky:\n  rerun_daily_limit: 1\n")
	h.knownFlake()

	only := strings.Repeat("c", 40)
	h.gh.SetJob(201, 1, 21, "test", "failure", testenv.ExUnitLog(t, "gha_fail_seed_1.txt"))
	for i := 0; i < 2; i++ { // redelivered
		h.deliver("workflow_run", testenv.DeliveryID(), testenv.RunFailedEvent(t, 201, 1, only))
	}
	title, summary := h.knownFlakesCheck(only)
	if title != "Only known flaky tests failed: test/racy_b_test.exs:25; re-ran the failed jobs" || !strings.Contains(summary, "| `test/racy_b_test.exs:25` | no pull request yet | 2 times | in |") {
		t.Fatalf("check run: %s\n%s", title, summary)
	}
	h.eventually("both deliveries handled", h.handled("workflow_run", 1+2))
	if reruns := h.gh.Reruns(); len(reruns) != 1 || reruns[0] != 201 || len(h.checkRunsNamed(publish.KnownFlakesCheckName)) != 1 {
		t.Fatalf("re-runs %v, check runs %d: one re-run per attempt", reruns, len(h.checkRunsNamed(publish.KnownFlakesCheckName)))
	}

	mixed := strings.Repeat("d", 40)
	h.gh.SetJob(202, 1, 22, "test", "failure", testenv.ExUnitLog(t, "gha_fail_seed_1.txt"))
	h.gh.SetJob(202, 1, 23, "test (other)", "failure", testenv.ExUnitLog(t, "gha_compile_error.txt"))
	h.deliver("workflow_run", testenv.DeliveryID(), testenv.RunFailedEvent(t, 202, 1, mixed))
	title, summary = h.knownFlakesCheck(mixed)
	if !strings.HasPrefix(title, "Not re-run: 1 of the failures is not a known flake") || !strings.Contains(summary, "job `test (other)` did not compile") {
		t.Fatalf("check run: %s\n%s", title, summary)
	}

	capped := strings.Repeat("e", 40)
	h.gh.SetJob(203, 1, 24, "test", "failure", testenv.ExUnitLog(t, "gha_fail_seed_1.txt"))
	h.deliver("workflow_run", testenv.DeliveryID(), testenv.RunFailedEvent(t, 203, 1, capped))
	if title, summary = h.knownFlakesCheck(capped); title != "Only known flaky tests failed: test/racy_b_test.exs:25; not re-run" || !strings.Contains(summary, "the daily number of 1 re-runs for this repository is reached") {
		t.Fatalf("check run: %s\n%s", title, summary)
	}
	if reruns := h.gh.Reruns(); len(reruns) != 1 {
		t.Fatalf("re-runs past the daily number: %v", reruns)
	}
}

// A run with no known flaky test in it writes nothing.
func TestARunWithoutKnownFlakesWritesNothing(t *testing.T) {
	h := newHarness(t, true)
	h.gh.SetJob(301, 1, 31, "test", "failure", testenv.ExUnitLog(t, "gha_fail_seed_1.txt"))
	h.deliver("workflow_run", testenv.DeliveryID(), testenv.RunFailedEvent(t, 301, 1, strings.Repeat("f", 40)))
	h.eventually("handled", h.handled("workflow_run", 1))
	if n := len(h.gh.CheckRuns()); n != 0 || len(h.gh.Reruns()) != 0 {
		t.Fatalf("%d check runs, re-runs %v", n, h.gh.Reruns())
	}
}

// The attempt pitcrew's re-run made is not re-run again when the known
// flake fails once more: one re-run per workflow run.
func TestAKnownFlakeIsReRunOncePerWorkflowRun(t *testing.T) {
	h := newHarness(t, true)
	h.knownFlake()
	sha := strings.Repeat("c", 40)
	for attempt := 1; attempt <= 3; attempt++ {
		h.gh.SetJob(201, attempt, int64(20+attempt), "test", "failure", testenv.ExUnitLog(t, "gha_fail_seed_1.txt"))
		h.deliver("workflow_run", testenv.DeliveryID(), testenv.RunFailedEvent(t, 201, attempt, sha))
		h.eventually("the attempt handled", h.handled("workflow_run", 1+attempt))
	}
	h.eventually("a check run per attempt", func() bool { return len(h.checkRunsNamed(publish.KnownFlakesCheckName)) == 3 })
	if reruns := h.gh.Reruns(); len(reruns) != 1 {
		t.Fatalf("re-runs %v: one per workflow run", reruns)
	}
	if _, summary := h.knownFlakesCheck(sha); !strings.Contains(summary, "re-ran") {
		t.Fatal(summary)
	}
}
