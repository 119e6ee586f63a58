package app

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

const suiteID = 880001

// gitHubCalls counts the REST calls pitcrew made, token requests aside.
func gitHubCalls(h *harness) int {
	n := 0
	for _, r := range h.gh.Requests() {
		if !strings.HasSuffix(r.Operation, "/access_tokens") {
			n++
		}
	}
	return n
}

// A job that ran `mix test || mix test --failed` passed after a test
// failed: the workflow is green on its first attempt, yet the test flaked.
func TestAJobThatRetriedItsTestsStartsAFix(t *testing.T) {
	h := newHarness(t, true)
	h.gh.SetJob(601, 1, 61, "test", "success", testenv.ExUnitLog(t, "gha_pm_in_job_retry.txt"))
	h.gh.SetJob(601, 1, 62, "lint", "success", "")
	h.gh.Annotate(62, ".github", 1, "warning", "Node.js 16 actions are deprecated.")
	h.gh.Annotate(61, "test/racy_b_test.exs", 25, "failure", "test get_env/2 sees mode b after work (RacyBTest)")
	h.gh.SetCheckSuite(suiteID, 601)
	h.deliver("workflow_run", testenv.DeliveryID(), testenv.WorkflowRunEvent(t, 601, 1, suiteID, testenv.HeadSHA))
	h.eventually("the check run", func() bool { return len(h.gh.CheckRuns()) == 1 })
	summary := h.gh.CheckRuns()[0]["output"].(map[string]any)["summary"].(string)
	if h.sandbox.SessionCount() != 1 || !strings.Contains(summary, "### `test/racy_b_test.exs:25`") {
		t.Fatalf("%d sessions:\n%s", h.sandbox.SessionCount(), summary)
	}
	// One suite listing, the annotations of both annotated check runs, one
	// log: the lint job's warning costs its annotations call and no log.
	for op, want := range map[string]int{opSuiteCheckRuns: 1, opAnnotations: 2, opJobLog: 1} {
		if n := h.gh.Count(op); n != want {
			t.Errorf("%s: %d calls, want %d", op, n, want)
		}
	}
}

const (
	opSuiteCheckRuns = "GET /repos/{owner}/{repo}/check-suites/{check_suite_id}/check-runs"
	opAnnotations    = "GET /repos/{owner}/{repo}/check-runs/{check_run_id}/annotations"
	opJobLog         = "GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs"
)

// A green run costs the suite listing, plus the configuration while it is
// not cached, and writes nothing.
func TestAGreenRunCostsOneCallAndWritesNothing(t *testing.T) {
	h := newHarness(t, true)
	for i, run := range []int64{602, 612} {
		h.gh.SetJob(run, 1, run*10, "test", "success", testenv.ExUnitLog(t, "gha_pass_seed_2.txt"))
		h.gh.SetCheckSuite(suiteID+run, run)
		before := gitHubCalls(h)
		h.deliver("workflow_run", testenv.DeliveryID(), testenv.WorkflowRunEvent(t, run, 1, suiteID+run, testenv.HeadSHA))
		h.eventually("the delivery handled", func() bool { return strings.Count(h.logs.String(), "delivery handled") == i+1 })
		want := map[int]int{0: 3, 1: 1}[i] // cold: the configuration file and the repository, then the suite
		if calls := gitHubCalls(h) - before; calls != want {
			t.Errorf("green run %d: %d GitHub calls, want %d", i+1, calls, want)
		}
	}
	if len(h.gh.CheckRuns()) != 0 || h.sandbox.SessionCount() != 0 {
		t.Fatalf("%d check runs, %d sessions", len(h.gh.CheckRuns()), h.sandbox.SessionCount())
	}
}

func TestInJobRetriesCanBeTurnedOff(t *testing.T) {
	h := newHarness(t, true)
	h.gh.SetFile("hexpm/hexpm", ".github/pitcrew.yml", "flaky:\n  in_job_retries: false\n")
	h.gh.SetJob(603, 1, 64, "test", "success", testenv.ExUnitLog(t, "gha_pm_in_job_retry.txt"))
	h.gh.Annotate(64, "test/racy_b_test.exs", 25, "failure", "test get_env/2 sees mode b after work (RacyBTest)")
	h.gh.SetCheckSuite(suiteID, 603)
	h.deliver("workflow_run", testenv.DeliveryID(), testenv.WorkflowRunEvent(t, 603, 1, suiteID, testenv.HeadSHA))
	h.eventually("the delivery handled", func() bool { return strings.Contains(h.logs.String(), "delivery handled") })
	if h.gh.Count(opSuiteCheckRuns) != 0 || h.sandbox.SessionCount() != 0 {
		t.Fatalf("%d suite listings, %d sessions", h.gh.Count(opSuiteCheckRuns), h.sandbox.SessionCount())
	}
}

// A failure counts only when the passing attempt ran the test and passed
// it; an attempt where most tests failed is the infrastructure.
func TestARerunCountsOnlyTestsThePassingAttemptRan(t *testing.T) {
	h := newHarness(t, true)
	narrowed := strings.ReplaceAll(testenv.ExUnitLog(t, "gha_pass_seed_2.txt"), "Z mix test\n", "Z mix test test/racy_a_test.exs\n")
	narrowed = strings.ReplaceAll(narrowed, "##[group]Run mix test\n", "##[group]Run mix test test/racy_a_test.exs\n")
	h.gh.SetJob(604, 1, 65, "test", "failure", testenv.ExUnitLog(t, "gha_fail_seed_1.txt")) // racy_b_test.exs:25 failed
	h.gh.SetJob(604, 2, 66, "test", "success", narrowed)
	h.deliver("workflow_run", testenv.DeliveryID(), testenv.RerunPassedEvent(t, 604, testenv.HeadSHA))
	h.eventually("the check run", func() bool { return len(h.gh.CheckRuns()) == 1 })
	summary := h.gh.CheckRuns()[0]["output"].(map[string]any)["summary"].(string)
	if h.sandbox.SessionCount() != 0 || !strings.Contains(summary, "`test/racy_b_test.exs:25`: the passing attempt's test command did not include test/racy_b_test.exs") {
		t.Fatalf("%d sessions:\n%s", h.sandbox.SessionCount(), summary)
	}

	h.gh.SetJob(605, 1, 67, "test", "failure", testenv.ExUnitLog(t, "gha_pm_many_failures.txt"))
	h.gh.SetJob(605, 2, 68, "test", "success", testenv.ExUnitLog(t, "gha_pass_seed_2.txt"))
	h.deliver("workflow_run", testenv.DeliveryID(), testenv.RerunPassedEvent(t, 605, strings.Repeat("e", 40)))
	h.eventually("the second check run", func() bool { return len(h.gh.CheckRuns()) == 2 })
	summary = h.gh.CheckRuns()[1]["output"].(map[string]any)["summary"].(string)
	if h.sandbox.SessionCount() != 0 || !strings.Contains(summary, "Most tests failed") {
		t.Fatalf("%d sessions:\n%s", h.sandbox.SessionCount(), summary)
	}
}

// A CI reporting through the Checks API: the passing check's own output
// must show the test run; a bare "Tests passed" clears nothing.
func TestACheckThatShowsNoTestRunClearsNothing(t *testing.T) {
	h := newHarness(t, true)
	h.gh.AddCheckRun(testenv.HeadSHA, "ci/test", "failure", "Tests failed", testenv.ExUnitLog(t, "fail_seed_4.txt"))
	h.deliver("check_run", testenv.DeliveryID(), testenv.PassedCheckEventWithOutput(t, 9001, testenv.HeadSHA, "ci/test", ""))
	h.eventually("the check run", func() bool { return len(h.gh.CheckRuns()) == 1 })
	summary := h.gh.CheckRuns()[0]["output"].(map[string]any)["summary"].(string)
	if h.sandbox.SessionCount() != 0 || !strings.Contains(summary, "`test/racy_a_test.exs:27`: the passing attempt's log shows no completed test run") {
		t.Fatalf("%d sessions:\n%s", h.sandbox.SessionCount(), summary)
	}
}

// A sandbox down when a CI flake is reported shows on the check run at
// once; the run starts on a later try, once.
func TestASandboxDownIsShownOnTheCIsCheckRun(t *testing.T) {
	h := newHarness(t, true)
	h.sandbox.FailNextStarts(5) // every call of the task's first try
	h.gh.SetJob(601, 1, 61, "test", "success", testenv.ExUnitLog(t, "gha_pm_in_job_retry.txt"))
	h.gh.Annotate(61, "test/racy_b_test.exs", 25, "failure", "test get_env/2 sees mode b after work (RacyBTest)")
	h.gh.SetCheckSuite(suiteID, 601)
	h.deliver("workflow_run", testenv.DeliveryID(), testenv.WorkflowRunEvent(t, 601, 1, suiteID, testenv.HeadSHA))
	summary := func() string {
		if runs := h.gh.CheckRuns(); len(runs) == 1 {
			return fmt.Sprint(runs[0]["output"].(map[string]any)["summary"])
		}
		return ""
	}
	h.eventually("the wait on the check run", func() bool { return strings.Contains(summary(), "queued: the sandbox answered HTTP 500 at ") })
	h.eventually("the run started on a later try", func() bool { return h.sandbox.SessionCount() == 1 && !strings.Contains(summary(), "queued:") })
	if n := len(h.gh.CheckRuns()); n != 1 {
		t.Fatalf("%d check runs", n)
	}
}
