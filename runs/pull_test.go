package runs

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

func TestLockPullFollowsReadsAndReleases(t *testing.T) {
	ctx := context.Background()
	l := NewLedger(testenv.Redis(t))
	claim := func(key string) Run {
		r, _, err := l.Claim(ctx, newRun(key), time.Hour, 100, Subject{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	first, second := claim("flaky:hexpm/hexpm:test/a_test.exs:1"), claim("flaky:hexpm/hexpm:test/b_test.exs:2")

	none, err := l.LockPull(ctx, "hexpm/hexpm", 7, ReadFollower)
	if err != nil || none.Run.ID != "" || none.Previous != "" {
		t.Fatalf("a pull request nobody follows: %+v %v", none, err)
	}
	if n, _ := l.rdb.Exists(ctx, l.prefix+"lock:pull:hexpm/hexpm#7").Result(); n != 0 {
		t.Fatal("a pull request nobody follows was locked")
	}
	none.Unlock()

	cases := []struct {
		name           string
		which          PullFollow
		wantRun, wantP string
	}{
		{"the first run to name it follows it", PullFollow{RunID: first.ID, Follow: true}, first.ID, ""},
		{"its follower is read by the pull request", ReadFollower, first.ID, ""},
		{"a later run takes it over and learns whose it was", PullFollow{RunID: second.ID, Follow: true}, second.ID, first.ID},
		{"a run named is read whoever follows", PullFollow{RunID: first.ID}, first.ID, ""},
		{"the follower is the last that named it", ReadFollower, second.ID, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// GitHub names are case-insensitive: one lock and one pointer.
			locked, err := l.LockPull(ctx, "HexPM/Hexpm", 7, c.which)
			if err != nil {
				t.Fatal(err)
			}
			defer locked.Unlock()
			if locked.Run.ID != c.wantRun || locked.Previous != c.wantP || locked.Run.stored == "" {
				t.Fatalf("read %q (previous %q), want %q (previous %q)", locked.Run.ID, locked.Previous, c.wantRun, c.wantP)
			}
			if h, err := l.rdb.Get(ctx, l.prefix+"lock:pull:hexpm/hexpm#7").Result(); err != nil || h == "" {
				t.Fatalf("the lock is not held: %q %v", h, err)
			}
		})
	}

	if _, err := l.LockPull(ctx, "hexpm/hexpm", 7, PullFollow{RunID: "flaky:gone#1"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a run not stored: %v", err)
	}
	if n, _ := l.rdb.Exists(ctx, l.prefix+"lock:pull:hexpm/hexpm#7").Result(); n != 0 {
		t.Fatal("a failed LockPull kept the lock")
	}
}

func TestClaimSeenCountsTheSightingWithTheClaim(t *testing.T) {
	ctx := context.Background()
	rdb := testenv.Redis(t)
	l := NewLedger(rdb)
	// Both scripts loaded and a connection open, as in a running pitcrew.
	if _, _, _, err := l.ClaimSeen(ctx, newRun("flaky:o/r:test/w_test.exs:1"), time.Hour, 100, Subject{}, &Seen{Key: "w", Occurrence: "w"}); err != nil {
		t.Fatal(err)
	}
	trips := &commandCount{} // counts round trips: a command or a pipeline
	rdb.AddHook(trips)
	const key = "flaky:hexpm/hexpm:test/a_test.exs:1"
	seen := &Seen{Key: key, Occurrence: "issue:3", Where: "https://github.com/hexpm/hexpm/issues/3"}
	run, claim, s, err := l.ClaimSeen(ctx, newRun(key), time.Hour, 100, Subject{}, seen)
	if err != nil || claim != ClaimNew || s.Count != 1 || s.Where != seen.Where {
		t.Fatalf("%+v %s %+v %v", run, claim, s, err)
	}
	if trips.n != 1 {
		t.Fatalf("%d round trips, want 1", trips.n)
	}
	// The same occurrence again: attached, and counted once.
	if _, claim, s, err = l.ClaimSeen(ctx, newRun(key), time.Hour, 100, Subject{}, seen); err != nil || claim != ClaimAttached || s.Count != 1 {
		t.Fatalf("again: %s %+v %v", claim, s, err)
	}
	// A repository past its daily limit still counts the sighting.
	other := &Seen{Key: key, Occurrence: "issue:4"}
	if _, claim, s, err = l.ClaimSeen(ctx, newRun("flaky:hexpm/hexpm:test/b_test.exs:2"), time.Hour, 1, Subject{}, other); err != nil || claim != ClaimLimited || s.Count != 2 {
		t.Fatalf("limited: %s %+v %v", claim, s, err)
	}
	// A sighting that cannot be counted does not undo the claim.
	broken := "flaky:hexpm/hexpm:test/c_test.exs:3"
	rdb.Set(ctx, l.sightingKey(broken), "not a hash", time.Minute)
	if run, claim, s, err := l.ClaimSeen(ctx, newRun(broken), time.Hour, 100, Subject{}, &Seen{Key: broken, Occurrence: "issue:5"}); err != nil || claim != ClaimNew || run.ID == "" || s.Count != 0 {
		t.Fatalf("with a broken sighting: %+v %s %+v %v", run, claim, s, err)
	}
}

func TestRunScriptsRunsAScriptTheRedisHasNotLoaded(t *testing.T) {
	ctx := context.Background()
	l := NewLedger(testenv.Redis(t))
	// A body no Redis has seen: its EVALSHA answers NOSCRIPT.
	fresh := redis.NewScript(fmt.Sprintf("-- %d\nreturn redis.call('INCR', KEYS[1])", time.Now().UnixNano()))
	a := &scriptCall{script: fresh, keys: []string{l.prefix + "t:a"}}
	b := &scriptCall{script: fresh, keys: []string{l.prefix + "t:b"}}
	if err := l.runScripts(ctx, a, b); err != nil {
		t.Fatal(err)
	}
	if a.cmd.Val() != int64(1) || b.cmd.Val() != int64(1) {
		t.Fatalf("answers %v %v, want 1 1: each ran once", a.cmd.Val(), b.cmd.Val())
	}
	failing := &scriptCall{script: redis.NewScript("return redis.error_reply('no')")}
	if err := l.runScripts(ctx, a, failing); err == nil || a.cmd.Val() != int64(2) {
		t.Fatalf("a failing script: %v, the other answered %v", err, a.cmd.Val())
	}
}

func TestALockedPullsWriteReleasesItsLock(t *testing.T) {
	ctx := context.Background()
	rdb := testenv.Redis(t)
	l := NewLedger(rdb)
	run, _, err := l.Claim(ctx, newRun("flaky:hexpm/hexpm:test/a_test.exs:1"), time.Hour, 100, Subject{})
	if err != nil {
		t.Fatal(err)
	}
	lockKey := l.prefix + "lock:pull:hexpm/hexpm#7"
	locked, err := l.LockPull(ctx, "hexpm/hexpm", 7, PullFollow{RunID: run.ID, Follow: true})
	if err != nil {
		t.Fatal(err)
	}
	// A change that writes nothing keeps the lock.
	if _, err := locked.Update(ctx, locked.Run, func(*Run) error { return errors.New("no") }); err == nil {
		t.Fatal("a refused change wrote")
	}
	if n, _ := rdb.Exists(ctx, lockKey).Result(); n != 1 {
		t.Fatal("a refused change released the lock")
	}
	loadScripts(t, rdb)
	counter := &commandCount{}
	rdb.AddHook(counter)
	updated, err := locked.Update(ctx, locked.Run, func(r *Run) error { r.PR = &Pull{Number: 7, State: PullOpen}; return nil })
	if err != nil || updated.PR == nil {
		t.Fatal(err)
	}
	locked.Unlock() // released already: no round trip
	if n, _ := rdb.Exists(ctx, lockKey).Result(); n != 0 || counter.n != 2 {
		t.Fatalf("lock held %d after %d round trips; want released by the write, then one EXISTS", n, counter.n)
	}
}
