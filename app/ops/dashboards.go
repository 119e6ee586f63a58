package ops

import (
	"context"
	"time"

	"github.com/hibiken/asynq"
	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
)

// maxDashboardsSwept bounds the repositories one sweep refreshes.
const maxDashboardsSwept = 1000

// DashboardSweep asks for a refresh of every repository's flaky-tests
// dashboard, signal or not: tests whose last sighting passed 90 days drop
// out, a note past its day goes. Each is the usual refresh task of the
// current window, so one that a signal asked for already is not doubled.
type DashboardSweep struct {
	Ledger *runs.Ledger
	Queue  *asynq.Client
	Every  time.Duration // the refreshes' window (Options.DashboardEvery)
}

// ProcessTask implements asynq.Handler for TaskRefreshDashboards.
func (s *DashboardSweep) ProcessTask(ctx context.Context, _ *asynq.Task) error {
	repos, err := s.Ledger.FlakyRepos(ctx, maxDashboardsSwept)
	if err != nil {
		return err
	}
	asked := 0
	for _, repo := range repos {
		d, err := s.Ledger.Dashboard(ctx, repo)
		if err != nil {
			return err
		}
		if d.Issue == 0 || d.Installation == 0 {
			continue // none opened yet: the next signal opens it
		}
		_, err = s.Queue.EnqueueContext(ctx, queue.DashboardTask(queue.Dashboard{Repo: repo, InstallationID: d.Installation}, s.Every, time.Now()))
		if err != nil && !queue.IsDuplicate(err) {
			return err
		}
		asked++
	}
	zerolog.Ctx(ctx).Info().Int("dashboards", asked).Msg("dashboards: asked for a refresh of each")
	return nil
}
