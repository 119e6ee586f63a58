package work

import (
	"context"

	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/runs"
)

// DashboardScheduler asks for a refresh of a repository's flaky-tests
// dashboard. The wiring coalesces the requests of a few seconds into one
// refresh, so a burst of signals makes one edit, not one per signal.
type DashboardScheduler interface {
	ScheduleDashboard(ctx context.Context, repo string, inst int64) error
}

// DashboardChanged asks for a refresh of repo's dashboard. The signal's
// own work is done by then: a refresh that cannot be scheduled is logged,
// and the next signal, or the periodic refresh, schedules one. (An edit of
// the dashboard itself has nothing else to do: it calls ScheduleDashboard
// and retries.)
func (e *Env) DashboardChanged(ctx context.Context, repo string, inst int64) {
	if err := e.ScheduleDashboard(ctx, repo, inst); err != nil {
		zerolog.Ctx(ctx).Warn().Err(err).Msg("could not schedule the dashboard's refresh; the next signal will")
	}
}

// ScheduleDashboard asks for a refresh of repo's dashboard, if dashboards
// are kept.
func (e *Env) ScheduleDashboard(ctx context.Context, repo string, inst int64) error {
	if e.Dashboards == nil {
		return nil
	}
	return e.Dashboards.ScheduleDashboard(ctx, repo, inst)
}

// runShown refreshes the dashboard of a flaky run's repository whenever
// the run's subjects are shown again (it started, ended, its pull request
// moved).
func (e *Env) runShown(ctx context.Context, run runs.Run) {
	if j, ok := e.Jobs.Job(run.Kind); ok && j.Dashboard {
		e.DashboardChanged(ctx, run.Repo, run.InstallationID)
	}
}
