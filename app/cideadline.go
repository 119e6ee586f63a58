package app

import (
	"context"
	"time"

	"github.com/hibiken/asynq"

	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/follow"
)

// ciDeadlines schedules, on the queue, the check that a verification's
// workflow runs started (follow.CIDeadline): one per verification.
type ciDeadlines struct{ queue *asynq.Client }

func (d ciDeadlines) ScheduleCIDeadline(ctx context.Context, dl queue.CIDeadline, at time.Time) error {
	_, err := d.queue.EnqueueContext(ctx, queue.CIDeadlineTask(dl, at))
	if queue.IsDuplicate(err) {
		return nil
	}
	return err
}

// ciDeadline handles a TaskCIDeadline.
func ciDeadline(base *work.Env) asynq.HandlerFunc {
	return func(ctx context.Context, t *asynq.Task) error {
		d, err := queue.DecodeCIDeadline(t.Payload())
		if err != nil {
			return queue.Permanent(err)
		}
		gh, err := base.Clients.Installation(d.InstallationID)
		if err != nil {
			return err
		}
		return follow.CIDeadline(ctx, base, gh, d)
	}
}
