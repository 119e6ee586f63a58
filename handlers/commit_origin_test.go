package handlers

import (
	"fmt"
	"strings"
	"testing"
)

func TestCommitOriginOwnership(t *testing.T) {
	const repoID = 186853002
	for _, tc := range []struct {
		name   string
		origin CommitOrigin
		want   Ownership
	}{
		{"a workflow run pushed to the repository itself", CommitOrigin{RepoID: repoID, RepoFullName: "hexpm/hexpm", HeadRepo: "hexpm/hexpm", HeadBranch: "main"}, Ours},
		{"the head repository's name in another case", CommitOrigin{RepoID: repoID, RepoFullName: "hexpm/hexpm", HeadRepo: "HexPM/Hexpm"}, Ours},
		{"a workflow run on a fork's pull request", CommitOrigin{RepoID: repoID, RepoFullName: "hexpm/hexpm", HeadRepo: "mallory/hexpm", HeadBranch: "main", PullHeadRepoIDs: []int64{repoID}}, NotOurs},
		{"a check run naming a pull request of the repository", CommitOrigin{RepoID: repoID, RepoFullName: "hexpm/hexpm", HeadBranch: "changes", PullHeadRepoIDs: []int64{repoID}}, Ours},
		{"a check run naming only a fork's pull request", CommitOrigin{RepoID: repoID, RepoFullName: "hexpm/hexpm", PullHeadRepoIDs: []int64{99}}, NotOurs},
		{"a check run on a branch and no pull request", CommitOrigin{RepoID: repoID, RepoFullName: "hexpm/hexpm", HeadBranch: "main"}, OursIfOnBranch},
		{"a fork's pull request named by a branch of the same name", CommitOrigin{RepoID: repoID, RepoFullName: "hexpm/hexpm", HeadBranch: "main", PullHeadRepoIDs: []int64{99}}, OursIfOnBranch},
		{"a check suite with no head branch and no pull request", CommitOrigin{RepoID: repoID, RepoFullName: "hexpm/hexpm"}, NotOurs},
		{"an event without a repository id cannot match pull requests", CommitOrigin{RepoFullName: "hexpm/hexpm", PullHeadRepoIDs: []int64{0}}, NotOurs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.origin.Ownership(); got != tc.want {
				t.Fatalf("got %d, want %d", got, tc.want)
			}
		})
	}
}

// forkCheckEvent is a CircleCI check that passed on a fork's pull request:
// GitHub names no pull request of the repository and, for a fork, no head
// branch; branch, when given, is set on the suite instead.
func forkCheckEvent(t testing.TB, id int64, sha, name, branch string) []byte {
	return example(t, "check_run.completed.json", func(ev map[string]any) {
		c := ev["check_run"].(map[string]any)
		c["id"], c["conclusion"], c["head_sha"], c["name"] = id, "success", sha, name
		c["app"].(map[string]any)["slug"] = "circleci-checks"
		c["output"] = map[string]any{"title": "Tests passed", "summary": "Tests passed", "text": fixture(t, "pass_seed_2.txt"), "annotations_count": 0, "annotations_url": "https://api.github.com/repos/hexpm/hexpm/check-runs/1/annotations"}
		c["pull_requests"] = []any{}
		suite := c["check_suite"].(map[string]any)
		suite["pull_requests"] = []any{}
		suite["head_branch"] = nil
		if branch != "" {
			suite["head_branch"] = branch
		}
	})
}

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
	h.gh.AddCheckRun(headSHA, "ci/test", "failure", "Tests failed", manyFailures(500))
	h.deliver("check_run", newDeliveryID(), forkCheckEvent(t, 9001, headSHA, "ci/test", ""))
	h.eventually("the delivery handled", func() bool { return strings.Count(h.logs.String(), "delivery handled") == 1 })
	if h.sandbox.SessionCount() != 0 || len(h.gh.Issues()) != 0 || len(h.gh.CheckRuns()) != 0 || len(h.gh.Requests()) != 0 {
		t.Fatalf("%d sessions, %d issues, %d check runs, %d GitHub calls", h.sandbox.SessionCount(), len(h.gh.Issues()), len(h.gh.CheckRuns()), len(h.gh.Requests()))
	}
}

func TestCheckRunOnABranchCountsOnlyIfTheCommitIsOnIt(t *testing.T) {
	h := newHarness(t, true)
	h.gh.SetBranch("hexpm/hexpm", "feature/login", strings.Repeat("1", 40), headSHA)
	other := strings.Repeat("d", 40)
	h.gh.AddCheckRun(other, "ci/test", "failure", "Tests failed", fixture(t, "fail_seed_4.txt"))
	// A fork's branch of the same name: its commit is not on ours.
	h.deliver("check_run", newDeliveryID(), forkCheckEvent(t, 9001, other, "ci/test", "feature/login"))
	h.eventually("the delivery handled", func() bool { return strings.Count(h.logs.String(), "delivery handled") == 1 })
	if h.sandbox.SessionCount() != 0 || h.gh.Count("GET /repos/{owner}/{repo}/compare/{basehead}") != 1 {
		t.Fatalf("%d sessions for a commit on no branch of ours", h.sandbox.SessionCount())
	}
	h.gh.AddCheckRun(headSHA, "ci/test", "failure", "Tests failed", fixture(t, "fail_seed_4.txt"))
	h.deliver("check_run", newDeliveryID(), forkCheckEvent(t, 9002, headSHA, "ci/test", "feature/login"))
	h.eventually("the fix run", func() bool { return h.sandbox.SessionCount() == 1 })
}

func TestRerunOfAForkPullRequestStartsNothing(t *testing.T) {
	h := newHarness(t, true)
	h.gh.SetJob(111, 1, 11, "test", "failure", fixture(t, "gha_fail_seed_1.txt"))
	h.gh.SetJob(111, 2, 110, "test", "success", fixture(t, "gha_pass_seed_2.txt"))
	payload := example(t, "workflow_run.completed.json", func(ev map[string]any) {
		run := ev["workflow_run"].(map[string]any)
		run["id"], run["run_attempt"], run["conclusion"], run["head_sha"] = 111, 2, "success", headSHA
		run["head_repository"].(map[string]any)["full_name"] = "mallory/hexpm"
	})
	h.deliver("workflow_run", newDeliveryID(), payload)
	h.eventually("the delivery handled", func() bool { return strings.Count(h.logs.String(), "delivery handled") == 1 })
	if h.sandbox.SessionCount() != 0 || len(h.gh.Requests()) != 0 {
		t.Fatalf("%d sessions, %d GitHub calls", h.sandbox.SessionCount(), len(h.gh.Requests()))
	}
}
