package runs

import (
	"context"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

// A status not on GitHub yet is marked by its lock as one a create may
// follow: a holder that dies after sending the create leaves the mark, so
// the next holder looks for what it created; one that created nothing takes
// the mark with it.
func TestAStatusLockMarksACreateThatMayFollow(t *testing.T) {
	ctx := context.Background()
	rdb := testenv.Redis(t)
	l := NewLedger(rdb)
	lock := func(s Subject) (Status, *StatusLock) {
		st, _, sl, err := l.LockStatus(ctx, s, time.Minute, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return st, sl
	}
	// die is a holder killed with the lock held: the lock expires, the rest stays.
	die := func(sl *StatusLock) {
		close(sl.held.stop)
		rdb.Del(ctx, sl.held.key)
	}

	dead := Subject{Repo: "hexpm/hexpm", Issue: 1}
	_, sl := lock(dead)
	counter := &commandCount{}
	rdb.AddHook(counter)
	if err := sl.BeforeCreate(ctx, Status{InstallationID: 1}); err != nil || counter.n != 0 {
		t.Fatalf("marked by the lock, BeforeCreate took %d round trips: %v", counter.n, err)
	}
	die(sl)
	if st, sl := lock(dead); !st.Creating {
		t.Fatal("after a holder died mid-create, the next is not told to look first")
	} else {
		sl.Unlock() // created nothing either: the earlier mark stays
		if st, sl := lock(dead); !st.Creating {
			t.Fatal("an earlier holder's mark was dropped by one that created nothing")
		} else if err := sl.SaveAndUnlock(ctx, Status{InstallationID: 1, CommentID: 9}); err != nil {
			t.Fatal(err)
		}
	}
	if st, sl := lock(dead); st.Creating || st.CommentID != 9 || sl.marked {
		t.Fatalf("once saved with its comment: %+v, marked %v", st, sl.marked)
	} else {
		// A comment deleted by someone: without a mark, the create is saved first.
		if err := sl.BeforeCreate(ctx, Status{InstallationID: 1}); err != nil {
			t.Fatal(err)
		}
		die(sl)
		if st, sl := lock(dead); !st.Creating {
			t.Fatal("a create after a deleted comment was not recorded")
		} else {
			sl.Unlock()
		}
	}

	idle := Subject{Repo: "hexpm/hexpm", Issue: 2}
	_, sl = lock(idle)
	sl.Unlock() // nothing created
	if n, _ := rdb.Exists(ctx, l.createMarkKey(idle), l.prefix+"lock:status:"+idle.String()).Result(); n != 0 {
		t.Fatalf("a holder that created nothing left %d keys", n)
	}
	if st, sl := lock(idle); st.Creating {
		t.Fatal("a holder that created nothing makes the next look for a comment")
	} else {
		sl.Unlock()
	}
}
