package handlers

import (
	"context"
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/github/githubtest"
	"github.com/pitcrew/pitcrew/internal/testenv"
)

// What a workflow run that passed means, decided by WorkflowRun alone: no
// HTTP, a struct fake of GitHub holding the CI's jobs and logs.
func TestWhatARerunMeans(t *testing.T) {
	narrowed := strings.ReplaceAll(testenv.ExUnitLog(t, "gha_pass_seed_2.txt"), "Z mix test\n", "Z mix test test/racy_a_test.exs\n")
	narrowed = strings.ReplaceAll(narrowed, "##[group]Run mix test\n", "##[group]Run mix test test/racy_a_test.exs\n")
	for _, c := range []struct {
		name, config string
		ci           func(gh *githubtest.Fake)
		event        []byte
		sessions     int
		check        string // in pitcrew's check run; "" means no check run
	}{
		{name: "a test failed, then passed on the rerun", event: testenv.RerunPassedEvent(t, 222, testenv.HeadSHA), sessions: 1, check: "`test/racy_b_test.exs:25`",
			ci: func(gh *githubtest.Fake) {
				gh.SetJob(222, 1, 21, "test", "failure", testenv.ExUnitLog(t, "gha_fail_seed_1.txt"))
				gh.SetJob(222, 2, 210, "test", "success", testenv.ExUnitLog(t, "gha_pass_seed_2.txt"))
			}},
		{name: "the rerun did not run the test that failed", event: testenv.RerunPassedEvent(t, 604, testenv.HeadSHA), check: "the passing attempt's test command did not include test/racy_b_test.exs",
			ci: func(gh *githubtest.Fake) {
				gh.SetJob(604, 1, 65, "test", "failure", testenv.ExUnitLog(t, "gha_fail_seed_1.txt"))
				gh.SetJob(604, 2, 66, "test", "success", narrowed)
			}},
		{name: "most tests failed: the infrastructure, not the tests", event: testenv.RerunPassedEvent(t, 605, testenv.HeadSHA), check: "Most tests failed",
			ci: func(gh *githubtest.Fake) {
				gh.SetJob(605, 1, 67, "test", "failure", testenv.ExUnitLog(t, "gha_pm_many_failures.txt"))
				gh.SetJob(605, 2, 68, "test", "success", testenv.ExUnitLog(t, "gha_pass_seed_2.txt"))
			}},
		{name: "the runner shut down", event: testenv.RerunPassedEvent(t, 333, testenv.HeadSHA), check: "infrastructure",
			ci: func(gh *githubtest.Fake) {
				gh.SetJob(333, 1, 31, "test", "failure", "2026-10-02T10:12:58.0088449Z ##[error]The runner has received a shutdown signal.\n")
			}},
		{name: "the code did not compile", event: testenv.RerunPassedEvent(t, 444, testenv.HeadSHA), check: "did not compile",
			ci: func(gh *githubtest.Fake) {
				gh.SetJob(444, 1, 41, "test", "failure", testenv.ExUnitLog(t, "gha_compile_error.txt"))
			}},
		{name: "the flaky job switched off", config: "flaky:\n  enabled: false\n", event: testenv.RerunPassedEvent(t, 222, testenv.HeadSHA),
			ci: func(gh *githubtest.Fake) {
				gh.SetJob(222, 1, 21, "test", "failure", testenv.ExUnitLog(t, "gha_fail_seed_1.txt"))
				gh.SetJob(222, 2, 210, "test", "success", testenv.ExUnitLog(t, "gha_pass_seed_2.txt"))
			}},
		{name: "a first attempt whose tests were retried inside the job", event: testenv.WorkflowRunEvent(t, 601, 1, 6010, testenv.HeadSHA), sessions: 1, check: "`test/racy_b_test.exs:25`",
			ci: func(gh *githubtest.Fake) {
				gh.SetJob(601, 1, 61, "test", "success", testenv.ExUnitLog(t, "gha_pm_in_job_retry.txt"))
				gh.Annotate(61, github.Annotation{Path: "test/racy_b_test.exs", Line: 25, Level: "failure", Message: "test get_env/2 sees mode b after work (RacyBTest)"})
				gh.SetSuite(6010, 601)
			}},
		{name: "in-job retries switched off", config: "flaky:\n  in_job_retries: false\n", event: testenv.WorkflowRunEvent(t, 601, 1, 6010, testenv.HeadSHA),
			ci: func(gh *githubtest.Fake) {
				gh.SetJob(601, 1, 61, "test", "success", testenv.ExUnitLog(t, "gha_pm_in_job_retry.txt"))
				gh.Annotate(61, github.Annotation{Path: "test/racy_b_test.exs", Line: 25, Level: "failure", Message: "test get_env/2 sees mode b after work (RacyBTest)"})
				gh.SetSuite(6010, 601)
			}},
		{name: "a green first attempt with nothing retried", event: testenv.WorkflowRunEvent(t, 602, 1, 6020, testenv.HeadSHA),
			ci: func(gh *githubtest.Fake) {
				gh.SetJob(602, 1, 62, "test", "success", testenv.ExUnitLog(t, "gha_pass_seed_2.txt"))
				gh.SetSuite(6020, 602)
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			gh := &githubtest.Fake{Config: c.config}
			c.ci(gh)
			sb := &testenv.Sessions{}
			h := &WorkflowRun{Env: ruleBase(t, gh, sb)}
			if err := h.Handle(context.Background(), "workflow_run", testenv.DeliveryID(), c.event); err != nil {
				t.Fatal(err)
			}
			if len(sb.Prompts) != c.sessions {
				t.Errorf("%d sessions, want %d", len(sb.Prompts), c.sessions)
			}
			switch {
			case c.check == "" && len(gh.Checks) != 0:
				t.Errorf("check runs %+v, want none", gh.Checks)
			case c.check != "" && (len(gh.Checks) != 1 || !strings.Contains(gh.Checks[0].Summary, c.check)):
				t.Errorf("check runs %+v, want one whose summary has %q", gh.Checks, c.check)
			}
		})
	}
}
