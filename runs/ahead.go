package runs

import (
	"context"
	"sync"
	"time"
)

// Status locks taken ahead.
//
// A handler that writes a run and then shows it on a subject would spend a
// round trip on the write and another on the subject's status lock. A write
// that knows the subject its caller shows next (UpdateShowing, LockedPull's
// Update) tries that lock in its own round trip instead, in a context that
// allows it (WithLocksAhead). The lock then waits in the context for the
// subject's LockStatus, which takes it without a round trip.
//
// A try never waits, and a lock taken ahead is given up before its holder
// waits for any other lock (Ledger.lock), so no deadlock can come of it.
// What nobody took is released when the context's work ends.

// aheadTTL is the lifetime of a status lock taken ahead, renewed while
// held; publish.Writer locks statuses for as long.
const aheadTTL = 30 * time.Second

type locksAheadKey struct{}

// locksAhead are the status locks one context took ahead, with what each
// read: the status and the runs it names, and the runs the context wrote
// or claimed since.
type locksAhead struct {
	mu   sync.Mutex
	held map[Subject]*statusAhead
}

type statusAhead struct {
	st    Status
	found map[string]Run
	lock  *StatusLock
}

// WithLocksAhead returns a context in which ledger writes may take status
// locks ahead, and release, which gives up those nobody took; call it when
// the context's work ends.
func WithLocksAhead(ctx context.Context) (context.Context, func()) {
	a := &locksAhead{held: map[Subject]*statusAhead{}}
	return context.WithValue(ctx, locksAheadKey{}, a), a.release
}

func locksAheadIn(ctx context.Context) *locksAhead {
	a, _ := ctx.Value(locksAheadKey{}).(*locksAhead)
	return a
}

// wants reports whether a write in this context should try the status
// lock of s: the context takes locks ahead and holds none of s yet.
func (a *locksAhead) wants(s Subject) bool {
	if a == nil || s == (Subject{}) {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	_, held := a.held[s]
	return !held
}

// take hands over the lock held ahead of s, if any.
func (a *locksAhead) take(s Subject) *statusAhead {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	ahead := a.held[s]
	delete(a.held, s)
	return ahead
}

// saw records a run as the context last wrote or read it, for the
// statuses held ahead to show.
func (a *locksAhead) saw(r Run) {
	if a == nil || r.ID == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, ahead := range a.held {
		ahead.found[r.ID] = r
	}
}

// release gives up every lock held ahead (and the create marks they placed).
func (a *locksAhead) release() {
	if a == nil {
		return
	}
	a.mu.Lock()
	held := a.held
	a.held = map[Subject]*statusAhead{}
	a.mu.Unlock()
	for _, ahead := range held {
		ahead.lock.Unlock()
	}
}

// tryAhead is, when ctx should take the status lock of s ahead, the try to
// send with a write of run runID, and the lock it would take; nil otherwise.
func (l *Ledger) tryAhead(ctx context.Context, s Subject, runID string) (*scriptCall, *held) {
	if !locksAheadIn(ctx).wants(s) {
		return nil, nil
	}
	h := l.newHeld(ctx, statusLockName(s))
	return l.lockStatusCall(s, h.key, h.token, aheadTTL, []string{runID}), h
}

// keepAhead keeps in ctx the status lock of s that try took, if it did.
func (l *Ledger) keepAhead(ctx context.Context, s Subject, h *held, try *scriptCall) {
	res, err := try.cmd.Slice()
	if err != nil || len(res) == 0 || res[0] != int64(1) {
		if err != nil {
			// It may have taken the lock before failing: give it back.
			h.unlock()
		}
		return
	}
	h.keep(aheadTTL)
	st, found, lock, err := l.statusLocked(s, h, res)
	if err != nil {
		return // released by statusLocked; LockStatus reports the error
	}
	a := locksAheadIn(ctx)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.held[s] = &statusAhead{st: st, found: found, lock: lock}
}
