package runs

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

func TestAWriteTakesTheStatusLockItsCallerShowsNext(t *testing.T) {
	rdb := testenv.Redis(t)
	l := NewLedger(rdb)
	s := Subject{Repo: "hexpm/hexpm", Issue: 3}
	run, _, err := l.Claim(context.Background(), newRun("flaky:hexpm/hexpm:test/a_test.exs:1"), time.Hour, 10, s)
	if err != nil {
		t.Fatal(err)
	}
	ctx, release := WithLocksAhead(context.Background())
	defer release()
	started, err := l.UpdateShowing(ctx, run, func(r *Run) error { r.State, r.SessionID = Started, "ses_a"; return nil }, s)
	if err != nil {
		t.Fatal(err)
	}
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
	if got := found[run.ID]; got.State != Started || got.SessionID != "ses_a" || got.stored != started.stored {
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
	run, _, err := l.Claim(context.Background(), newRun("flaky:hexpm/hexpm:test/b_test.exs:1"), time.Hour, 10, s)
	if err != nil {
		t.Fatal(err)
	}
	ctx, release := WithLocksAhead(context.Background())
	defer release()
	if _, err := l.UpdateShowing(ctx, run, func(r *Run) error { r.State = Started; return nil }, s); err != nil {
		t.Fatal(err)
	}
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
	run, _, err := l.Claim(context.Background(), newRun("flaky:hexpm/hexpm:test/c_test.exs:1"), time.Hour, 10, s)
	if err != nil {
		t.Fatal(err)
	}
	if run, err = l.UpdateShowing(context.Background(), run, func(r *Run) error { r.State = Started; return nil }, s); err != nil {
		t.Fatal(err)
	}
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
