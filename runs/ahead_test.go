package runs

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/sandbox"
)

// startedShowing is a run claimed for key and subscribed to s, then
// started (session "ses_"+key) by a write that takes the status lock of s
// ahead when ctx allows it.
func startedShowing(t *testing.T, ctx context.Context, l *Ledger, key string, s Subject) Run {
	t.Helper()
	run, _, err := l.Claim(context.Background(), newRun(key), time.Hour, 10, s)
	if err == nil {
		run, err = l.UpdateShowing(ctx, run, func(r *Run) error { r.State, r.SessionID = Started, "ses_"+key; return nil }, s)
	}
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func TestAWriteTakesTheStatusLockItsCallerShowsNext(t *testing.T) {
	rdb := testenv.Redis(t)
	l := NewLedger(rdb)
	s := Subject{Repo: "hexpm/hexpm", Issue: 3}
	ctx, release := WithLocksAhead(context.Background())
	defer release()
	run := startedShowing(t, ctx, l, "flaky:hexpm/hexpm:test/a_test.exs:1", s)
	// Held: another process waits for it.
	if _, _, _, err := l.LockStatus(context.Background(), s, time.Second, 50*time.Millisecond); !errors.Is(err, ErrLocked) {
		t.Fatalf("the status lock was not taken with the write: %v", err)
	}
	trips := &testenv.Trips{}
	rdb.AddHook(trips)
	_, found, lock, err := l.LockStatus(ctx, s, time.Second, time.Second, run.ID)
	if err != nil || trips.RoundTrips.Load() != 0 {
		t.Fatalf("LockStatus after the write: %d round trips, %v", trips.RoundTrips.Load(), err)
	}
	if got := found[run.ID]; got.State != Started || got.SessionID != run.SessionID || got.stored != run.stored {
		t.Fatalf("the status shows the run as %s %q, not as written", got.State, got.SessionID)
	}
	if err := lock.SaveAndUnlock(ctx, Status{CommentID: 9}); err != nil {
		t.Fatal(err)
	}
	if st, _, lock, err := l.LockStatus(context.Background(), s, time.Second, time.Second); err != nil || st.CommentID != 9 {
		t.Fatalf("after the save: %+v %v", st, err)
	} else {
		lock.Unlock()
	}
}

func TestALockTakenAheadIsGivenUpBeforeWaitingForAnother(t *testing.T) {
	l := NewLedger(testenv.Redis(t))
	s := Subject{Repo: "hexpm/hexpm", Issue: 4}
	ctx, release := WithLocksAhead(context.Background())
	defer release()
	startedShowing(t, ctx, l, "flaky:hexpm/hexpm:test/b_test.exs:1", s)
	unlock, err := l.Lock(ctx, "pull:hexpm/hexpm#77", time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	// Holding the status lock while waiting for another could deadlock
	// with a holder of that one waiting for the status: it was given up.
	_, _, lock, err := l.LockStatus(context.Background(), s, time.Second, 50*time.Millisecond)
	if err != nil {
		t.Fatalf("the lock taken ahead is still held: %v", err)
	}
	lock.Unlock()
}

func TestWhatNobodyTookIsReleasedAndNothingIsTakenOutsideSuchAContext(t *testing.T) {
	l := NewLedger(testenv.Redis(t))
	s := Subject{Repo: "hexpm/hexpm", Issue: 5}
	run := startedShowing(t, context.Background(), l, "flaky:hexpm/hexpm:test/c_test.exs:1", s)
	if _, _, lock, err := l.LockStatus(context.Background(), s, time.Second, 50*time.Millisecond); err != nil {
		t.Fatalf("a write outside a context that takes locks ahead took one: %v", err)
	} else {
		lock.Unlock()
	}
	ctx, release := WithLocksAhead(context.Background())
	if _, err := l.UpdateShowing(ctx, run, func(r *Run) error { r.State = Completed; return nil }, s); err != nil {
		t.Fatal(err)
	}
	release()
	if _, _, lock, err := l.LockStatus(context.Background(), s, time.Second, 50*time.Millisecond); err != nil {
		t.Fatalf("a lock nobody took was kept: %v", err)
	} else {
		lock.Unlock()
	}
	// Nor is a create mark left behind: the status is not marked as being created.
	if n, _ := l.rdb.Exists(context.Background(), l.createMarkKey(s)).Result(); n != 0 {
		t.Fatal("the released lock left its create mark")
	}
}

func TestAPullRequestsLastWriteTakesTheStatusLockOfItsRunsOneSubject(t *testing.T) {
	l := NewLedger(testenv.Redis(t))
	s := Subject{Repo: "hexpm/hexpm", Issue: 6}
	run, _, err := l.Claim(context.Background(), newRun("flaky:hexpm/hexpm:test/d_test.exs:1"), time.Hour, 10, s)
	if err != nil {
		t.Fatal(err)
	}
	ctx, release := WithLocksAhead(context.Background())
	defer release()
	locked, err := l.LockPull(ctx, "hexpm/hexpm", 77, PullFollow{RunID: run.ID, Follow: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := locked.Update(ctx, locked.Run, func(r *Run) error { r.PR = &Pull{Number: 77, State: PullOpen}; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := l.LockStatus(context.Background(), s, time.Second, 50*time.Millisecond); !errors.Is(err, ErrLocked) {
		t.Fatalf("the status lock was not taken with the pull request's write: %v", err)
	}
	if _, found, lock, err := l.LockStatus(ctx, s, time.Second, time.Second); err != nil || found[run.ID].PR == nil {
		t.Fatalf("the status does not show the pull request just written: %v", err)
	} else {
		lock.Unlock()
	}
	// The pull request's own lock went with the write.
	again, err := l.LockPull(context.Background(), "hexpm/hexpm", 77, ReadFollower)
	if err != nil {
		t.Fatal(err)
	}
	again.Unlock()
}

func TestALockTakenAheadThatNobodyTakesOverSoonIsGivenUp(t *testing.T) {
	defer func(hold time.Duration) { aheadHold = hold }(aheadHold)
	aheadHold = 50 * time.Millisecond
	l := NewLedger(testenv.Redis(t))
	s := Subject{Repo: "hexpm/hexpm", Issue: 8}
	ctx, release := WithLocksAhead(context.Background())
	defer release()
	startedShowing(t, ctx, l, "flaky:hexpm/hexpm:test/e_test.exs:1", s)
	// The task goes on with slow work: other writers wait no longer than
	// aheadHold (well within this wait).
	_, _, lock, err := l.LockStatus(context.Background(), s, time.Second, 2*time.Second)
	if err != nil {
		t.Fatalf("another writer still waits: %v", err)
	}
	lock.Unlock()
	// The task's own show then locks as usual.
	if _, _, lock, err := l.LockStatus(ctx, s, time.Second, time.Second); err != nil {
		t.Fatal(err)
	} else {
		lock.Unlock()
	}
}

func TestAHandedOverLockReadsTheRunsItDidNotSee(t *testing.T) {
	rdb := testenv.Redis(t)
	l := NewLedger(rdb)
	s := Subject{Repo: "hexpm/hexpm", Issue: 10}
	other, _, err := l.Claim(context.Background(), newRun("flaky:hexpm/hexpm:test/f_test.exs:1"), time.Hour, 10, Subject{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, release := WithLocksAhead(context.Background())
	defer release()
	run := startedShowing(t, ctx, l, "flaky:hexpm/hexpm:test/g_test.exs:1", s)
	trips := &testenv.Trips{}
	rdb.AddHook(trips)
	_, found, lock, err := l.LockStatus(ctx, s, time.Second, time.Second, run.ID, other.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	if found[other.ID].ID != other.ID || found[run.ID].State != Started || trips.RoundTrips.Load() != 1 {
		t.Fatalf("found %v in %d round trips", found, trips.RoundTrips.Load())
	}
}

// recordedWithPull records run's outcome, an answer naming pull request
// 77, in ctx; the run's caller follows that pull request next.
func recordedWithPull(t *testing.T, ctx context.Context, l *Ledger, run Run) (Run, bool) {
	t.Helper()
	answer := "Fixed in https://github.com/hexpm/hexpm/pull/77\n```json\n{\"outcome\":\"fixed\",\"pr_url\":\"https://github.com/hexpm/hexpm/pull/77\"}\n```"
	f := newFinisher(l, &session{s: sandbox.Session{ID: run.SessionID, Status: sandbox.StatusCompleted, Result: answer}})
	f.Follows = func(r Run) int {
		if r.Result != nil && r.Result.PRURL != "" {
			return 77
		}
		return 0
	}
	ended, recorded, err := f.Record(ctx, run, "cb:1")
	if err != nil {
		t.Fatal(err)
	}
	return ended, recorded
}

// startedWithPullFollowedBy is a started run, with pull request 77
// followed by run previous.
func startedWithPullFollowedBy(t *testing.T, l *Ledger, key, previous string) Run {
	t.Helper()
	run, _, err := l.Claim(context.Background(), newRun(key), time.Hour, 10, Subject{})
	if err == nil {
		run, err = l.Move(context.Background(), run, Started, func(r *Run) { r.SessionID = "ses_" + key })
	}
	if err == nil {
		err = l.rdb.Set(context.Background(), l.pullKey("hexpm/hexpm", 77), previous, time.Hour).Err()
	}
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func TestTheOutcomesWriteTakesTheLockOfThePullRequestItFollows(t *testing.T) {
	rdb := testenv.Redis(t)
	l := NewLedger(rdb)
	run := startedWithPullFollowedBy(t, l, "flaky:hexpm/hexpm:test/h_test.exs:1", "earlier#1")
	ctx, release := WithLocksAhead(context.Background())
	defer release()
	if ended, recorded := recordedWithPull(t, ctx, l, run); !recorded || ended.State != Completed {
		t.Fatalf("recorded %v, %s", recorded, ended.State)
	}
	if n, _ := rdb.Exists(context.Background(), l.prefix+"lock:"+pullLockName("hexpm/hexpm", 77)).Result(); n != 1 {
		t.Fatal("the pull request's lock was not taken with the outcome")
	}
	trips := &testenv.Trips{}
	rdb.AddHook(trips)
	locked, err := l.LockPull(ctx, "hexpm/hexpm", 77, PullFollow{RunID: run.ID, Follow: true})
	if err != nil || trips.RoundTrips.Load() != 0 || locked.Run.State != Completed || locked.Previous != "earlier#1" {
		t.Fatalf("LockPull after the outcome: %d round trips, run %s, previous %q, %v", trips.RoundTrips.Load(), locked.Run.State, locked.Previous, err)
	}
	// The pull request points at the run once the run's write releases the lock.
	if id, _ := l.PullRun(context.Background(), "hexpm/hexpm", 77); id != "earlier#1" {
		t.Fatalf("the pointer moved before the write: %q", id)
	}
	if _, err := locked.Update(ctx, locked.Run, func(r *Run) error { r.PR = &Pull{Number: 77, State: PullOpen}; return nil }); err != nil {
		t.Fatal(err)
	}
	if id, _ := l.PullRun(context.Background(), "hexpm/hexpm", 77); id != run.ID {
		t.Fatalf("the pull request points at %q, not at the run", id)
	}
}

func TestAPullRequestLockGivenUpOrNotWrittenLeavesItsFollowerAsItWas(t *testing.T) {
	defer func(hold time.Duration) { aheadHold = hold }(aheadHold)
	aheadHold = 20 * time.Millisecond
	l := NewLedger(testenv.Redis(t))
	run := startedWithPullFollowedBy(t, l, "flaky:hexpm/hexpm:test/i_test.exs:1", "earlier#1")
	ctx, release := WithLocksAhead(context.Background())
	defer release()
	stale := run
	recordedWithPull(t, ctx, l, run)
	time.Sleep(100 * time.Millisecond) // given up, not taken over
	locked, err := l.LockPull(ctx, "hexpm/hexpm", 77, PullFollow{RunID: run.ID, Follow: true})
	if err != nil || locked.Previous != "earlier#1" {
		t.Fatalf("previous %q after the lock was given up, %v", locked.Previous, err)
	}
	locked.Unlock()
	// A stale copy's outcome is refused, and moves nothing.
	if err := l.rdb.Set(context.Background(), l.pullKey("hexpm/hexpm", 77), "later#1", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if _, recorded := recordedWithPull(t, ctx, l, stale); recorded {
		t.Fatal("an outcome was recorded twice")
	}
	release()
	if id, _ := l.PullRun(context.Background(), "hexpm/hexpm", 77); id != "later#1" {
		t.Fatalf("a refused write moved the pull request to %q", id)
	}
}
