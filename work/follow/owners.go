package follow

import (
	"context"
	"errors"

	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/exunit"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/flaky"
)

// askOwners asks the owners of a flaky fix's test file (CODEOWNERS'
// users, and teams of the repository's owner) to review the pull request
// the fix opened, once. A repository without CODEOWNERS asks no one: its
// last committer is named on the tracking issue and dashboard, not pinged.
// What GitHub refuses (an owner without access) is logged, not retried.
func askOwners(ctx context.Context, b *work.Env, gh github.Client, run runs.Run) (runs.Run, error) {
	p := run.PR
	if run.Kind != runs.KindFlaky || p == nil || p.State != runs.PullOpen || p.OwnersAsked {
		return run, nil
	}
	ref, err := exunit.ParseTestRef(run.About)
	repo, rerr := github.ParseRepo(run.Repo)
	if err != nil || rerr != nil {
		return run, nil
	}
	listed, err := flaky.ListedOwners(ctx, b, gh, repo, ref.Path)
	if err != nil {
		return run, err
	}
	if users, teams := flaky.Reviewers(flaky.Owners{Listed: listed}, repo); len(users)+len(teams) > 0 {
		err = gh.RequestReviewers(ctx, repo, p.Number, users, teams)
		if github.StatusOf(err) == 422 && len(teams) > 0 && len(users) > 0 {
			// One reviewer GitHub refuses refuses them all: a team the app
			// cannot see is the likeliest; the users are asked alone.
			err = gh.RequestReviewers(ctx, repo, p.Number, users, nil)
		}
		if status := github.StatusOf(err); status == 422 || status == 403 || errors.Is(err, github.ErrPullGone) {
			zerolog.Ctx(ctx).Warn().Err(err).Msg("GitHub refused the review request of the test file's owners; not asked again")
		} else if err != nil {
			return run, err
		}
	}
	return Read(ctx, b, gh, run.Repo, run.ID, p.Number, News{Apply: func(p *runs.Pull) { p.OwnersAsked = true }})
}
