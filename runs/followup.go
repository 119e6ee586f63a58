package runs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pitcrew/pitcrew/sandbox"
)

// A follow-up is part of its run: a message to the run's session (a review
// of its pull request, /pitcrew open-pr) after which the session runs
// again and ends with another callback, read from the API as always. The
// run is started again while it runs; the reconciler covers it as any
// started run.

// FollowUp is one message pitcrew sent to a run's session.
type FollowUp struct {
	N      int       `json:"n"`      // 1, 2, ...: the run's iteration after its first answer
	Max    int       `json:"max"`    // the cap when it was sent (followups.max_per_run)
	Reason string    `json:"reason"` // what asked for it, as people read it: "a review by alice"
	Source string    `json:"source"` // the comment or review it answers, acted on once
	At     time.Time `json:"at"`
	// From is the state the run had ended in, which a failed turn of the
	// follow-up goes back to (Error says why it failed).
	From  State  `json:"from"`
	Error string `json:"error,omitempty"`
}

// Messenger sends follow-up messages to sessions.
type Messenger interface {
	Message(ctx context.Context, sessionID, idempotencyKey, message string) (sandbox.Session, error)
}

// ErrFollowUpRefused is Resume's error when the sandbox refused the
// message for good (retrying will not help).
var ErrFollowUpRefused = errors.New("the sandbox refused the follow-up")

// FollowUpKey is the idempotency key of the follow-up that answers
// source: two sources never share one, so neither is taken for a repeat of
// the other.
func FollowUpKey(runID, source string) string { return runID + ":followup:" + source }

// Resume sends the run's next follow-up and records it, the run started
// again, under the run's follow-up lock (one at a time per run, numbered
// from the run as stored). The message goes first, keyed by its source, so
// a retry after a lost record sends it once; a session that ends before
// the record is read by the reconciler. A follow-up whose source was
// recorded already is not sent again.
func (l *Ledger) Resume(ctx context.Context, m Messenger, run Run, f FollowUp, message string) (Run, error) {
	unlock, err := l.Lock(ctx, "followup:"+run.ID, time.Minute, 2*time.Minute)
	if err != nil {
		return run, err
	}
	defer unlock()
	if run, err = l.Get(ctx, run.ID); err != nil {
		return run, err
	}
	for _, done := range run.FollowUps {
		if done.Source == f.Source {
			return run, nil
		}
	}
	if !run.State.HoldsCooldown() || run.SessionID == "" {
		return run, fmt.Errorf("runs: %s cannot take a follow-up in state %s", run.ID, run.State)
	}
	f.N, f.From = len(run.FollowUps)+1, run.State
	_, err = m.Message(ctx, run.SessionID, FollowUpKey(run.ID, f.Source), message)
	if sandbox.IsPermanent(err) {
		return run, fmt.Errorf("%w (%v)", ErrFollowUpRefused, err)
	}
	if err != nil {
		return run, err
	}
	f.At = l.now().UTC()
	return l.Update(ctx, run, func(r *Run) error {
		for _, done := range r.FollowUps {
			if done.Source == f.Source {
				return nil // recorded meanwhile
			}
		}
		r.State, r.StartedAt, r.EndedAt, r.Published = Started, f.At, time.Time{}, false
		r.FollowUps = append(r.FollowUps, f)
		return nil
	})
}
