package profiling

import (
	"context"
	"errors"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/flaky"
)

// PullHead starts the profiling run of an open pull request's head
// (/pitcrew profile), keyed by that commit, so the report is there before
// the change ships; a new head is a new run. It answers only when it
// starts nothing: the report shows in the pull request's status comment.
// A pull request whose head is not in the repository itself (a fork's, or
// one whose fork was deleted) is refused: the session would run its
// migrations with pitcrew's credentials.
func PullHead(ctx context.Context, b *work.Env, gh github.Client, inst int64, repo github.Repo, number int, delivery string) (string, error) {
	pr, err := gh.PullRequest(ctx, repo, number)
	if errors.Is(err, github.ErrPullGone) {
		return "Nothing was started: this pull request no longer exists.", nil
	}
	if err != nil {
		return "", err
	}
	if pr.Merged {
		return "Nothing was started: `/pitcrew profile` profiles an open pull request before it merges, and this one is merged (its merge was profiled if it changed migrations).", nil
	}
	if pr.State != "open" || !github.ValidSHA(pr.HeadSHA) {
		return "Nothing was started: `/pitcrew profile` profiles an open pull request before it merges, and this one is closed.", nil
	}
	if refusal := forkRefusal(repo, pr.HeadRepo); refusal != "" {
		return refusal, nil
	}
	cfg, refusal, err := b.CommandConfig(ctx, gh, repo)
	if refusal != "" || err != nil {
		return refusal, err
	}
	m := Section.Of(cfg)
	if !m.Enabled {
		return "Nothing was started: slow-query reports are turned off for this repository (`migrations.enabled: false`).", nil
	}
	changed, err := gh.ChangedFiles(ctx, repo, number)
	if err != nil {
		return "", err
	}
	files := Files(changed, m.Paths)
	if len(files) == 0 {
		return "Nothing was started: this pull request adds or changes no migration under " + publish.CodeList(m.Paths) + ".", nil
	}
	return "", Start(ctx, b, gh, Signal{InstallationID: inst, Delivery: delivery, Repo: repo,
		Commit: pr.HeadSHA, PR: number, Subject: runs.Subject{Repo: repo.String(), Issue: number}, BeforeMerge: true}, files, cfg)
}

// forkRefusal is the answer to /pitcrew profile on a pull request whose
// head is not the repository's own, by the rule every CI signal follows
// (flaky.CommitOrigin), "" when it is the repository's own.
func forkRefusal(repo github.Repo, headRepo string) string {
	if (flaky.CommitOrigin{RepoFullName: repo.String(), HeadRepo: headRepo}).Ownership() == flaky.Ours {
		return ""
	}
	from := "a fork (" + publish.Code(headRepo, 200) + ")"
	if headRepo == "" {
		from = "a fork GitHub no longer names (deleted?)"
	}
	return "Nothing was started: pitcrew does not profile a pull request from " + from +
		": its migrations would run in the sandbox with pitcrew's credentials. Push the branch to this repository to profile it."
}
