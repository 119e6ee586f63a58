package runs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

// heldSaveOf locks s in a context that holds saves back and saves st:
// the save is held back, and the writer's deferred Unlock does not let
// the lock go before it.
func heldSaveOf(t *testing.T, l *Ledger, s Subject, st Status) context.Context {
	t.Helper()
	ctx, release := WithLocksAhead(context.Background())
	t.Cleanup(release)
	HoldStatusSaves(ctx)
	_, _, lock, err := l.LockStatus(ctx, s, time.Minute, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := lock.SaveAndUnlock(ctx, st); err != nil {
		t.Fatal(err)
	}
	lock.Unlock()
	return ctx
}

func lockKey(l *Ledger, s Subject) string { return l.prefix + "lock:" + statusLockName(s) }

// loseLock makes s's status lock another holder's, as when the lock
// expired while its holder stalled and someone else took it.
func loseLock(t *testing.T, l *Ledger, s Subject) {
	t.Helper()
	if err := l.rdb.Set(context.Background(), lockKey(l, s), "someone-else", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
}

// stored is s's status as stored, and whether its lock is free.
func stored(t *testing.T, l *Ledger, s Subject) (Status, bool) {
	t.Helper()
	st, err := l.Status(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	n, err := l.rdb.Exists(context.Background(), lockKey(l, s)).Result()
	if err != nil {
		t.Fatal(err)
	}
	return st, n == 0
}

func TestAHeldBackSaveGoesWithTheDeliverysRecordInOneRoundTrip(t *testing.T) {
	rdb := testenv.Redis(t)
	l := NewLedger(rdb)
	s := Subject{Repo: "hexpm/hexpm", Issue: 21}
	ctx := heldSaveOf(t, l, s, Status{CommentID: 7})
	if st, free := stored(t, l, s); st.CommentID != 0 || free {
		t.Fatalf("the save was not held back: %+v, lock free %v", st, free)
	}
	// The script loaded once, as on any Redis pitcrew has talked to.
	if err := l.RecordDelivery(context.Background(), DeliveryRecord{ID: "d-0"}, "", 0); err != nil {
		t.Fatal(err)
	}
	trips := &testenv.Trips{}
	rdb.AddHook(trips)
	if err := l.RecordDelivery(ctx, DeliveryRecord{ID: "d-21", Outcome: "handled"}, "mark:d-21", time.Hour); err != nil {
		t.Fatal(err)
	}
	if n := trips.RoundTrips.Load(); n != 1 {
		t.Fatalf("%d round trips for the save and the record", n)
	}
	if st, free := stored(t, l, s); st.CommentID != 7 || !free {
		t.Fatalf("after the record: %+v, lock free %v", st, free)
	}
	if ttl := rdb.TTL(context.Background(), "mark:d-21").Val(); ttl <= 0 || ttl > time.Hour {
		t.Fatalf("the processed mark has TTL %v", ttl)
	}
	if got, _ := l.RecentDeliveries(context.Background(), 10); len(got) != 2 || got[0].ID != "d-21" {
		t.Fatalf("recent deliveries %+v", got)
	}
}

func TestAHeldBackSaveWhoseLockWasLostMarksNothingProcessed(t *testing.T) {
	rdb := testenv.Redis(t)
	l := NewLedger(rdb)
	s := Subject{Repo: "hexpm/hexpm", Issue: 22}
	ctx := heldSaveOf(t, l, s, Status{CommentID: 7})
	// The lock expired and another holder took it.
	loseLock(t, l, s)
	err := l.RecordDelivery(ctx, DeliveryRecord{ID: "d-22", Outcome: "handled"}, "mark:d-22", time.Hour)
	if !errors.Is(err, ErrLockLost) {
		t.Fatalf("RecordDelivery: %v", err)
	}
	if n := rdb.Exists(context.Background(), "mark:d-22").Val(); n != 0 {
		t.Fatal("the delivery was marked processed although its status save was refused")
	}
	if st, _ := stored(t, l, s); st.CommentID != 0 {
		t.Fatalf("a save without its lock was stored: %+v", st)
	}
	if got, _ := l.RecentDeliveries(context.Background(), 10); len(got) != 0 {
		t.Fatalf("recorded %+v", got)
	}
}

// A save held back is sent before any other round trip of its context,
// so what the context reads or writes next comes after it.
func TestAHeldBackSaveIsSentBeforeItsContextsNextRoundTrip(t *testing.T) {
	l := NewLedger(testenv.Redis(t))
	s := Subject{Repo: "hexpm/hexpm", Issue: 23}
	for name, next := range map[string]func(ctx context.Context) error{
		"locking its subject again": func(ctx context.Context) error {
			_, _, lock, err := l.LockStatus(ctx, s, time.Minute, 100*time.Millisecond)
			if err == nil {
				lock.Unlock()
			}
			return err
		},
		"locking anything": func(ctx context.Context) error {
			unlock, err := l.Lock(ctx, "other", time.Minute, time.Second)
			if err == nil {
				unlock()
			}
			return err
		},
		"reading its status": func(ctx context.Context) error {
			st, err := l.Status(ctx, s)
			if err == nil && st.CommentID != 8 {
				return errors.New("read the status as it was before the save")
			}
			return err
		},
		"writing anything":          func(ctx context.Context) error { return l.MarkCommandDone(ctx, s.Repo, "comment:1") },
		"giving up its locks ahead": func(ctx context.Context) error { ReleaseLocksAhead(ctx); return nil },
	} {
		ctx := heldSaveOf(t, l, s, Status{CommentID: 8})
		if err := next(ctx); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if st, free := stored(t, l, s); st.CommentID != 8 || !free {
			t.Fatalf("%s: the save held back was not sent first: %+v, lock free %v", name, st, free)
		}
		if err := l.SaveStatus(context.Background(), s, Status{}); err != nil {
			t.Fatal(err)
		}
	}
}

// A save refused (its lock lost) fails the context's next round trip, so
// what the handler marks done after it is not marked, and every round trip
// after that.
func TestARefusedSaveFailsTheNextRoundTrip(t *testing.T) {
	rdb := testenv.Redis(t)
	l := NewLedger(rdb)
	s := Subject{Repo: "hexpm/hexpm", Issue: 28}
	ctx := heldSaveOf(t, l, s, Status{CommentID: 8})
	loseLock(t, l, s)
	if err := l.MarkCommandDone(ctx, s.Repo, "comment:2"); !errors.Is(err, ErrLockLost) {
		t.Fatalf("MarkCommandDone after a refused save: %v", err)
	}
	if done, _ := l.CommandDone(context.Background(), s.Repo, "comment:2"); done {
		t.Fatal("marked done after a refused save")
	}
	// A caller that ignores the error does not hide it from the record.
	if err := l.RecordDelivery(ctx, DeliveryRecord{ID: "d-28"}, "mark:d-28", time.Hour); !errors.Is(err, ErrLockLost) {
		t.Fatalf("RecordDelivery after a refusal reported to another round trip: %v", err)
	}
	if rdb.Exists(context.Background(), "mark:d-28").Val() != 0 {
		t.Fatal("marked processed after a refused save")
	}
}

// A save held back while another was, with no round trip between them
// (the second subject's lock taken ahead), sends the first; if the first
// was refused, the record reports it and the second is still sent, its
// lock let go.
func TestASecondHeldBackSaveSendsTheFirst(t *testing.T) {
	rdb := testenv.Redis(t)
	l := NewLedger(rdb)
	first, second := Subject{Repo: "hexpm/hexpm", Issue: 29}, Subject{Repo: "hexpm/hexpm", Issue: 30}
	loadScripts(t, rdb)
	for _, lost := range []bool{false, true} {
		for _, s := range []Subject{first, second} {
			if err := l.SaveStatus(context.Background(), s, Status{}); err != nil {
				t.Fatal(err)
			}
		}
		ctx, release := WithLocksAhead(context.Background())
		HoldStatusSaves(ctx)
		_, _, lock, err := l.LockStatus(ctx, first, time.Minute, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		startedShowing(t, ctx, l, fmt.Sprintf("flaky:hexpm/hexpm:test/held_test.exs:%v", lost), second)
		if err := lock.SaveAndUnlock(ctx, Status{CommentID: 1}); err != nil {
			t.Fatal(err)
		}
		if lost {
			loseLock(t, l, first)
		}
		trips := &testenv.Trips{}
		rdb.AddHook(trips)
		_, _, lock, err = l.LockStatus(ctx, second, time.Minute, time.Second)
		if err == nil {
			err = lock.SaveAndUnlock(ctx, Status{CommentID: 2})
		}
		if err != nil || trips.RoundTrips.Load() != 1 {
			t.Fatalf("lock lost %v: the second save, after %d round trips: %v", lost, trips.RoundTrips.Load(), err)
		}
		if st, free := stored(t, l, first); lost == (st.CommentID == 1) || lost == free {
			t.Fatalf("lock lost %v: the first save was not sent: %+v, lock free %v", lost, st, free)
		}
		err = l.RecordDelivery(ctx, DeliveryRecord{ID: "d"}, "", 0)
		if lost != errors.Is(err, ErrLockLost) || !lost && err != nil {
			t.Fatalf("lock lost %v: RecordDelivery %v", lost, err)
		}
		if st, free := stored(t, l, second); st.CommentID != 2 || !free {
			t.Fatalf("lock lost %v: the second save was not sent: %+v, lock free %v", lost, st, free)
		}
		release()
		l.rdb.Del(context.Background(), lockKey(l, first)) // lost to someone else above
	}
}

// slowScripts delays every script while on.
type slowScripts struct{ on atomic.Bool }

func (h *slowScripts) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *slowScripts) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.on.Load() && strings.HasPrefix(cmd.Name(), "eval") {
			time.Sleep(300 * time.Millisecond)
		}
		return next(ctx, cmd)
	}
}
func (h *slowScripts) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// A save sent after aheadHold is waited for by the record, which reports
// its refusal; the record is written after a cancel of its context.
func TestTheRecordWaitsForASaveUnderWayAndOutlivesACancel(t *testing.T) {
	defer func(hold time.Duration) { aheadHold = hold }(aheadHold)
	aheadHold = 20 * time.Millisecond
	rdb := testenv.Redis(t)
	slow := &slowScripts{}
	rdb.AddHook(slow)
	l := NewLedger(rdb)
	s := Subject{Repo: "hexpm/hexpm", Issue: 31}
	ctx := heldSaveOf(t, l, s, Status{CommentID: 3})
	loseLock(t, l, s)
	slow.on.Store(true)
	time.Sleep(100 * time.Millisecond) // the save is under way, and will be refused
	err := l.RecordDelivery(ctx, DeliveryRecord{ID: "d"}, "mark:31", time.Hour)
	slow.on.Store(false)
	if !errors.Is(err, ErrLockLost) || rdb.Exists(context.Background(), "mark:31").Val() != 0 {
		t.Fatalf("RecordDelivery while a refused save was under way: %v, marked %d", err, rdb.Exists(context.Background(), "mark:31").Val())
	}
	s = Subject{Repo: "hexpm/hexpm", Issue: 32}
	cancelled, cancel := context.WithCancel(heldSaveOf(t, l, s, Status{CommentID: 4}))
	cancel() // asynq hands the task back, after its handler ended
	if err := l.RecordDelivery(cancelled, DeliveryRecord{ID: "d"}, "mark:32", time.Hour); err != nil {
		t.Fatal(err)
	}
	if st, free := stored(t, l, s); st.CommentID != 4 || !free || rdb.Exists(context.Background(), "mark:32").Val() != 1 {
		t.Fatalf("after a cancel: %+v, lock free %v", st, free)
	}
}

// A save held back that nobody records is sent after aheadHold; if it was
// refused then, the delivery's record reports it and marks nothing.
func TestAHeldBackSaveNobodyRecordsIsSentSoon(t *testing.T) {
	defer func(hold time.Duration) { aheadHold = hold }(aheadHold)
	aheadHold = 50 * time.Millisecond
	rdb := testenv.Redis(t)
	l := NewLedger(rdb)
	for i, lost := range []bool{false, true} {
		s := Subject{Repo: "hexpm/hexpm", Issue: 25 + i}
		ctx := heldSaveOf(t, l, s, Status{CommentID: 9})
		if lost {
			loseLock(t, l, s)
			time.Sleep(200 * time.Millisecond) // sent, and refused
		} else {
			// Another writer waits no longer than aheadHold.
			st, _, lock, err := l.LockStatus(context.Background(), s, time.Second, 2*time.Second)
			if err != nil || st.CommentID != 9 {
				t.Fatalf("another writer: %+v %v", st, err)
			}
			lock.Unlock()
		}
		mark := fmt.Sprintf("mark:%d", i)
		err := l.RecordDelivery(ctx, DeliveryRecord{ID: "d"}, mark, time.Hour)
		if marked := rdb.Exists(context.Background(), mark).Val() == 1; lost && (!errors.Is(err, ErrLockLost) || marked) || !lost && (err != nil || !marked) {
			t.Fatalf("lock lost %v: RecordDelivery %v, marked processed %v", lost, err, marked)
		}
	}
}

// Outside a context that holds saves back, a save is sent at once.
func TestASaveIsNotHeldBackUnlessTheContextSaysSo(t *testing.T) {
	rdb := testenv.Redis(t)
	l := NewLedger(rdb)
	s := Subject{Repo: "hexpm/hexpm", Issue: 27}
	ctx, release := WithLocksAhead(context.Background())
	defer release()
	_, _, lock, err := l.LockStatus(ctx, s, time.Minute, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := lock.SaveAndUnlock(ctx, Status{CommentID: 11}); err != nil {
		t.Fatal(err)
	}
	if st, free := stored(t, l, s); st.CommentID != 11 || !free {
		t.Fatalf("%+v, lock free %v", st, free)
	}
}
