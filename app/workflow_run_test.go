package app

import (
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/sandbox"
)

func TestRerunPassedWorkflowStartsOneFixPerTest(t *testing.T) {
	h := newHarness(t, true)
	// Attempt 1 failed in two jobs (two seeds); attempt 2 passed.
	h.gh.SetJob(111, 1, 11, "test (seed 1)", "failure", testenv.ExUnitLog(t, "gha_fail_seed_1.txt"))
	h.gh.SetJob(111, 2, 110, "test (seed 1)", "success", testenv.ExUnitLog(t, "gha_pass_seed_2.txt"))
	h.gh.SetJob(111, 1, 12, "test (seed 33)", "failure", testenv.ExUnitLog(t, "fail_seed_33.txt"))
	h.gh.SetJob(111, 2, 120, "test (seed 33)", "success", testenv.ExUnitLog(t, "gha_pass_seed_2.txt"))
	h.gh.SetJob(111, 1, 13, "lint", "success", "")
	if code := h.deliver("workflow_run", testenv.DeliveryID(), testenv.RerunPassedEvent(t, 111, testenv.HeadSHA)); code != 202 {
		t.Fatalf("answered %d", code)
	}
	h.eventually("the check run", func() bool { return len(h.gh.CheckRuns()) == 1 })
	// test/racy_b_test.exs:25 failed in both jobs, :20 in one: two tests.
	if h.sandbox.SessionCount() != 2 {
		t.Fatalf("%d sessions, want 2", h.sandbox.SessionCount())
	}
	check := h.gh.CheckRuns()[0]
	out := check["output"].(map[string]any)
	summary := out["summary"].(string)
	if check["name"] != publish.CheckRunName || check["conclusion"] != "neutral" || check["head_sha"] != testenv.HeadSHA || out["title"] != "2 flaky tests, 2 new fix runs" {
		t.Fatalf("check run %v", check)
	}
	for _, want := range []string{
		"### `test/racy_b_test.exs:25`", "get\\_env/2 sees mode b after work (`RacyBTest`) · seed `1` · seen flaking 1 time",
		"mode was clobbered by another async test",
		"### `test/racy_b_test.exs:20`", "seed `33`", "right: :b", "the agent is working on it",
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
	calls := 0
	for _, r := range h.gh.Requests() {
		if !strings.HasSuffix(r.Operation, "/access_tokens") {
			calls++
		}
	}
	t.Logf("GitHub API calls for one rerun-passed event with 2 failed jobs: %d", calls)

	// The same flake on another commit: counted, attached, no new session.
	h.gh.SetJob(222, 1, 21, "test", "failure", testenv.ExUnitLog(t, "gha_fail_seed_1.txt"))
	h.gh.SetJob(222, 2, 210, "test", "success", testenv.ExUnitLog(t, "gha_pass_seed_2.txt"))
	other := strings.Repeat("a", 40)
	h.deliver("workflow_run", testenv.DeliveryID(), testenv.RerunPassedEvent(t, 222, other))
	h.eventually("the second check run", func() bool { return len(h.gh.CheckRuns()) == 2 })
	second := h.gh.CheckRuns()[1]["output"].(map[string]any)["summary"].(string)
	if h.sandbox.SessionCount() != 2 || !strings.Contains(second, "seen flaking 2 times") || !strings.Contains(second, "already being fixed") {
		t.Fatalf("sessions %d, second check run:\n%s", h.sandbox.SessionCount(), second)
	}

	// A labelled issue naming the same test shares the run too.
	h.deliver("issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky", "alice", 60, "test/racy_b_test.exs:25", ""))
	h.eventually("the issue's comment", h.commentContains(60, "already being fixed"))

	// When the runs end, the check runs show the outcome.
	for _, id := range h.sandbox.SessionIDs() {
		h.finish(id, sandbox.StatusCompleted, fixedAnswer)
	}
	h.eventually("the outcome in the first check run", func() bool {
		s := h.gh.CheckRuns()[0]["output"].(map[string]any)["summary"].(string)
		return strings.Count(s, "fixed in https://github.com/hexpm/hexpm/pull/1234") == 2
	})
	if n := h.gh.Count("POST /repos/{owner}/{repo}/check-runs"); n != 2 {
		t.Fatalf("%d check runs created, want one per CI run", n)
	}
}

func TestRerunPassedWithoutExUnitFailures(t *testing.T) {
	h := newHarness(t, true)
	h.gh.SetJob(333, 1, 31, "test", "failure", "2026-10-02T10:12:58.0088449Z ##[error]The runner has received a shutdown signal.\n")
	h.gh.SetJob(444, 1, 41, "test", "failure", testenv.ExUnitLog(t, "gha_compile_error.txt"))
	h.deliver("workflow_run", testenv.DeliveryID(), testenv.RerunPassedEvent(t, 333, testenv.HeadSHA))
	h.deliver("workflow_run", testenv.DeliveryID(), testenv.RerunPassedEvent(t, 444, testenv.HeadSHA))
	h.eventually("two check runs", func() bool { return len(h.gh.CheckRuns()) == 2 })
	texts := ""
	for _, c := range h.gh.CheckRuns() {
		texts += c["output"].(map[string]any)["summary"].(string)
	}
	if !strings.Contains(texts, "infrastructure") || !strings.Contains(texts, "did not compile") || h.sandbox.SessionCount() != 0 {
		t.Fatalf("sessions %d:\n%s", h.sandbox.SessionCount(), texts)
	}
}

func TestCheckRunCIThatPassedOnRerun(t *testing.T) {
	h := newHarness(t, true)
	h.gh.AddCheckRun(testenv.HeadSHA, "ci/test", "failure", "Tests failed", testenv.ExUnitLog(t, "fail_seed_4.txt"))
	h.deliver("check_run", testenv.DeliveryID(), testenv.PassedCheckEvent(t, 9001, testenv.HeadSHA, "ci/test"))
	h.eventually("the check run", func() bool { return len(h.gh.CheckRuns()) == 1 })
	summary := h.gh.CheckRuns()[0]["output"].(map[string]any)["summary"].(string)
	if h.sandbox.SessionCount() != 1 || !strings.Contains(summary, "test/racy_a_test.exs:27") || !strings.Contains(summary, "check `ci/test`") {
		t.Fatalf("sessions %d:\n%s", h.sandbox.SessionCount(), summary)
	}
	// A check that passed the first time costs one call and does nothing.
	before := len(h.gh.Requests())
	h.deliver("check_run", testenv.DeliveryID(), testenv.PassedCheckEvent(t, 9002, strings.Repeat("b", 40), "ci/test"))
	h.eventually("the delivery handled", func() bool { return strings.Count(h.logs.String(), "delivery handled") == 2 })
	if calls := len(h.gh.Requests()) - before; calls > 2 || len(h.gh.CheckRuns()) != 1 {
		t.Fatalf("%d calls for a first-time pass", calls)
	}
}

func TestTrackingIssuesAttachToTheSameRun(t *testing.T) {
	h := newHarness(t, true)
	h.gh.SetFile("hexpm/hexpm", ".github/pitcrew.yml", "flaky:\n  track_issues: true\n")
	h.gh.SetJob(111, 1, 11, "test", "failure", testenv.ExUnitLog(t, "gha_fail_seed_1.txt"))
	h.gh.SetJob(111, 2, 110, "test", "success", testenv.ExUnitLog(t, "gha_pass_seed_2.txt"))
	h.deliver("workflow_run", testenv.DeliveryID(), testenv.RerunPassedEvent(t, 111, testenv.HeadSHA))
	h.eventually("the tracking issue", func() bool { return len(h.gh.Issues()) == 1 })
	var number int
	for n, is := range h.gh.Issues() {
		number = n
		if is["title"] != "Flaky test: test/racy_b_test.exs:25" || !strings.Contains(is["body"].(string), "Seen flaking: 1 time") || is["labels"].([]any)[0].(map[string]any)["name"] != "flaky" {
			t.Fatalf("issue %v", is)
		}
	}
	// GitHub then sends the label event of pitcrew's own bot: it attaches.
	h.deliver("issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky", "pitcrew[bot]", number, "Flaky test: test/racy_b_test.exs:25", h.gh.Issues()[number]["body"].(string)))
	h.eventually("the tracking issue's status", h.commentContains(number, "already being fixed"))

	// The next sighting updates the same issue.
	h.gh.SetJob(222, 1, 21, "test", "failure", testenv.ExUnitLog(t, "gha_fail_seed_1.txt"))
	h.gh.SetJob(222, 2, 210, "test", "success", testenv.ExUnitLog(t, "gha_pass_seed_2.txt"))
	h.deliver("workflow_run", testenv.DeliveryID(), testenv.RerunPassedEvent(t, 222, strings.Repeat("c", 40)))
	h.eventually("the issue updated", func() bool { return strings.Contains(h.gh.Issues()[number]["body"].(string), "Seen flaking: 2 times") })
	if len(h.gh.Issues()) != 1 || h.sandbox.SessionCount() != 1 {
		t.Fatalf("%d issues, %d sessions", len(h.gh.Issues()), h.sandbox.SessionCount())
	}
}
