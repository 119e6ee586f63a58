package handlers

import (
	"context"
	"encoding/json"
	"fmt"

	gogithub "github.com/google/go-github/v66/github"

	"github.com/pitcrew/pitcrew/queue"
)

// Installation prepares the repositories of a new installation: each gets
// the flaky label, so users can label issues right away.
type Installation struct{ Base }

// Handles implements githubapp.EventHandler.
func (h *Installation) Handles() []string { return []string{"installation"} }

// Handle implements githubapp.EventHandler.
func (h *Installation) Handle(ctx context.Context, _, _ string, payload []byte) error {
	var ev gogithub.InstallationEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return queue.Permanent(fmt.Errorf("decoding installation event: %w", err))
	}
	inst := ev.GetInstallation()
	logFor(ctx).Info().Int64("installation_id", inst.GetID()).Str("account", inst.GetAccount().GetLogin()).
		Str("action", ev.GetAction()).Int("repositories", len(ev.Repositories)).Msg("installation event")
	if ev.GetAction() != "created" {
		return nil
	}
	return h.prepareRepos(ctx, inst.GetID(), ev.Repositories)
}
