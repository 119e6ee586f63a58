package handlers

import (
	"context"
	"errors"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/runs"
)

// profilePull starts the profiling run of an open pull request's head
// (/pitcrew profile), keyed by that commit, so the report is there before
// the change ships; a new head is a new run. It answers only when it
// starts nothing: the report shows in the pull request's status comment.
func (b *Base) profilePull(ctx context.Context, gh github.Client, ev Comment, delivery string) (string, error) {
	pr, err := gh.PullRequest(ctx, ev.Repo, ev.Issue)
	if errors.Is(err, github.ErrPullGone) {
		return "Nothing was started: this pull request no longer exists.", nil
	}
	if err != nil {
		return "", err
	}
	if pr.Merged {
		return "Nothing was started: `/pitcrew profile` profiles an open pull request before it merges, and this one is merged (its merge was profiled if it changed migrations).", nil
	}
	if pr.State != "open" || !validSHA(pr.HeadSHA) {
		return "Nothing was started: `/pitcrew profile` profiles an open pull request before it merges, and this one is closed.", nil
	}
	cfg, refusal, err := b.commandConfig(ctx, gh, ev.Repo)
	if refusal != "" || err != nil {
		return refusal, err
	}
	m := migrationConfig.Of(cfg)
	if !m.Enabled {
		return "Nothing was started: slow-query reports are turned off for this repository (`migrations.enabled: false`).", nil
	}
	changed, err := gh.ChangedFiles(ctx, ev.Repo, ev.Issue)
	if err != nil {
		return "", err
	}
	files := MigrationFiles(changed, m.Paths)
	if len(files) == 0 {
		return "Nothing was started: this pull request adds or changes no migration under " + publish.CodeList(m.Paths) + ".", nil
	}
	return "", b.profileMerge(ctx, gh, mergeSignal{InstallationID: ev.InstallationID, Delivery: delivery, Repo: ev.Repo,
		Commit: pr.HeadSHA, PR: ev.Issue, Subject: runs.Subject{Repo: ev.Repo.String(), Issue: ev.Issue}, BeforeMerge: true}, files, cfg)
}
