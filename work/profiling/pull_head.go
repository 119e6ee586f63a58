package profiling

import (
	"context"
	"errors"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
)

// PullHead starts the profiling run of an open pull request's head
// (/pitcrew profile), keyed by that commit, so the report is there before
// the change ships; a new head is a new run. It answers only when it
// starts nothing: the report shows in the pull request's status comment.
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
