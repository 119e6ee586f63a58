package handlers

import (
	"context"
	"encoding/json"
	"fmt"

	gogithub "github.com/google/go-github/v66/github"
	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/profiling"
)

// Push starts a slow-query report for migrations pushed straight to the
// default branch, and posts it as a comment on the commit. Pushes that
// come from merging a pull request are left to PullRequest.
type Push struct{ work.Env }

// Handles implements githubapp.EventHandler.
func (h *Push) Handles() []string { return []string{"push"} }

// DefaultBranchPush is a push to a repository's default branch.
type DefaultBranchPush struct {
	InstallationID int64
	Repo           github.Repo
	After          string
	Changed        []github.ChangedFile // from the pushed commits (GitHub lists up to 20)
}

// ParseDefaultBranchPush reads a push event; ok is false unless it pushed
// commits to the default branch of an installation's repository.
func ParseDefaultBranchPush(payload []byte) (ev DefaultBranchPush, ok bool, err error) {
	var raw gogithub.PushEvent
	if err := json.Unmarshal(payload, &raw); err != nil {
		return DefaultBranchPush{}, false, fmt.Errorf("decoding push event: %w", err)
	}
	if raw.GetInstallation().GetID() <= 0 || raw.GetDeleted() || raw.GetRef() != "refs/heads/"+raw.GetRepo().GetDefaultBranch() || !github.ValidSHA(raw.GetAfter()) {
		return DefaultBranchPush{}, false, nil
	}
	repo, err := github.ParseRepo(raw.GetRepo().GetFullName())
	if err != nil {
		return DefaultBranchPush{}, false, err
	}
	ev = DefaultBranchPush{InstallationID: raw.GetInstallation().GetID(), Repo: repo, After: raw.GetAfter()}
	for _, c := range raw.Commits {
		for _, f := range c.Added {
			ev.Changed = append(ev.Changed, github.ChangedFile{Path: f, Status: "added"})
		}
		for _, f := range c.Modified {
			ev.Changed = append(ev.Changed, github.ChangedFile{Path: f, Status: "modified"})
		}
	}
	return ev, true, nil
}

// Handle implements githubapp.EventHandler.
func (h *Push) Handle(ctx context.Context, _, deliveryID string, payload []byte) error {
	ev, ok, err := ParseDefaultBranchPush(payload)
	if err != nil {
		return queue.Permanent(err)
	}
	if !ok {
		return nil
	}
	for _, f := range ev.Changed {
		if f.Path == repoconfig.Path {
			if err := h.Ledger.Uncache(ctx, work.ConfigCacheName(ev.Repo)); err != nil {
				return err
			}
		}
	}
	if !profiling.MayHoldMigrations(ev.Changed) {
		zerolog.Ctx(ctx).Debug().Msg("ignoring the push: it changed no file under a migrations/ directory")
		return nil
	}
	ctx = zerolog.Ctx(ctx).With().Str("repo", ev.Repo.String()).Str("commit", ev.After).Logger().WithContext(ctx)
	gh, err := h.Clients.Installation(ev.InstallationID)
	if err != nil {
		return err
	}
	cfg, proceed, err := h.JobConfig(ctx, gh, ev.Repo, func(c repoconfig.Config) bool { return profiling.Section.Of(c).Enabled })
	if !proceed {
		return err
	}
	files := profiling.Files(ev.Changed, profiling.Section.Of(cfg).Paths)
	if len(files) == 0 {
		zerolog.Ctx(ctx).Debug().Strs("paths", profiling.Section.Of(cfg).Paths).Msg("ignoring the push: it changed no file under the migration paths of .github/pitcrew.yml (migrations.paths)")
		return nil
	}
	if pr, err := gh.MergedPullFor(ctx, ev.Repo, ev.After); err != nil || pr != 0 {
		return err // the pull request's own event reports on it
	}
	return profiling.Start(ctx, &h.Env, gh, profiling.Signal{InstallationID: ev.InstallationID, Delivery: deliveryID, Repo: ev.Repo,
		Commit: ev.After, Subject: runs.Subject{Repo: ev.Repo.String(), Commit: ev.After, Source: runs.SourceCommit}}, files, cfg)
}
