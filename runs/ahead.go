package runs

import (
	"context"
	"sync"
	"time"
)

// Locks taken ahead.
//
// A handler that writes a run and then shows it on a subject would spend a
// round trip on the write and another on the subject's status lock; one
// that records an outcome and then follows the pull request it names, one
// on the write and another on the pull request's lock. A write that knows
// what its caller locks next (UpdateShowing, LockedPull's Update, the
// Finisher's outcome) tries that lock in its own round trip instead, in a
// context that allows it (WithLocksAhead). The lock then waits in the
// context for its LockStatus or LockPull, which takes it over without a
// round trip.
//
// A try never waits, and a lock taken ahead is given up before its holder
// waits for any other lock (Ledger.lock) or starts a session (Starter), so
// no deadlock can come of it. What nobody took over within aheadHold, or
// by the end of the context's work, is released: others who need the lock
// are kept waiting no longer than that.

// aheadTTL is the lifetime of a status lock taken ahead, renewed while
// held; publish.Writer locks statuses for as long.
const aheadTTL = 30 * time.Second

// aheadHold is how long a lock taken ahead waits to be taken over.
var aheadHold = time.Second

type locksAheadKey struct{}

// locksAhead are the locks one context took ahead: status locks with what
// each read (the status and the runs it names, and the runs the context
// wrote or claimed since), and pull request locks taken to follow one.
type locksAhead struct {
	mu       sync.Mutex
	statuses map[Subject]*statusAhead
	pulls    map[string]*LockedPull // by lock name
	behind   savesBehind            // status saves held back (behind.go)
}

type statusAhead struct {
	st    Status
	found map[string]Run
	lock  *StatusLock
}

// WithLocksAhead returns a context in which ledger writes may take locks
// ahead, and release, which gives up those nobody took over; call it when
// the context's work ends.
func WithLocksAhead(ctx context.Context) (context.Context, func()) {
	a := &locksAhead{statuses: map[Subject]*statusAhead{}, pulls: map[string]*LockedPull{}}
	a.behind.sent = sync.NewCond(&a.mu)
	return context.WithValue(ctx, locksAheadKey{}, a), a.release
}

// ReleaseLocksAhead gives up the locks ctx holds ahead, before work that
// may take long (a session's start, GitHub calls other than the show).
func ReleaseLocksAhead(ctx context.Context) { locksAheadIn(ctx).release() }

func locksAheadIn(ctx context.Context) *locksAhead {
	a, _ := ctx.Value(locksAheadKey{}).(*locksAhead)
	return a
}

// withoutLocksAhead is ctx without its locks ahead or saves held back, for
// the round trips that hold, send or release them.
func withoutLocksAhead(ctx context.Context) context.Context {
	return context.WithValue(ctx, locksAheadKey{}, (*locksAhead)(nil))
}

// wantsStatus reports whether a write in this context should try the status
// lock of s: the context takes locks ahead and holds none of s yet.
func (a *locksAhead) wantsStatus(s Subject) bool {
	if a == nil || s == (Subject{}) {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	_, held := a.statuses[s]
	return !held
}

// wantsPull is wantsStatus for the pull request lock of that name.
func (a *locksAhead) wantsPull(name string) bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	_, held := a.pulls[name]
	return !held
}

// takeStatus hands over the status lock held ahead of s, if any.
func (a *locksAhead) takeStatus(s Subject) *statusAhead {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	ahead := a.statuses[s]
	delete(a.statuses, s)
	return ahead
}

// takePull hands over the pull request lock of that name held ahead for
// run runID to follow it, if any.
func (a *locksAhead) takePull(name, runID string) (LockedPull, bool) {
	if a == nil {
		return LockedPull{}, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	locked, ok := a.pulls[name]
	if !ok || locked.Run.ID != runID {
		return LockedPull{}, false
	}
	delete(a.pulls, name)
	return *locked, true
}

// saw records a run as the context last wrote or read it, for what the
// locks held ahead read.
func (a *locksAhead) saw(r Run) {
	if a == nil || r.ID == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, ahead := range a.statuses {
		ahead.found[r.ID] = r
	}
	for _, locked := range a.pulls {
		if locked.Run.ID == r.ID {
			locked.Run = r
		}
	}
}

// release gives up every lock held ahead (and the create marks they
// placed), and sends the status save held back.
func (a *locksAhead) release() {
	if a == nil {
		return
	}
	a.sendHeld(anySave)
	var unlocks []func()
	a.mu.Lock()
	for s, ahead := range a.statuses {
		unlocks = append(unlocks, ahead.lock.Unlock)
		delete(a.statuses, s)
	}
	for name, locked := range a.pulls {
		unlocks = append(unlocks, locked.Unlock)
		delete(a.pulls, name)
	}
	a.mu.Unlock()
	for _, unlock := range unlocks {
		unlock()
	}
}

// hold keeps v, a lock taken ahead, in m under k, unless one is held there
// already (then unlock gives v up at once); it is given up if nobody has
// taken it over within aheadHold.
func hold[K comparable, V comparable](a *locksAhead, m map[K]V, k K, v V, unlock func()) {
	a.mu.Lock()
	_, twice := m[k]
	if !twice {
		m[k] = v
	}
	a.mu.Unlock()
	if twice { // taken by a concurrent write of the same context: one is enough
		unlock()
		return
	}
	time.AfterFunc(aheadHold, func() {
		a.mu.Lock()
		still := m[k] == v
		if still {
			delete(m, k)
		}
		a.mu.Unlock()
		if still {
			unlock()
		}
	})
}

// triesAhead are the tries a write sends besides, and the locks they would
// take.
type triesAhead struct {
	l              *Ledger
	a              *locksAhead
	show           Subject
	status, pull   *scriptCall
	statusH, pullH *held
	pullRepo       string
	pullNumber     int
}

// triesFor are the tries of the locks ahead says, for a write of next,
// that ctx wants.
func (l *Ledger) triesFor(ctx context.Context, ahead writeAhead, next Run) triesAhead {
	t := triesAhead{l: l, a: locksAheadIn(ctx), show: ahead.show}
	if t.a.wantsStatus(ahead.show) {
		t.statusH = l.newHeld(ctx, statusLockName(ahead.show))
		t.status = l.lockStatusCall(ahead.show, t.statusH.key, t.statusH.token, aheadTTL, []string{next.ID})
	}
	if ahead.follow == nil || t.a == nil {
		return t
	}
	if repo, number := next.Repo, ahead.follow(next); number > 0 && t.a.wantsPull(pullLockName(repo, number)) {
		t.pullRepo, t.pullNumber = repo, number
		t.pullH = l.newHeld(ctx, pullLockName(repo, number))
		t.pull = l.lockPullCall(repo, number, t.pullH.key, t.pullH.token, next.ID, "ahead")
	}
	return t
}

func (t triesAhead) calls() []*scriptCall {
	var out []*scriptCall
	for _, c := range []*scriptCall{t.status, t.pull} {
		if c != nil {
			out = append(out, c)
		}
	}
	return out
}

// keep keeps in the context the locks the tries took.
func (t triesAhead) keep() {
	if t.status != nil {
		res, err := t.status.cmd.Slice()
		switch {
		case err != nil:
			t.statusH.unlock() // it may have taken the lock before failing
		case len(res) > 0 && res[0] == int64(1):
			t.statusH.keep(aheadTTL)
			if st, found, lock, err := t.l.statusLocked(t.show, t.statusH, res); err == nil { // else released, and LockStatus reports it
				hold(t.a, t.a.statuses, t.show, &statusAhead{st: st, found: found, lock: lock}, lock.Unlock)
			}
		}
	}
	if t.pull != nil {
		res, err := t.pull.cmd.StringSlice()
		switch {
		case err != nil:
			t.pullH.unlock()
		case len(res) >= 5 && res[0] == "1":
			t.pullH.keep(time.Minute)
			if locked, err := t.l.pullLocked(t.pullH, res); err == nil {
				locked.pointer = t.l.pullKey(t.pullRepo, t.pullNumber) // set by the write that releases the lock
				hold(t.a, t.a.pulls, pullLockName(t.pullRepo, t.pullNumber), &locked, locked.Unlock)
			}
		}
	}
}
