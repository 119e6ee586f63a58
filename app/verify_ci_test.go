package app

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/sandbox"
	"github.com/pitcrew/pitcrew/work/follow"
)

const ciConfig = "flaky:\n  verify: ci\n  verify_runs: 5\n"

// fixToVerifyInCI has the agent fix issue n with a pull request at head,
// in a repository that verifies in its CI (with the workflow unless
// missing), and returns the workflow dispatches that followed, if any.
func (h *harness) fixToVerifyInCI(n int, head string, missing bool) []map[string]any {
	h.t.Helper()
	h.gh.SetFile("hexpm/hexpm", ".github/pitcrew.yml", ciConfig)
	if !missing {
		h.gh.SetFile("hexpm/hexpm", ".github/workflows/"+follow.CIWorkflowFile, follow.CIWorkflow)
	}
	h.gh.SetPull(1234, head, "open", false, diffSample(h.t.(*testing.T), "flaky/real_fix_sync.diff"))
	h.startOne(n)
	h.sandbox.AddArtifact("ses_1", "pitcrew-evidence.log", runLogSample(h.t.(*testing.T), "backed.log"))
	h.finish("ses_1", sandbox.StatusCompleted, seed8Answer)
	if missing {
		h.eventually("the missing workflow said", h.commentContains(n, "not verified in CI: the workflow is missing"))
		return nil
	}
	h.eventually("both sides dispatched", func() bool { return len(h.gh.Dispatches()) >= 2 })
	return h.gh.Dispatches()
}

// ciRun plays the workflow run of a dispatch as GitHub Actions would: the
// workflow's own script, run with the inputs pitcrew sent and a mix that
// prints real ExUnit output (logs), its job's log, and its events.
func (h *harness) ciRun(d map[string]any, runID int64, conclusion string, logs ...string) {
	h.t.Helper()
	in, env := d["inputs"].(map[string]any), ciEnv(d)
	log := ""
	if len(logs) > 0 {
		var code int
		log, code = testenv.RunCIScript(h.t, testenv.CIStepScript(h.t, follow.CIWorkflow, "Run the test again and again"), env, logs...)
		if code != 0 {
			h.t.Fatalf("the workflow's script failed (%d):\n%s", code, log)
		}
	}
	h.gh.SetJob(runID, 1, runID+1000, "verify", conclusion, log)
	nonce, phase := fmt.Sprint(in["nonce"]), fmt.Sprint(in["phase"])
	h.deliver("workflow_run", testenv.DeliveryID(), testenv.VerifyRunEvent(h.t, runID, nonce, phase, "in_progress", ""))
	h.deliver("workflow_run", testenv.DeliveryID(), testenv.VerifyRunEvent(h.t, runID, nonce, phase, "completed", conclusion))
}

// ciEnv is the environment the workflow gives its script for a dispatch:
// each input, named in capitals.
func ciEnv(d map[string]any) map[string]string {
	env := map[string]string{}
	for k, v := range d["inputs"].(map[string]any) {
		env[strings.ToUpper(k)] = fmt.Sprint(v)
	}
	return env
}

var (
	baseFails  = []string{"fail_seed_8.txt", "pass_seed_2.txt", "fail_seed_4.txt", "pass_seed_5.txt", "fail_seed_1.txt"}
	headPasses = []string{"pass_seed_8.txt", "pass_seed_2.txt", "pass_seed_5.txt"}
)

// With flaky.verify: ci, the fix's pull request is verified by the team's
// own CI: pitcrew dispatches its workflow on the base and the head, reads
// both runs' logs and counts them itself. A redelivery changes nothing; a
// new push is verified again, once.
func TestAFixIsVerifiedInTheTeamsCI(t *testing.T) {
	h := newHarness(t, true)
	const head1, head2 = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	ds := h.fixToVerifyInCI(40, head1, false)
	if len(ds) != 2 {
		t.Fatalf("dispatches: %+v", ds)
	}
	base, head := ds[0], ds[1]
	bin, hin := base["inputs"].(map[string]any), head["inputs"].(map[string]any)
	if base["ref"] != "main" || bin["sha"] != testenv.BaseSHA || bin["phase"] != "before" || bin["seed"] != "8" || bin["test"] != flakyTest || bin["stop_after"] != "3" || bin["runs"] != "100" ||
		hin["sha"] != head1 || hin["phase"] != "after" || hin["runs"] != "5" || hin["nonce"] != bin["nonce"] {
		t.Fatalf("dispatches: %+v", ds)
	}
	h.commentSays(40, "verifying in CI (base: dispatched, head: dispatched)")
	// Never green before both sides are counted.
	h.eventually("the check run verifying", func() bool {
		c := h.evidenceRuns()[0]
		out, _ := c["output"].(map[string]any)
		return out["title"] == "Evidence: clean · verifying in CI" && c["conclusion"] == "neutral"
	})

	h.ciRun(base, 501, "success", baseFails...)
	h.commentSays(40, "(https://github.com/hexpm/hexpm/actions/runs/501), head: dispatched)")
	h.ciRun(head, 502, "success", headPasses...)
	h.commentSays(40, "verified in CI: base 3 of 5 failed (seed 8 failed), head 0 of 5 (5 needed for 95% confidence at the base's failure rate)")
	h.eventually("the check run's update", func() bool {
		out, _ := h.evidenceRuns()[0]["output"].(map[string]any)
		return out["title"] == "Evidence: clean · verified in CI"
	})
	check := h.evidenceRuns()[0]
	if out := check["output"].(map[string]any); check["conclusion"] != "success" || !strings.Contains(fmt.Sprint(out["summary"]), "### Verified in your CI") ||
		!strings.Contains(fmt.Sprint(out["summary"]), "| base | `"+testenv.BaseSHA[:12]+"` | 100 | 5 | 3 | [completed](https://github.com/hexpm/hexpm/actions/runs/501) |") {
		t.Fatalf("evidence check run: %+v", check)
	}

	// The completed event again, and another event of the same head:
	// nothing is written, nothing dispatched.
	writes := h.gh.Count("PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}")
	h.deliver("workflow_run", testenv.DeliveryID(), testenv.VerifyRunEvent(t, 502, fmt.Sprint(hin["nonce"]), "after", "completed", "success"))
	h.deliver("check_suite", testenv.DeliveryID(), testenv.CheckSuiteEvent(t, head1, "github-actions", "success", 1234))
	h.commentSays(40, "· CI passed")
	h.eventually("the redelivery handled", h.handled("workflow_run", 5))
	if n := h.gh.Count("PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}"); n != writes || len(h.gh.Dispatches()) != 2 {
		t.Fatalf("a redelivery wrote %d check runs, dispatched %d", n-writes, len(h.gh.Dispatches())-2)
	}

	// A push: the new head is verified, once.
	h.gh.SetPull(1234, head2, "open", false, diffSample(t, "flaky/real_fix_sync.diff"))
	h.deliver("pull_request", testenv.DeliveryID(), testenv.PullSyncEvent(t, 1234, head2))
	h.eventually("the new head dispatched", func() bool { return len(h.gh.Dispatches()) == 4 })
	if in := h.gh.Dispatches()[3]["inputs"].(map[string]any); in["sha"] != head2 || in["nonce"] == hin["nonce"] {
		t.Fatalf("the new head's dispatch: %+v", in)
	}
	h.deliver("pull_request", testenv.DeliveryID(), testenv.PullSyncEvent(t, 1234, head2))
	h.eventually("the push redelivered", h.handled("pull_request", 2))
	if n := len(h.gh.Dispatches()); n != 4 {
		t.Fatalf("%d dispatches: a head is verified once", n)
	}
}

// A verification in CI that cannot verify says why, and never shows green.
func TestAVerificationInCIThatCannotVerifySaysWhy(t *testing.T) {
	for _, tc := range []struct {
		name string
		play func(h *harness, ds []map[string]any)
		want string
		// start is how long a workflow run has to start (CIStartWithin)
		start time.Duration
	}{
		{"the base never fails", func(h *harness, ds []map[string]any) {
			h.ciRun(ds[0], 601, "success", "pass_seed_2.txt", "pass_seed_5.txt")
			h.ciRun(ds[1], 602, "success", headPasses...)
		}, "not verified in CI: the base never failed in 100 runs: the flake is not reproduced in CI (base 0 of 100 failed, head 0 of 5)", 0},
		{"the head fails", func(h *harness, ds []map[string]any) {
			h.ciRun(ds[0], 611, "success", baseFails...)
			h.ciRun(ds[1], 612, "success", "pass_seed_8.txt", "fail_seed_4.txt", "pass_seed_2.txt")
		}, "not verified in CI: the head failed: base 3 of 5 failed (seed 8 failed), head 1 of 5", 0},
		{"the workflow is missing", nil,
			"not verified in CI: the workflow is missing: add .github/workflows/pitcrew-verify.yml to the default branch (`pitcrew ci-workflow` prints it), then `/pitcrew retry`", 0},
		{"a run is cancelled", func(h *harness, ds []map[string]any) {
			h.ciRun(ds[0], 621, "cancelled")
			h.ciRun(ds[1], 622, "success", headPasses...)
		}, "not verified in CI: the base's workflow run was cancelled", 0},
		{"a run's set-up fails", func(h *harness, ds []map[string]any) {
			h.ciRun(ds[0], 631, "success", baseFails...)
			h.ciRun(ds[1], 632, "failure")
		}, "not verified in CI: the head's workflow run failed before it ran the test (its set-up failed)", 0},
		{"a run dies part way", func(h *harness, ds []map[string]any) {
			h.ciRun(ds[0], 671, "success", baseFails...)
			h.ciRun(ds[1], 672, "failure", headPasses...)
		}, "not verified in CI: the head's workflow run failed after 5 runs (a timeout or a lost runner): pitcrew counts a run that completed", 0},
		{"no run starts", func(*harness, []map[string]any) {}, "not verified in CI: the base's workflow run did not start within 2s", 2 * time.Second},
		// The base's events were lost: the deadline finds its run among the
		// workflow's runs and reads it.
		{"one run never starts, the other's events were lost", func(h *harness, ds []map[string]any) {
			log, _ := testenv.RunCIScript(h.t, testenv.CIStepScript(h.t, follow.CIWorkflow, "Run the test again and again"), ciEnv(ds[0]), baseFails...)
			h.gh.SetJob(651, 1, 1651, "verify", "success", log)
			h.gh.AddWorkflowRun(651, "pitcrew verify "+ciEnv(ds[0])["NONCE"]+" before", "completed", "success")
		}, "not verified in CI: the head's workflow run did not start within 2s", 2 * time.Second},
		{"a run never finishes", func(h *harness, ds []map[string]any) {
			h.ciRun(ds[0], 661, "success", baseFails...)
			h.deliver("workflow_run", testenv.DeliveryID(), testenv.VerifyRunEvent(h.t, 662, ciEnv(ds[1])["NONCE"], "after", "in_progress", ""))
		}, "not verified in CI: the head's workflow run did not finish within 4s", 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, true, func(o *Options) { o.CIStartWithin, o.CIRunWithin = tc.start, tc.start })
			ds := h.fixToVerifyInCI(41, "1111111111111111111111111111111111111111", tc.play == nil)
			if tc.play != nil {
				tc.play(h, ds)
			}
			h.commentSays(41, tc.want)
			h.eventually("the check run says so", func() bool {
				out, _ := h.evidenceRuns()[0]["output"].(map[string]any)
				return out["title"] == "Evidence: clean · not verified in CI"
			})
			if c := h.evidenceRuns()[0]; c["conclusion"] != "neutral" {
				t.Fatalf("evidence check run: %+v", c)
			}
		})
	}
}

// commentSays waits until issue n's status comment holds text, and shows
// the comment when it never does.
func (h *harness) commentSays(n int, text string) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !h.commentContains(n, text)() {
		if time.Now().After(deadline) {
			cs := h.gh.Comments("hexpm/hexpm", n)
			body := ""
			if len(cs) > 0 {
				body = cs[len(cs)-1].Body
			}
			h.t.Fatalf("issue #%d's comment never said %q:\n%s", n, text, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Without the workflow, the first verification says which file to add;
// once it is there, /pitcrew retry verifies again, and starts no new fix.
func TestRetryVerifiesAgainOnceTheWorkflowIsThere(t *testing.T) {
	h := newHarness(t, true)
	h.fixToVerifyInCI(42, "1111111111111111111111111111111111111111", true)
	if n := len(h.gh.Dispatches()); n != 0 {
		t.Fatalf("%d dispatches without the workflow", n)
	}
	h.gh.SetFile("hexpm/hexpm", ".github/workflows/"+follow.CIWorkflowFile, follow.CIWorkflow)
	h.deliver("issue_comment", testenv.DeliveryID(), testenv.CommentEvent(t, "alice", 42, 9101, "/pitcrew retry", false))
	h.commentSays(42, "verifying in CI (base: dispatched, head: dispatched)")
	if n, sessions := len(h.gh.Dispatches()), h.sandbox.SessionCount(); n != 2 || sessions != 1 {
		t.Fatalf("%d dispatches, %d sessions", n, sessions)
	}
}

// GitHub faults degrade the verification visibly and never lose it: a
// check run whose update fails once gets the result on the retry; a
// dispatch GitHub fails says so, and /pitcrew retry verifies again without
// starting the fix again.
func TestAVerificationInCIOutlivesGitHubFaults(t *testing.T) {
	h := newHarness(t, true)
	ds := h.fixToVerifyInCI(43, "1111111111111111111111111111111111111111", false)
	h.ciRun(ds[0], 701, "success", baseFails...)
	h.gh.FailOn("PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}", 502, nil, 4) // past the client's own retries: the task's
	h.ciRun(ds[1], 702, "success", "pass_seed_8.txt", "fail_seed_4.txt", "pass_seed_2.txt")
	h.eventually("the result on the check run after the retry", func() bool {
		out, _ := h.evidenceRuns()[0]["output"].(map[string]any)
		return out["title"] == "Evidence: clean · not verified in CI"
	})

	h2 := newHarness(t, true)
	h2.gh.FailOn("POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", 502, nil, 1)
	h2.gh.SetFile("hexpm/hexpm", ".github/pitcrew.yml", ciConfig)
	h2.gh.SetFile("hexpm/hexpm", ".github/workflows/"+follow.CIWorkflowFile, follow.CIWorkflow)
	h2.gh.SetPull(1234, "1111111111111111111111111111111111111111", "open", false, diffSample(t, "flaky/real_fix_sync.diff"))
	h2.startOne(44)
	h2.sandbox.AddArtifact("ses_1", "pitcrew-evidence.log", runLogSample(t, "backed.log"))
	h2.finish("ses_1", sandbox.StatusCompleted, seed8Answer)
	h2.eventually("the head dispatched", func() bool { return len(h2.gh.Dispatches()) == 1 })
	h2.ciRun(h2.gh.Dispatches()[0], 711, "success", headPasses...)
	h2.commentSays(44, "not verified in CI: the base's workflow run was not started: GitHub did not take the dispatch (it answered 502)")
	h2.deliver("issue_comment", testenv.DeliveryID(), testenv.CommentEvent(t, "alice", 44, 9201, "/pitcrew retry", false))
	h2.eventually("dispatched again", func() bool { return len(h2.gh.Dispatches()) == 3 })
	if n := h2.sandbox.SessionCount(); n != 1 {
		t.Fatalf("%d sessions: a retry of the verification starts no fix", n)
	}
}
