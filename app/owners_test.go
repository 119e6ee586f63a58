package app

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/sandbox"
)

// A test seen flaking in CI: the check run, its tracking issue and the
// dashboard name its file's owners (CODEOWNERS), and the fix's pull request
// asks them to review it; without CODEOWNERS, its last committer is named
// and no one is pinged or asked.
func TestAFlakesOwnersAreNamedAndAsked(t *testing.T) {
	for _, tc := range []struct {
		name, codeowners           string
		checkRun, issue, dashboard string
		reviewers, teamReviewers   []any
	}{
		{"CODEOWNERS", "* @hexpm/core\ntest/ @hexpm/payments @alice\n",
			"Owners: `@hexpm/payments`, `@alice`.", "- Owners: @hexpm/payments, @alice", "  - Owners: `@hexpm/payments`, `@alice`.",
			[]any{"alice"}, []any{"payments"}},
		{"no CODEOWNERS", "",
			"Last changed by `bob` (no CODEOWNERS line names its owners).", "- Last changed by `bob` (no CODEOWNERS line names its owners)", "  - Last changed by `bob`", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, true, func(o *Options) { o.DashboardEvery = time.Second })
			h.gh.SetFile("hexpm/hexpm", ".github/pitcrew.yml", "flaky:\n  track_issues: true\n")
			if tc.codeowners != "" {
				h.gh.SetFile("hexpm/hexpm", ".github/CODEOWNERS", tc.codeowners)
			}
			h.gh.SetCommitter("hexpm/hexpm", "test/racy_b_test.exs", "bob")
			h.gh.SetJob(111, 1, 11, "test", "failure", testenv.ExUnitLog(t, "gha_fail_seed_1.txt"))
			h.gh.SetJob(111, 2, 110, "test", "success", testenv.ExUnitLog(t, "gha_pass_seed_2.txt"))
			h.deliver("workflow_run", testenv.DeliveryID(), testenv.RerunPassedEvent(t, 111, testenv.HeadSHA))
			h.eventually("the check run", func() bool {
				for _, c := range h.checkRunsNamed(publish.CheckRunName) {
					if strings.Contains(fmt.Sprint(c["output"]), tc.checkRun) {
						return true
					}
				}
				return false
			})
			h.eventually("the tracking issue and the dashboard", func() bool {
				issue, dashboard := false, false
				for _, is := range h.gh.Issues() {
					body, _ := is["body"].(string)
					issue = issue || strings.HasPrefix(fmt.Sprint(is["title"]), "Flaky test: ") && strings.Contains(body, tc.issue)
					dashboard = dashboard || strings.Contains(body, publish.DashboardMarker) && strings.Contains(body, tc.dashboard)
				}
				return issue && dashboard
			})

			h.gh.SetPull(1301, strings.Repeat("1", 40), "open", false, diffSample(t, "flaky/real_fix_sync.diff"))
			h.finish("ses_1", sandbox.StatusCompleted, "Fixed.\n```json\n"+`{"outcome": "fixed", "pr_url": "https://github.com/hexpm/hexpm/pull/1301", "cause": "A shared application env.", "seed": 1, "failures_before": 1, "failures_after": 0, "runs": 6}`+"\n```")
			h.eventually("the pull request followed", func() bool { return len(h.evidenceRuns()) == 1 })
			if tc.reviewers == nil {
				h.eventually("the outcome shown", h.handled("workflow_run", 1))
				if asks := h.gh.ReviewRequests(); len(asks) != 0 {
					t.Fatalf("review asked without CODEOWNERS: %v", asks)
				}
				return
			}
			h.eventually("the owners asked", func() bool { return len(h.gh.ReviewRequests()) > 0 })
			asks := h.gh.ReviewRequests()
			if len(asks) != 1 || asks[0]["number"] != 1301 || !reflect.DeepEqual(asks[0]["reviewers"], tc.reviewers) || !reflect.DeepEqual(asks[0]["team_reviewers"], tc.teamReviewers) {
				t.Fatalf("review requests: %v", asks)
			}
		})
	}
}
