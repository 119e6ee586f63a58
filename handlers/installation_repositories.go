package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	gogithub "github.com/google/go-github/v66/github"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/queue"
)

// InstallationRepositories prepares repositories added to an existing
// installation, as Installation does for a new one.
type InstallationRepositories struct{ Base }

// Handles implements githubapp.EventHandler.
func (h *InstallationRepositories) Handles() []string {
	return []string{"installation_repositories"}
}

// Handle implements githubapp.EventHandler.
func (h *InstallationRepositories) Handle(ctx context.Context, _, _ string, payload []byte) error {
	var ev gogithub.InstallationRepositoriesEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return queue.Permanent(fmt.Errorf("decoding installation_repositories event: %w", err))
	}
	logFor(ctx).Info().Int64("installation_id", ev.GetInstallation().GetID()).Str("action", ev.GetAction()).
		Int("added", len(ev.RepositoriesAdded)).Int("removed", len(ev.RepositoriesRemoved)).Msg("installation repositories changed")
	if ev.GetAction() != "added" {
		return nil
	}
	return h.prepareRepos(ctx, ev.GetInstallation().GetID(), ev.RepositoriesAdded)
}

// prepareRepos creates the flaky label (as each repository configures it)
// where it is missing. A repository whose configuration is broken or turns
// the job off is skipped; one failing repository does not stop the others.
func (b *Base) prepareRepos(ctx context.Context, installationID int64, repos []*gogithub.Repository) error {
	gh, err := b.Clients.Installation(installationID)
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range repos {
		repo, err := github.ParseRepo(r.GetFullName())
		if err != nil {
			continue
		}
		log := logFor(ctx).With().Str("repo", repo.String()).Logger()
		cfg, err := b.loadRepoConfig(ctx, gh, repo)
		if err != nil {
			log.Warn().Err(err).Msg("not creating the flaky label: configuration unusable")
			continue
		}
		if !flakyConfig.Of(cfg).Enabled {
			continue
		}
		created, err := gh.CreateLabel(ctx, repo, flakyConfig.Of(cfg).Label, "d93f0b", "pitcrew: an agent reproduces and fixes the test named as test/..._test.exs:LINE")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		log.Info().Bool("created", created).Str("label", flakyConfig.Of(cfg).Label).Msg("flaky label ready")
	}
	return errors.Join(errs...)
}
