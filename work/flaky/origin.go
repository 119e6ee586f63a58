package flaky

import (
	"context"
	"strings"

	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/internal/github"
)

// CommitOrigin is what a CI event says about where the commit it tested
// came from. A fork's pull request runs the fork's code, and a fork's
// author controls its test output: only commits of the repository itself
// may start runs, which the repository pays for.
type CommitOrigin struct {
	RepoID       int64  // the repository the event is about
	RepoFullName string // owner/name
	// HeadRepo is the repository the commit was pushed to (workflow_run's
	// head_repository), "" when the event does not name one.
	HeadRepo string
	// HeadBranch is the branch the CI ran on, "" when the event names none.
	HeadBranch string
	// PullHeadRepoIDs are the head repositories of the pull requests the
	// event names (GitHub lists only pull requests whose head is the commit).
	PullHeadRepoIDs []int64
}

// Ownership is the answer CommitOrigin.Ownership gives.
type Ownership int

// The answers of CommitOrigin.Ownership.
const (
	NotOurs Ownership = iota
	Ours
	// OursIfOnBranch: the event names only a branch; the commit is ours if
	// it is on that branch of the repository (GitHub must be asked).
	OursIfOnBranch
)

// Ownership decides, from the event alone, whether the commit is the
// repository's own. It is the one rule for every CI signal.
func (o CommitOrigin) Ownership() Ownership {
	if o.HeadRepo != "" {
		if strings.EqualFold(o.HeadRepo, o.RepoFullName) {
			return Ours
		}
		return NotOurs
	}
	for _, id := range o.PullHeadRepoIDs {
		if o.RepoID > 0 && id == o.RepoID {
			return Ours
		}
	}
	if o.HeadBranch != "" {
		return OursIfOnBranch
	}
	return NotOurs
}

// IsOurs answers Ownership, asking GitHub whether sha is on the
// named branch when the event alone cannot tell.
func IsOurs(ctx context.Context, gh github.Client, repo github.Repo, o CommitOrigin, sha string) (bool, error) {
	ours := o.Ownership() == Ours
	if o.Ownership() == OursIfOnBranch {
		var err error
		if ours, err = gh.CommitOnBranch(ctx, repo, o.HeadBranch, sha); err != nil {
			return false, err
		}
	}
	if !ours {
		zerolog.Ctx(ctx).Info().Str("branch", o.HeadBranch).Str("head_repo", o.HeadRepo).
			Msg("ignoring the CI signal: its commit is on no branch of this repository (a fork's pull request?)")
	}
	return ours, nil
}
