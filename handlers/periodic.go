package handlers

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
	TaskSweepDeliveries = "periodic:sweep-deliveries"
	TaskReconcileRuns   = "periodic:reconcile-runs"
)

// Schedule is how often the periodic tasks run.
type Schedule struct {
	SweepEvery     time.Duration // delivery sweeper; default 5 minutes
	ReconcileEvery time.Duration // lost-callback reconciler; default 2 minutes
}

// runPeriodic enqueues the periodic tasks until ctx ends.
func runPeriodic(ctx context.Context, q *asynq.Client, s Schedule, log zerolog.Logger) {
	tick := func(task string, every time.Duration) {
		n := time.Now().UnixNano() / int64(every)
		_, err := q.EnqueueContext(ctx, asynq.NewTask(task, nil), asynq.TaskID(fmt.Sprintf("%s:%d", task, n)),
			asynq.Queue(QueueOutcome), asynq.MaxRetry(0), asynq.Retention(2*every), asynq.Timeout(every))
		if err != nil && !isDuplicate(err) && ctx.Err() == nil {
			log.Warn().Err(err).Str("task", task).Msg("could not schedule a periodic task")
		}
	}
	every := min(s.SweepEvery, s.ReconcileEvery) / 4
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
	}
}

// Reconciler finds runs whose outcome never arrived (a lost callback) and
// reads their sessions: those that ended are reported, those running past
// the maximum age are reported failed.
type Reconciler struct {
	Base
	StaleAfter time.Duration // a started run is read once older than this; default 10 minutes
}

// ProcessTask implements asynq.Handler for TaskReconcileRuns.
func (r *Reconciler) ProcessTask(ctx context.Context, _ *asynq.Task) error {
	stale := r.StaleAfter
	if stale <= 0 {
		stale = 10 * time.Minute
	}
	sessions, err := r.Ledger.StartedBefore(ctx, r.now().Add(-stale), 500)
	if err != nil {
		return err
	}
	bucket := r.now().Unix() / int64(max(stale/time.Second, 1))
	for _, id := range sessions {
		_, err := r.Queue.EnqueueContext(ctx, ReconcileTask(id, fmt.Sprintf("reconcile:%s:%d", id, bucket)))
		if err != nil && !isDuplicate(err) {
			return err
		}
	}
	if len(sessions) > 0 {
		r.Metrics.Reconciled.Add(float64(len(sessions)))
		logFor(ctx).Info().Int("sessions", len(sessions)).Msg("reconciler: reading runs without an outcome")
	}
	return nil
}
