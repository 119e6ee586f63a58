package app

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/sandbox"
)

// seed8Answer claims what backed.log shows: seed 8 failed, 2 of 4 runs.
var seed8Answer = "Seed 8 failed.\n```json\n" +
	`{"outcome": "fixed", "pr_url": "https://github.com/hexpm/hexpm/pull/1234", "cause": "A race on the search index.", "seed": 8, "failures_before": 2, "failures_after": 0, "runs": 6}` +
	"\n```"

// callsSince counts GitHub's calls since the first n, by operation,
// installation tokens aside.
func (h *harness) callsSince(n int) map[string]int {
	got := map[string]int{}
	for _, r := range h.gh.Requests()[n:] {
		if !strings.HasSuffix(r.Operation, "/access_tokens") {
			got[r.Method+" "+r.Operation]++
		}
	}
	return got
}

func runLogSample(t *testing.T, name string) string {
	b, err := os.ReadFile(testenv.Path("evidence", "testdata", "runlogs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// verifyPrompt is the prompt of the second session: the
// verification of the fix's head.
func (h *harness) verifyPrompt() string {
	h.t.Helper()
	h.eventually("the verification session", func() bool { return h.sandbox.SessionCount() == 2 })
	reqs, keys := h.sandbox.StartRequests()
	for i, r := range reqs {
		if strings.HasPrefix(keys[i], "verify:") {
			return r.Input
		}
	}
	h.t.Fatalf("no verification start among %v", keys)
	return ""
}

// Once the fix's pull request has a head, a separate session runs the test
// with the failing seed on its base and head, then the after-loop;
// pitcrew reads its log and shows the result on the evidence check run
// and the issue. It runs once per head, and counts toward the daily limit.
func TestAFixIsVerifiedIndependentlyOnItsPullRequest(t *testing.T) {
	for _, tc := range []struct {
		name, log, line, title, conclusion string
	}{
		{"it agrees", "verify_agrees.log", "independent verification: red on base with seed 8, green on head, 0 of 5 after · ✔️ agrees with the fix",
			"Evidence: clean · verified", "success"},
		{"the seed passes on the base", "verify_base_green.log", "independent verification: green on base with seed 8, green on head, 0 of 2 after · ⚠️ concern: it disagrees with the fix",
			"Evidence: clean · the verification disagrees", "neutral"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, true)
			h.gh.SetFile("hexpm/hexpm", ".github/pitcrew.yml", "flaky:\n  verify_runs: 1\n")
			const head = "1111111111111111111111111111111111111111"
			h.gh.SetPull(1234, head, "open", false, diffSample(t, "flaky/real_fix_sync.diff"))
			h.startOne(33)
			h.sandbox.AddArtifact("ses_1", "pitcrew-evidence.log", runLogSample(t, "backed.log"))
			start := len(h.gh.Requests())
			h.finish("ses_1", sandbox.StatusCompleted, seed8Answer)
			prompt := h.verifyPrompt()
			for _, want := range []string{"pull\nrequest #1234", "git checkout " + head, "git checkout " + testenv.BaseSHA,
				"mix test " + flakyTest + " --seed 8", "has run 5 times on the head"} {
				if !strings.Contains(prompt, want) {
					t.Fatalf("verification prompt lacks %q:\n%s", want, prompt)
				}
			}
			h.eventually("the verification running", h.commentContains(33, "independent verification: running"))
			// Starting the verification costs no GitHub call beyond following
			// the pull request (its two changed files read at base and head, the
			// default branch's tests scanned for siblings of the removed sleep,
			// CODEOWNERS looked for where GitHub looks, for the test file's
			// owners): the run's outcome, with it, is one edit.
			calls := h.callsSince(start)
			if want := map[string]int{"GET /repos/{owner}/{repo}/pulls/{pull_number}": 2, "GET /repos/{owner}/{repo}/commits/{ref}/check-suites": 1, "GET /repos/{owner}/{repo}/contents/{path}": 4 + 3, "GET /repos/{owner}/{repo}/tarball/{ref}": 1,
				"POST /repos/{owner}/{repo}/check-runs": 1, "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}": 1}; !reflect.DeepEqual(calls, want) {
				t.Fatalf("GitHub calls for the fix's outcome and the verification's start: %v, want %v", calls, want)
			}
			before := len(h.gh.Requests())

			h.sandbox.AddArtifact("ses_2", "pitcrew-evidence.log", runLogSample(t, tc.log))
			h.finish("ses_2", sandbox.StatusCompleted, "Ran it.")
			h.eventually("the verification's result", h.commentContains(33, tc.line))
			// The comment is written first, then the check run.
			h.eventually("the check run's update", func() bool {
				checks := h.evidenceRuns()
				out, _ := checks[0]["output"].(map[string]any)
				return out["title"] == tc.title
			})
			checks := h.evidenceRuns()
			if len(checks) != 1 || checks[0]["conclusion"] != tc.conclusion {
				t.Fatalf("evidence check runs: %+v", checks)
			}
			if out, _ := checks[0]["output"].(map[string]any); out["title"] != tc.title || !strings.Contains(fmt.Sprint(out["summary"]), "### Independent verification") ||
				!strings.Contains(fmt.Sprint(out["summary"]), "Measured in the run's log: 2 of 4 runs failed before the fix (seeds `4`, `8`), 0 of 6 after") {
				t.Fatalf("evidence output: %+v", out)
			}
			got := h.callsSince(before)
			t.Logf("GitHub calls for the verification's result: %v", got)
			// The pull request (its head and what GitHub counts of it), its
			// diff and its two files at base and head, to write the check run
			// again with the result.
			if got["GET /repos/{owner}/{repo}/pulls/{pull_number}"] != 2 || got["GET /repos/{owner}/{repo}/contents/{path}"] != 4 || got["PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}"] != 1 || got["PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}"] != 1 || len(got) != 4 {
				t.Fatalf("GitHub calls for the verification's result: %v", got)
			}

			// Events of the same head start no second verification.
			h.deliver("check_suite", testenv.DeliveryID(), testenv.CheckSuiteEvent(t, head, "github-actions", "success", 1234))
			h.eventually("CI passed", h.commentContains(33, "· CI passed"))
			if n := h.sandbox.SessionCount(); n != 2 {
				t.Fatalf("%d sessions: a head is verified once", n)
			}
		})
	}
}

// A verification is a run like any other: past the daily limit it does not
// start, and says so; a repository that turned it off gets none.
func TestAVerificationCountsTowardTheDailyLimitAndCanBeTurnedOff(t *testing.T) {
	for _, tc := range []struct{ config, want string }{
		{"daily_limit: 1\n", "independent verification: not verified independently: the daily limit of 1 runs for this repository is reached"},
		{"flaky:\n  verify: \"off\"\n", ""},
	} {
		h := newHarness(t, true)
		h.gh.SetFile("hexpm/hexpm", ".github/pitcrew.yml", tc.config)
		h.gh.SetPull(1234, "1111111111111111111111111111111111111111", "open", false, diffSample(t, "flaky/real_fix_sync.diff"))
		h.startOne(34)
		h.finish("ses_1", sandbox.StatusCompleted, seed8Answer)
		h.eventually("the pull request followed", h.commentContains(34, "evidence: clean"))
		if body := h.statusComment(34).Body; tc.want != "" && !strings.Contains(body, tc.want) || tc.want == "" && strings.Contains(body, "independent verification") {
			t.Fatalf("config %q: status comment:\n%s", tc.config, body)
		}
		if n := h.sandbox.SessionCount(); n != 1 {
			t.Fatalf("config %q: %d sessions", tc.config, n)
		}
	}
}

// A push while the verification runs: the new head gets its own, and the
// old one's result, which no longer says anything of the pull request, is
// not shown.
func TestAVerificationOfAReplacedHeadIsNotShown(t *testing.T) {
	h := newHarness(t, true)
	const head1, head2 = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	h.gh.SetPull(1234, head1, "open", false, diffSample(t, "flaky/real_fix_sync.diff"))
	h.startOne(35)
	h.finish("ses_1", sandbox.StatusCompleted, seed8Answer)
	h.verifyPrompt()
	h.gh.SetPull(1234, head2, "open", false, diffSample(t, "flaky/real_fix_sync.diff"))
	h.deliver("pull_request", testenv.DeliveryID(), testenv.PullSyncEvent(t, 1234, head2))
	h.eventually("the new head's verification", func() bool { return h.sandbox.SessionCount() == 3 })
	h.eventually("the new head's verification shown", h.handled("pull_request", 1))
	checks := len(h.gh.Requests())

	h.sandbox.AddArtifact("ses_2", "pitcrew-evidence.log", runLogSample(t, "verify_agrees.log"))
	h.finish("ses_2", sandbox.StatusCompleted, "Ran it.")
	h.eventually("the old verification handled", func() bool {
		return strings.Contains(h.logs.String(), "the verification ended after its head was replaced")
	})
	if body := h.statusComment(35).Body; !strings.Contains(body, "independent verification: running") {
		t.Fatalf("status comment:\n%s", body)
	}
	for _, r := range h.gh.Requests()[checks:] {
		if r.Method != "GET" && !strings.HasSuffix(r.Operation, "/access_tokens") {
			t.Fatalf("the old head's result wrote %s %s", r.Method, r.Operation)
		}
	}
}

// A fix that names the test polluting its own: the independent
// verification checks the pair, and the status comment says proven, with
// the counts, or claimed, with what is missing.
func TestAPollutingPairIsProvenOrShownClaimed(t *testing.T) {
	polluterAnswer := "Seed 8 failed.\n```json\n" +
		`{"outcome": "fixed", "pr_url": "https://github.com/hexpm/hexpm/pull/1234", "cause": "A shared application env.", "seed": 8, "failures_before": 2, "failures_after": 0, "runs": 6, "polluter": {"test": "test/racy_b_test.exs:25", "seed": 8, "shares": "the :mode key of Application env"}}` +
		"\n```"
	for _, tc := range []struct{ log, want string }{
		{"verify_polluter.log", "Polluted by `test/racy_b_test.exs:25` (shares the :mode key of Application env): proven: 5 of 5 red on base, 0 of 5 alone, 0 of 5 on head"},
		{"verify_polluter_alone_fails.log", "Polluted by `test/racy_b_test.exs:25` (shares the :mode key of Application env): claimed, not proven: the test alone failed 5 of 5 times: it fails without the polluter"},
	} {
		t.Run(tc.log, func(t *testing.T) {
			h := newHarness(t, true)
			h.gh.SetFile("hexpm/hexpm", ".github/pitcrew.yml", "flaky:\n  verify_runs: 1\n")
			h.gh.SetPull(1234, "1111111111111111111111111111111111111111", "open", false, diffSample(t, "flaky/real_fix_sync.diff"))
			// The test the samples' real output shows failing.
			const victim = "test/racy_a_test.exs:14"
			h.deliver("issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky", "alice", 36, "Flaky test", victim))
			h.eventually("the run to start", h.commentContains(36, "the agent is working on it"))
			h.sandbox.AddArtifact("ses_1", "pitcrew-evidence.log", runLogSample(t, "backed.log"))
			h.finish("ses_1", sandbox.StatusCompleted, polluterAnswer)
			if prompt := h.verifyPrompt(); !strings.Contains(prompt, "`mix test test/racy_b_test.exs:25 "+victim+" --seed 8` 5 times (phase `pair_base`)") {
				t.Fatalf("the verification does not check the pair:\n%s", prompt)
			}
			h.eventually("the claim shown", h.commentContains(36, "claimed by the fix; the independent verification checks the pair"))
			h.sandbox.AddArtifact("ses_2", "pitcrew-evidence.log", runLogSample(t, tc.log))
			h.finish("ses_2", sandbox.StatusCompleted, "Ran it.")
			h.eventually("the pair's verdict", h.commentContains(36, tc.want))
		})
	}
}
