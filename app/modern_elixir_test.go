package app

import (
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

// The logs of Elixir 1.18, 1.19 and 1.20 (exunit/testdata/generate_modern.sh:
// real 1.14 logs re-shaped to what those versions print) start a fix
// exactly as 1.14's do.

func TestARerunThatPassedOnNewerElixirStartsOneFix(t *testing.T) {
	for i, c := range []struct{ version, failed, passed string }{
		{"1.14", "gha_fail_seed_1.txt", "gha_pass_seed_2.txt"},
		{"1.18, a parameterized test", "gha_pm_handmade_1_18_params_fail.txt", "gha_pm_handmade_1_18_pass.txt"},
		{"1.19", "gha_pm_handmade_1_19_fail.txt", "gha_pm_handmade_1_19_pass.txt"},
		{"1.20", "gha_pm_handmade_1_20_fail.txt", "gha_pm_handmade_1_20_pass.txt"},
	} {
		t.Run(c.version, func(t *testing.T) {
			h := newHarness(t, true)
			run := int64(4801 + i)
			h.gh.SetJob(run, 1, run*10, "test", "failure", testenv.ExUnitLog(t, c.failed))
			h.gh.SetJob(run, 2, run*10+1, "test", "success", testenv.ExUnitLog(t, c.passed))
			h.deliver("workflow_run", testenv.DeliveryID(), testenv.RerunPassedEvent(t, run, testenv.HeadSHA))
			h.eventually("the check run", func() bool { return len(h.gh.CheckRuns()) == 1 })
			summary := h.gh.CheckRuns()[0]["output"].(map[string]any)["summary"].(string)
			if h.sandbox.SessionCount() != 1 || !strings.Contains(summary, "### `test/racy_b_test.exs:25`") || !strings.Contains(summary, "seed `1`") {
				t.Fatalf("%d sessions:\n%s", h.sandbox.SessionCount(), summary)
			}
		})
	}
}

// `mix test || mix test --failed` on Elixir 1.20: green on the first
// attempt, yet the test flaked.
func TestAnInJobRetryOnElixir120StartsOneFix(t *testing.T) {
	h := newHarness(t, true)
	h.gh.SetJob(4811, 1, 48110, "test", "success", testenv.ExUnitLog(t, "gha_pm_handmade_1_20_in_job_retry.txt"))
	h.gh.Annotate(48110, "test/racy_b_test.exs", 25, "failure", "test get_env/2 sees mode b after work (RacyBTest)")
	h.gh.SetCheckSuite(suiteID, 4811)
	h.deliver("workflow_run", testenv.DeliveryID(), testenv.WorkflowRunEvent(t, 4811, 1, suiteID, testenv.HeadSHA))
	h.eventually("the check run", func() bool { return len(h.gh.CheckRuns()) == 1 })
	summary := h.gh.CheckRuns()[0]["output"].(map[string]any)["summary"].(string)
	if h.sandbox.SessionCount() != 1 || !strings.Contains(summary, "### `test/racy_b_test.exs:25`") {
		t.Fatalf("%d sessions:\n%s", h.sandbox.SessionCount(), summary)
	}
}
