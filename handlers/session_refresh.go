package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/follow"
)

// SessionRefresher reads a session from the sandbox API and, once it has
// ended, records the outcome, follows the pull request the run opened, and
// edits the status comment of every issue that shows the run.
type SessionRefresher struct{ work.Env }

// Refresh works on one TaskSessionRefresh.
func (h *SessionRefresher) Refresh(ctx context.Context, task queue.Refresh) error {
	sessionID := task.SessionID
	run, err := h.runOf(ctx, task)
	if errors.Is(err, runs.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	log := zerolog.Ctx(ctx).With().Str("run_id", run.ID).Str("idempotency_key", run.Key).Str("session_id", sessionID).Str("repo", run.Repo).Logger()
	ctx = log.WithContext(ctx)
	// The task that records the outcome shows it, and so does the same
	// task run again (it may have stopped between the two); a later read
	// of a run already shown shows it again only while its pull request
	// or verification moves on.
	taskID := queue.TaskID(ctx)
	recorded := false
	if run.State == runs.Started {
		if run, recorded, err = h.Finish.Record(ctx, run, taskID); err != nil {
			return err
		}
		if !run.State.Terminal() {
			if !task.Reconcile || h.Time().Sub(run.StartedAt) <= maxRunAge(&h.Env) {
				return nil
			}
			run, err = h.Ledger.Move(ctx, run, runs.Failed, func(r *runs.Run) {
				r.Error = fmt.Sprintf("the sandbox reported no outcome within %s", maxRunAge(&h.Env))
				r.Published, r.RecordedBy = true, taskID
			})
			if err != nil {
				return err
			}
			recorded = true
		}
	}
	shows := recorded || !run.Published || taskID != "" && run.RecordedBy == taskID
	if !shows && !follow.Follows(h.Jobs, run) && !follow.VerifyPending(run) {
		return nil
	}
	gh, err := h.Clients.Installation(run.InstallationID)
	if err != nil {
		return err
	}
	retry, err := h.show(ctx, gh, &run)
	if err != nil {
		return err
	}
	if !run.Published {
		// Recorded by an earlier version, or marked to be shown again
		// (pitcrew retry).
		if _, err := h.Ledger.Update(ctx, run, func(r *runs.Run) error { r.Published = true; return nil }); err != nil {
			return err
		}
	}
	return retry
}

// runOf is the run of the task's session: as its callback read it while
// it was started, on the task's first attempt (Record's write checks it is
// still so); else read now (an ended run, a retry, the reconciler's tasks).
func (h *SessionRefresher) runOf(ctx context.Context, task queue.Refresh) (runs.Run, error) {
	var snapshot runs.Snapshot
	if len(task.Run) > 0 && !queue.Retried(ctx) && json.Unmarshal(task.Run, &snapshot) == nil {
		if run, err := snapshot.Open(); err == nil && run.SessionID == task.SessionID && run.State == runs.Started {
			return run, nil
		}
	}
	return h.Ledger.BySession(ctx, task.SessionID)
}

// show shows an ended run: where its job shows it (Job.Ended), else on
// its subjects, with the pull request it opened read first, so the first
// comment carries it, and the pull request's verification started. retry
// is a failure to read the pull request or start the verification, after
// the outcome was shown all the same. What else the job writes of an ended
// run (Job.Shown) comes last.
func (h *SessionRefresher) show(ctx context.Context, gh github.Client, run *runs.Run) (retry, err error) {
	if j, _ := h.Jobs.Job(run.Kind); j.Ended != nil {
		return nil, j.Ended(ctx, &h.Env, gh, *run)
	}
	var followErr error
	if follow.Follows(h.Jobs, *run) {
		if followed, err := follow.Pull(ctx, &h.Env, gh, *run); err != nil {
			followErr = fmt.Errorf("following %s: %w", run.PullRequest(), err)
		} else {
			*run = followed
		}
	}
	if followErr == nil {
		if verifying, err := follow.Verify(ctx, &h.Env, gh, *run); err != nil {
			followErr = fmt.Errorf("verifying %s: %w", run.PullRequest(), err)
		} else {
			*run = verifying
		}
	}
	if err := h.Publish.Subjects(ctx, gh, *run, runs.Subject{}); err != nil {
		return followErr, err
	}
	if j, _ := h.Jobs.Job(run.Kind); j.Shown != nil {
		return followErr, j.Shown(ctx, &h.Env, gh, *run)
	}
	return followErr, nil
}

// maxRunAge is when a session that never ends is reported failed.
func maxRunAge(b *work.Env) time.Duration {
	if b.MaxRunAge > 0 {
		return b.MaxRunAge
	}
	return 24 * time.Hour
}
