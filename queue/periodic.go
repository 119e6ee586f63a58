package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
	"github.com/rs/zerolog"
)

// Periodic tasks. Every replica ticks, but each interval's task has one
// id ("<type>:<interval number>"), so the queue takes it once for the
// whole fleet and one worker, on any replica, runs it.
const (
	TaskSweepDeliveries   = "periodic:sweep-deliveries"
	TaskReconcileRuns     = "periodic:reconcile-runs"
	TaskRefreshDashboards = "periodic:refresh-dashboards"
)

// Schedule is how often the periodic tasks run.
type Schedule struct {
	SweepEvery     time.Duration // delivery sweeper; default 5 minutes
	ReconcileEvery time.Duration // lost-callback reconciler; default 2 minutes
	// DashboardsEvery rewrites every dashboard even without a signal
	// (sightings past 90 days drop out, notes expire); default 6 hours.
	DashboardsEvery time.Duration
}

// RunPeriodic enqueues the periodic tasks until ctx ends.
func RunPeriodic(ctx context.Context, q *asynq.Client, s Schedule, log zerolog.Logger) {
	tick := func(task string, every time.Duration) {
		n := time.Now().UnixNano() / int64(every)
		_, err := q.EnqueueContext(ctx, asynq.NewTask(task, nil), asynq.TaskID(fmt.Sprintf("%s:%d", task, n)),
			asynq.Queue(QueueOutcome), asynq.MaxRetry(0), asynq.Retention(2*every), asynq.Timeout(every))
		if err != nil && !IsDuplicate(err) && ctx.Err() == nil {
			log.Warn().Err(err).Str("task", task).Msg("could not schedule a periodic task")
		}
	}
	every := min(s.SweepEvery, s.ReconcileEvery)
	if s.DashboardsEvery > 0 {
		every = min(every, s.DashboardsEvery)
	}
	every /= 4
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		tick(TaskSweepDeliveries, s.SweepEvery)
		tick(TaskReconcileRuns, s.ReconcileEvery)
		if s.DashboardsEvery > 0 {
			tick(TaskRefreshDashboards, s.DashboardsEvery)
		}
	}
}
