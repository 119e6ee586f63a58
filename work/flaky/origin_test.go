package flaky

import "testing"

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
