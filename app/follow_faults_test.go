package app

import (
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/sandbox"
)

// The faults GitHub shows in production, each on one read or write that
// following the agent's pull request makes, and what the reviewer then
// sees: never a green check on what pitcrew did not read whole, never
// nothing at all.
func TestFollowingThePullRequestFailsClosed(t *testing.T) {
	const (
		head     = "1111111111111111111111111111111111111111"
		diffRead = "GET /repos/{owner}/{repo}/pulls/{pull_number} (diff)"
	)
	clean := diffSample(t, "flaky/real_fix_sync.diff")
	sleep := diffSample(t, "flaky/sleep_added.diff")
	lines := strings.Split(strings.TrimRight(clean, "\n"), "\n")
	cut := strings.Join(lines[:len(lines)-3], "\n") + "\n"
	binary := "diff --git a/priv/static/logo.png b/priv/static/logo.png\nindex 1a2b3c4..5d6e7f8 100644\nBinary files a/priv/static/logo.png and b/priv/static/logo.png differ\n"
	for _, c := range []struct {
		name  string
		diff  string           // the change GitHub counts (and serves, unless served is set)
		fault func(h *harness) // what goes wrong
		shown string           // on the status comment
		title string           // of the evidence check run ("" when there is none)
		conc  string           // its conclusion
		more  func(*harness)   // further checks
	}{
		{name: "nothing goes wrong", diff: clean, shown: "evidence: clean", title: "Evidence: clean", conc: "success"},
		{name: "the diff answers 404 while the pull request reads fine", diff: clean,
			fault: func(h *harness) { h.gh.FailOn(diffRead, 404, nil, 1) },
			shown: "evidence: not checked: GitHub answered 404 for the diff", title: "Evidence: not checked: GitHub answered 404 for the diff", conc: "neutral"},
		{name: "the diff answers 403", diff: clean,
			fault: func(h *harness) { h.gh.FailOn(diffRead, 403, nil, 1) },
			shown: "evidence: not checked: GitHub answered 403 for the diff", title: "GitHub answered 403", conc: "neutral"},
		{name: "the diff comes back empty", diff: clean,
			fault: func(h *harness) { h.gh.SetPullDiff(1234, "") },
			shown: "evidence: not read whole: the diff GitHub sent holds 0 files (+0 −0); the pull request counts 2", title: "not read whole", conc: "neutral"},
		{name: "the diff is cut short", diff: clean,
			fault: func(h *harness) { h.gh.SetPullDiff(1234, cut) },
			shown: "evidence: not read whole: the diff was cut short", title: "not read whole: the diff was cut short", conc: "neutral"},
		{name: "the diff leaves out a file, its concern with it", diff: clean + sleep,
			fault: func(h *harness) { h.gh.SetPullDiff(1234, clean) },
			shown: "evidence: not read whole: the diff GitHub sent holds 2 files", title: "not read whole", conc: "neutral"},
		{name: "only binary files", diff: binary,
			shown: "evidence: not checked: the diff holds only binary files (1)", title: "only binary files", conc: "neutral"},
		{name: "the head's check suites answer 403", diff: clean,
			fault: func(h *harness) { h.gh.FailOn("GET /repos/{owner}/{repo}/commits/{ref}/check-suites", 403, nil, 1) },
			shown: "CI not read (GitHub answered 403) · evidence: clean", title: "Evidence: clean", conc: "success"},
		{name: "the check run's create fails once", diff: sleep,
			fault: func(h *harness) { h.gh.FailOn("POST /repos/{owner}/{repo}/check-runs", 502, nil, 1) },
			shown: "evidence: 1 concern", title: "Evidence: 1 concern", conc: "neutral"},
		{name: "the diff answers 502 on every try of the first attempt", diff: clean,
			fault: func(h *harness) { h.gh.FailOn(diffRead, 502, nil, 4) },
			shown: "not read yet: GitHub did not answer (it answered 502); pitcrew tries again", title: "Evidence: clean", conc: "success",
			more: func(h *harness) {
				h.eventually("read on the retry", h.commentContains(30, "evidence: clean"))
			}},
		{name: "the pull request answers 403", diff: clean,
			fault: func(h *harness) { h.gh.FailOn("GET /repos/{owner}/{repo}/pulls/{pull_number}", 403, nil, 1) },
			shown: "[PR #1234](https://github.com/hexpm/hexpm/pull/1234) not read yet: GitHub answered 403 for the pull request."},
		{name: "the answer names a fork's pull request", diff: sleep,
			fault: func(h *harness) { h.gh.SetPullHeadRepo(1234, "mallory/hexpm") },
			shown: "is not the agent's pull request: its head is in another repository, `mallory/hexpm`",
			more: func(h *harness) {
				// Its events and its comments reach no run.
				before := len(h.gh.Requests())
				h.deliver("pull_request", testenv.DeliveryID(), testenv.PullSyncEvent(t, 1234, "3333333333333333333333333333333333333333"))
				h.eventually("the push handled", h.handled("pull_request", 1))
				if n := len(h.gh.Requests()) - before; n != 0 {
					t.Fatalf("%d GitHub calls for a push to a pull request that is not the agent's", n)
				}
			}},
		{name: "the answer names a pull request whose fork is gone", diff: sleep,
			fault: func(h *harness) { h.gh.SetPullHeadRepo(1234, "") },
			shown: "is not the agent's pull request: its head is in a repository that no longer exists"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, true)
			h.gh.SetPull(1234, head, "open", false, c.diff)
			h.gh.SetHeadSuite(head, "github-actions", "")
			if c.fault != nil {
				c.fault(h)
			}
			h.startOne(30)
			h.finish("ses_1", sandbox.StatusCompleted, fixedAnswer)
			h.eventually("the outcome with the pull request", h.commentContains(30, c.shown))
			if c.more != nil {
				c.more(h)
			}
			checks := h.evidenceRuns()
			if c.title == "" {
				if len(checks) != 0 {
					t.Fatalf("evidence check runs on a pull request not followed: %+v", checks)
				}
			} else {
				out, _ := checks[0]["output"].(map[string]any)
				if len(checks) != 1 || checks[0]["conclusion"] != c.conc || !strings.Contains(out["title"].(string), c.title) {
					t.Fatalf("evidence check runs: %+v", checks)
				}
			}
		})
	}
}
