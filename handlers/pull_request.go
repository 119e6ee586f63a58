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
	"github.com/pitcrew/pitcrew/work/follow"
	"github.com/pitcrew/pitcrew/work/profiling"
)

// PullRequest follows the pull requests agents opened (a push, a close or
// a reopen is read again), and starts a slow-query report when a merged
// pull request changed migrations, posted on the pull request.
type PullRequest struct{ work.Env }

// Handles implements githubapp.EventHandler.
func (h *PullRequest) Handles() []string { return []string{"pull_request"} }

// PullChange is a change of a pull request that a followed one is read
// again for.
type PullChange struct {
	InstallationID int64
	Repo           github.Repo
	Number         int
}

// ParsePullChange reads a pull_request event; ok is false unless it is a
// push to the pull request, a close or a reopen, for an installation.
func ParsePullChange(payload []byte) (ev PullChange, ok bool, err error) {
	var raw gogithub.PullRequestEvent
	if err := json.Unmarshal(payload, &raw); err != nil {
		return PullChange{}, false, fmt.Errorf("decoding pull_request event: %w", err)
	}
	switch raw.GetAction() {
	case "synchronize", "closed", "reopened":
	default:
		return PullChange{}, false, nil
	}
	n := raw.GetPullRequest().GetNumber()
	if raw.GetInstallation().GetID() <= 0 || n <= 0 {
		return PullChange{}, false, nil
	}
	repo, err := github.ParseRepo(raw.GetRepo().GetFullName())
	if err != nil {
		return PullChange{}, false, err
	}
	return PullChange{InstallationID: raw.GetInstallation().GetID(), Repo: repo, Number: n}, true, nil
}

// MergedPull is a pull request that was merged.
type MergedPull struct {
	InstallationID int64
	Repo           github.Repo
	Number         int
	MergeSHA       string
}

// ParseMergedPull reads a pull_request event; ok is false unless it is a
// pull request closed by a merge, for an installation.
func ParseMergedPull(payload []byte) (ev MergedPull, ok bool, err error) {
	var raw gogithub.PullRequestEvent
	if err := json.Unmarshal(payload, &raw); err != nil {
		return MergedPull{}, false, fmt.Errorf("decoding pull_request event: %w", err)
	}
	pr := raw.GetPullRequest()
	if raw.GetAction() != "closed" || !pr.GetMerged() || raw.GetInstallation().GetID() <= 0 || pr.GetNumber() <= 0 || !github.ValidSHA(pr.GetMergeCommitSHA()) {
		return MergedPull{}, false, nil
	}
	repo, err := github.ParseRepo(raw.GetRepo().GetFullName())
	if err != nil {
		return MergedPull{}, false, err
	}
	return MergedPull{InstallationID: raw.GetInstallation().GetID(), Repo: repo, Number: pr.GetNumber(), MergeSHA: pr.GetMergeCommitSHA()}, true, nil
}

// Handle implements githubapp.EventHandler. A merge without migrations
// costs one API call: the list of its files; a pull request no run opened
// costs none.
func (h *PullRequest) Handle(ctx context.Context, _, deliveryID string, payload []byte) error {
	change, ok, err := ParsePullChange(payload)
	if err != nil {
		return queue.Permanent(err)
	}
	if ok {
		if err := h.pullChanged(ctx, change); err != nil {
			return err
		}
	}
	ev, ok, err := ParseMergedPull(payload)
	if err != nil {
		return queue.Permanent(err)
	}
	if !ok {
		return nil
	}
	ctx = zerolog.Ctx(ctx).With().Str("repo", ev.Repo.String()).Int("pull", ev.Number).Logger().WithContext(ctx)
	gh, err := h.Clients.Installation(ev.InstallationID)
	if err != nil {
		return err
	}
	changed, err := gh.ChangedFiles(ctx, ev.Repo, ev.Number)
	if err != nil {
		return err
	}
	if !profiling.MayHoldMigrations(changed) {
		zerolog.Ctx(ctx).Debug().Int("files", len(changed)).Msg("ignoring the merge: it changed no file under a migrations/ directory")
		return nil
	}
	cfg, proceed, err := h.JobConfig(ctx, gh, ev.Repo, func(c repoconfig.Config) bool { return profiling.Section.Of(c).Enabled })
	if !proceed {
		return err
	}
	files := profiling.Files(changed, profiling.Section.Of(cfg).Paths)
	if len(files) == 0 {
		zerolog.Ctx(ctx).Debug().Strs("paths", profiling.Section.Of(cfg).Paths).Msg("ignoring the merge: it changed no file under the migration paths of .github/pitcrew.yml (migrations.paths)")
		return nil
	}
	return profiling.Start(ctx, &h.Env, gh, profiling.Signal{InstallationID: ev.InstallationID, Delivery: deliveryID, Repo: ev.Repo,
		Commit: ev.MergeSHA, PR: ev.Number, Subject: runs.Subject{Repo: ev.Repo.String(), Issue: ev.Number}}, files, cfg)
}

// pullChanged reads a followed pull request again.
func (h *PullRequest) pullChanged(ctx context.Context, ev PullChange) error {
	gh, err := h.Clients.Installation(ev.InstallationID)
	if err != nil {
		return err
	}
	return follow.Update(ctx, &h.Env, gh, ev.Repo, ev.Number, follow.News{Reread: true})
}
