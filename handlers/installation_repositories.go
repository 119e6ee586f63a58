package handlers

import (
	"context"
	"encoding/json"
	"fmt"

	gogithub "github.com/google/go-github/v66/github"
	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/flaky"
)

// InstallationRepositories prepares repositories added to an existing
// installation, as Installation does for a new one.
type InstallationRepositories struct{ work.Env }

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
	zerolog.Ctx(ctx).Info().Int64("installation_id", ev.GetInstallation().GetID()).Str("action", ev.GetAction()).
		Int("added", len(ev.RepositoriesAdded)).Int("removed", len(ev.RepositoriesRemoved)).Msg("installation repositories changed")
	if ev.GetAction() != "added" {
		return nil
	}
	return flaky.CreateLabels(ctx, &h.Env, ev.GetInstallation().GetID(), repoNames(ev.RepositoriesAdded))
}

// repoNames are the full names of repos.
func repoNames(repos []*gogithub.Repository) []string {
	var names []string
	for _, r := range repos {
		names = append(names, r.GetFullName())
	}
	return names
}
