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

// Installation prepares the repositories of a new installation: each gets
// the flaky label, so users can label issues right away.
type Installation struct{ work.Env }

// Handles implements githubapp.EventHandler.
func (h *Installation) Handles() []string { return []string{"installation"} }

// Handle implements githubapp.EventHandler.
func (h *Installation) Handle(ctx context.Context, _, _ string, payload []byte) error {
	var ev gogithub.InstallationEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return queue.Permanent(fmt.Errorf("decoding installation event: %w", err))
	}
	inst := ev.GetInstallation()
	zerolog.Ctx(ctx).Info().Int64("installation_id", inst.GetID()).Str("account", inst.GetAccount().GetLogin()).
		Str("action", ev.GetAction()).Int("repositories", len(ev.Repositories)).Msg("installation event")
	if ev.GetAction() != "created" {
		return nil
	}
	return flaky.CreateLabels(ctx, &h.Env, inst.GetID(), repoNames(ev.Repositories))
}
