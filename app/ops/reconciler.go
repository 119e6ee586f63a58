// Package ops is the periodic work that keeps pitcrew's promises when
// something outside failed: the delivery sweeper asks GitHub again for
// deliveries pitcrew never acknowledged, the reconciler reads the sessions
// whose callback never came.
package ops

import (
	"context"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/internal/metrics"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
)

// Reconciler finds runs whose outcome never arrived (a lost callback) and
// reads their sessions: those that ended are reported, those running past
// the maximum age are reported failed.
type Reconciler struct {
	Ledger     *runs.Ledger
	Queue      *asynq.Client
	Metrics    *metrics.Metrics
	Now        func() time.Time // default time.Now
	StaleAfter time.Duration    // a started run is read once older than this; default 10 minutes
}

// ProcessTask implements asynq.Handler for TaskReconcileRuns.
func (r *Reconciler) ProcessTask(ctx context.Context, _ *asynq.Task) error {
	now := r.Now
	if now == nil {
		now = time.Now
	}
	stale := r.StaleAfter
	if stale <= 0 {
		stale = 10 * time.Minute
	}
	sessions, err := r.Ledger.StartedBefore(ctx, now().Add(-stale), 500)
	if err != nil {
		return err
	}
	bucket := now().Unix() / int64(max(stale/time.Second, 1))
	for _, id := range sessions {
		_, err := r.Queue.EnqueueContext(ctx, queue.ReconcileTask(id, fmt.Sprintf("reconcile:%s:%d", id, bucket)))
		if err != nil && !queue.IsDuplicate(err) {
			return err
		}
	}
	if len(sessions) > 0 {
		r.Metrics.Reconciled.Add(float64(len(sessions)))
		zerolog.Ctx(ctx).Info().Int("sessions", len(sessions)).Msg("reconciler: reading runs without an outcome")
	}
	return nil
}
