package flaky

import (
	"context"
	"errors"

	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/work"
)

// CreateLabels creates the flaky label (as each repository configures it)
// where it is missing. A repository whose configuration is broken or turns
// the job off is skipped; one failing repository does not stop the others.
func CreateLabels(ctx context.Context, b *work.Env, installationID int64, repos []string) error {
	gh, err := b.Clients.Installation(installationID)
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range repos {
		repo, err := github.ParseRepo(r)
		if err != nil {
			continue
		}
		log := zerolog.Ctx(ctx).With().Str("repo", repo.String()).Logger()
		cfg, err := b.LoadConfig(ctx, gh, repo)
		if err != nil {
			log.Warn().Err(err).Msg("not creating the flaky label: configuration unusable")
			continue
		}
		if !Of(cfg).Enabled {
			continue
		}
		created, err := gh.CreateLabel(ctx, repo, Of(cfg).Label, "d93f0b", "pitcrew: an agent reproduces and fixes the test named as test/..._test.exs:LINE")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		log.Info().Bool("created", created).Str("label", Of(cfg).Label).Msg("flaky label ready")
	}
	return errors.Join(errs...)
}
