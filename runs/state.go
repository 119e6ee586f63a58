// Package runs is the run ledger: the record, kept in Redis, of every agent
// run pitcrew has started, keyed by the idempotency key of the trouble it
// works on. It is what makes one signal start at most one live run, and what
// lets pitcrew report an outcome after a restart.
package runs

import "fmt"

// State is where a run is in its life.
//
//	queued ──► started ──► completed ──┐
//	   │          │   └──► not_reproduced ─┤ a follow-up: started again
//	   └──────────┴──────► failed          │
//	              ▲────────────────────────┘
type State string

// The states of a run.
const (
	Queued        State = "queued"
	Started       State = "started"
	Completed     State = "completed"
	NotReproduced State = "not_reproduced"
	Failed        State = "failed"
)

var transitions = map[State][]State{
	Queued:  {Started, Failed},
	Started: {Completed, NotReproduced, Failed},
}

// Live reports whether the run still holds its key against new runs
// regardless of time.
func (s State) Live() bool { return s == Queued || s == Started }

// Terminal reports whether the run has ended.
func (s State) Terminal() bool { return s == Completed || s == NotReproduced || s == Failed }

// HoldsCooldown reports whether an ended run keeps new reports of the same
// trouble attached to it for the cooldown. A failed run does not: re-adding
// the label is how users retry.
func (s State) HoldsCooldown() bool { return s == Completed || s == NotReproduced }

// CanMove reports whether the state machine allows from → to.
func CanMove(from, to State) bool {
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// resumes reports whether from → next is a follow-up starting an ended
// run again: the one move back, allowed only with a new follow-up, so that
// no stale copy can start an ended run again.
func resumes(from Run, next Run) bool {
	return from.State.HoldsCooldown() && next.State == Started && len(next.FollowUps) > len(from.FollowUps)
}

// ErrTransition is returned for a move the state machine forbids.
type ErrTransition struct{ From, To State }

func (e ErrTransition) Error() string {
	return fmt.Sprintf("run cannot move from %s to %s", e.From, e.To)
}
