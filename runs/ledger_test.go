package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

func newRun(key string) Run {
	return Run{Key: key, Kind: KindFlaky, InstallationID: 1, Repo: "hexpm/hexpm", Origin: 3, About: "test/a_test.exs:1", Delivery: "d1"}
}

func TestClaimLifecycle(t *testing.T) {
	ctx := context.Background()
	l := NewLedger(testenv.Redis(t))
	clock := time.Unix(1_800_000_000, 0)
	l.now = func() time.Time { return clock }
	const key = "flaky:hexpm/hexpm:test/a_test.exs:1"

	first, claim, err := l.Claim(ctx, newRun(key), time.Hour, 100, Subject{})
	if err != nil || claim != ClaimNew || first.ID != key+"#1" || first.State != Queued {
		t.Fatalf("first claim: %+v %s %v", first, claim, err)
	}
	if _, claim, _ := l.Claim(ctx, newRun(key), time.Hour, 100, Subject{}); claim != ClaimAttached {
		t.Fatalf("claim of a live key = %s", claim)
	}
	if _, err := l.Move(ctx, first, Completed, nil); !errors.As(err, new(ErrTransition)) {
		t.Fatalf("queued → completed allowed: %v", err)
	}
	started, err := l.Move(ctx, first, Started, func(r *Run) { r.SessionID = "ses_1" })
	if err != nil || started.StartedAt.IsZero() {
		t.Fatalf("start: %+v %v", started, err)
	}
	if got, err := l.BySession(ctx, "ses_1"); err != nil || got.ID != first.ID {
		t.Fatalf("BySession = %+v %v", got, err)
	}
	if ids, _ := l.StartedBefore(ctx, clock.Add(time.Second), 10); len(ids) != 1 || ids[0] != "ses_1" {
		t.Fatalf("started index = %v", ids)
	}
	if _, err := l.Move(ctx, first, Completed, nil); err != nil {
		t.Fatal(err)
	}

	if ids, _ := l.StartedBefore(ctx, clock.Add(time.Second), 10); len(ids) != 0 {
		t.Fatalf("an ended run is still indexed as started: %v", ids)
	}
	clock = clock.Add(59 * time.Minute)
	if got, claim, _ := l.Claim(ctx, newRun(key), time.Hour, 100, Subject{}); claim != ClaimCooldown || got.ID != first.ID {
		t.Fatalf("claim within cooldown = %s %s", claim, got.ID)
	}
	clock = clock.Add(2 * time.Minute)
	second, claim, err := l.Claim(ctx, newRun(key), time.Hour, 100, Subject{})
	if err != nil || claim != ClaimNew || second.ID != key+"#2" {
		t.Fatalf("claim after cooldown: %+v %s %v", second, claim, err)
	}

	// A failed run holds no cooldown: relabelling retries at once.
	if _, err := l.Move(ctx, second, Failed, func(r *Run) { r.Error = "boom" }); err != nil {
		t.Fatal(err)
	}
	if third, claim, _ := l.Claim(ctx, newRun(key), time.Hour, 100, Subject{}); claim != ClaimNew || third.ID != key+"#3" {
		t.Fatalf("claim after failure = %s %s", claim, third.ID)
	}
	if _, claim, _ := l.Claim(ctx, newRun("other"), time.Hour, 0, Subject{}); claim != ClaimLimited {
		t.Fatalf("claim without allowNew = %s", claim)
	}
	if _, err := l.BySession(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
}

func TestClaimConcurrent(t *testing.T) {
	ctx := context.Background()
	l := NewLedger(testenv.Redis(t))
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[Claim]int{}
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, c, err := l.Claim(ctx, newRun("k"), time.Hour, 100, Subject{})
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			counts[c]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if counts[ClaimNew] != 1 || counts[ClaimAttached] != 49 {
		t.Fatalf("claims = %v", counts)
	}
}

func TestLockExcludes(t *testing.T) {
	ctx := context.Background()
	l := NewLedger(testenv.Redis(t))
	unlock, err := l.Lock(ctx, "issue", time.Second, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Lock(ctx, "issue", time.Second, 30*time.Millisecond); !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock: %v", err)
	}
	unlock()
	if _, err := l.Lock(ctx, "issue", time.Second, 0); err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
}

func TestDailyLimit(t *testing.T) {
	ctx := context.Background()
	l := NewLedger(testenv.Redis(t))
	claim := func(key, repo string) Claim {
		r := newRun(key)
		r.Repo = repo
		_, c, err := l.Claim(ctx, r, time.Hour, 2, Subject{})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if claim("a", "o/r") != ClaimNew || claim("b", "o/r") != ClaimNew {
		t.Fatal("first two runs refused")
	}
	if c := claim("a", "o/r"); c != ClaimAttached {
		t.Fatalf("attaching to a live run is %s; it must not need a run of the day", c)
	}
	if c := claim("c", "o/r"); c != ClaimLimited {
		t.Fatalf("third new run = %s", c)
	}
	if c := claim("c", "o/other"); c != ClaimNew {
		t.Fatalf("limit shared across repositories: %s", c)
	}
}

func TestRunsStoredByEarlierVersionsReadIntoAboutAndData(t *testing.T) {
	for _, c := range []struct{ stored, about, data string }{
		{`{"kind":"flaky","test":"test/a_test.exs:3","issue":4}`, "test/a_test.exs:3", ""},
		{`{"kind":"migration","files":["priv/repo/migrations/1_a.exs"]}`, "", `{"files":["priv/repo/migrations/1_a.exs"]}`},
		{`{"kind":"alert","alert_id":"123"}`, "123", ""},
		{`{"kind":"flaky","about":"test/b_test.exs:1","data":{"x":1}}`, "test/b_test.exs:1", `{"x":1}`},
	} {
		var r Run
		if err := json.Unmarshal([]byte(c.stored), &r); err != nil {
			t.Fatal(err)
		}
		if r.About != c.about || string(r.Data) != c.data {
			t.Errorf("%s: About %q Data %s, want %q %s", c.stored, r.About, r.Data, c.about, c.data)
		}
	}
}

func TestStatusLockReadsWithTheLockAndReleasesWithTheSave(t *testing.T) {
	ctx := context.Background()
	l := NewLedger(testenv.Redis(t))
	s := Subject{Repo: "hexpm/hexpm", Issue: 7}
	st, _, lock, err := l.LockStatus(ctx, s, time.Second, time.Second)
	if err != nil || st.CommentID != 0 {
		t.Fatalf("first lock: %+v %v", st, err)
	}
	if _, _, _, err := l.LockStatus(ctx, s, time.Second, 50*time.Millisecond); !errors.Is(err, ErrLocked) {
		t.Fatalf("a held status lock was taken again: %v", err)
	}
	if err := lock.SaveAndUnlock(ctx, Status{CommentID: 42}); err != nil {
		t.Fatal(err)
	}
	lock.Unlock() // after SaveAndUnlock: nothing to do
	st, _, lock, err = l.LockStatus(ctx, s, time.Second, 50*time.Millisecond)
	if err != nil || st.CommentID != 42 {
		t.Fatalf("after the save: %+v %v", st, err)
	}
	lock.Unlock()
}

func TestUpdateFromAStaleCopyIsJudgedOnTheStoredRun(t *testing.T) {
	ctx := context.Background()
	l := NewLedger(testenv.Redis(t))
	run, _, err := l.Claim(ctx, newRun("flaky:hexpm/hexpm:test/s_test.exs:1"), time.Hour, 10, Subject{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Move(ctx, run, Started, func(r *Run) { r.SessionID = "ses_s" }); err != nil {
		t.Fatal(err)
	}
	calls := 0
	got, err := l.Update(ctx, run, func(r *Run) error { // run still says queued
		calls++
		if r.State != Started {
			return errors.New("judged on the stale copy")
		}
		r.Error = "seen started"
		return nil
	})
	if err != nil || got.State != Started || got.Error != "seen started" || calls != 2 {
		t.Fatalf("update from a stale copy: %+v %v (%d calls)", got, err, calls)
	}
	if stored, _ := l.Get(ctx, run.ID); stored.Error != "seen started" || stored.SessionID != "ses_s" {
		t.Fatalf("stored %+v", stored)
	}
}

func TestAStatusSaveWithoutItsLockIsRefused(t *testing.T) {
	ctx := context.Background()
	rdb := testenv.Redis(t)
	l := NewLedger(rdb)
	s := Subject{Repo: "hexpm/hexpm", Issue: 8}
	_, _, first, err := l.LockStatus(ctx, s, time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	rdb.Del(ctx, l.prefix+"lock:status:"+s.String()) // as if it expired
	_, _, second, err := l.LockStatus(ctx, s, time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := second.SaveAndUnlock(ctx, Status{CommentID: 2}); err != nil {
		t.Fatal(err)
	}
	if err := first.SaveAndUnlock(ctx, Status{CommentID: 1}); !errors.Is(err, ErrLockLost) {
		t.Fatalf("the expired holder's save: %v", err)
	}
	if err := second.SaveAndUnlock(ctx, Status{CommentID: 3}); !errors.Is(err, ErrLockLost) {
		t.Fatalf("a second save after the release: %v", err)
	}
	if st, _ := l.Status(ctx, s); st.CommentID != 2 {
		t.Fatalf("status %+v: a save without the lock went through", st)
	}
}

func TestClaimSubscribesOnlyWithinTheRunsInstallation(t *testing.T) {
	ctx := context.Background()
	l := NewLedger(testenv.Redis(t))
	key := "flaky:hexpm/hexpm:test/sub_test.exs:1"
	a, b, c := Subject{Repo: "hexpm/hexpm", Issue: 1}, Subject{Repo: "hexpm/hexpm", Issue: 2}, Subject{Repo: "other/repo", Issue: 3}
	run, _, err := l.Claim(ctx, newRun(key), time.Hour, 100, a)
	if err != nil {
		t.Fatal(err)
	}
	if _, claim, _ := l.Claim(ctx, newRun(key), time.Hour, 100, b); claim != ClaimAttached {
		t.Fatalf("second claim %s", claim)
	}
	foreign := newRun(key)
	foreign.InstallationID = 99
	if _, _, err := l.Claim(ctx, foreign, time.Hour, 100, c); err != nil {
		t.Fatal(err)
	}
	if _, claim, _ := l.Claim(ctx, newRun("flaky:hexpm/hexpm:test/other_test.exs:1"), time.Hour, 1, c); claim != ClaimLimited {
		t.Fatalf("claim past the limit: %s", claim)
	}
	got, err := l.Subjects(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !(got[0] == a && got[1] == b || got[0] == b && got[1] == a) {
		t.Fatalf("subjects %v, want %v and %v only", got, a, b)
	}
}

func TestLockStatusReadsTheRunsItsEntriesName(t *testing.T) {
	ctx := context.Background()
	l := NewLedger(testenv.Redis(t))
	run, _, err := l.Claim(ctx, newRun("flaky:hexpm/hexpm:test/lock_test.exs:1"), time.Hour, 10, Subject{})
	if err != nil {
		t.Fatal(err)
	}
	s := Subject{Repo: "hexpm/hexpm", Issue: 9}
	if err := l.SaveStatus(ctx, s, Status{Entries: []Entry{{About: "a", RunID: run.ID}, {About: "b", RunID: "gone#1"}, {About: "c"}}}); err != nil {
		t.Fatal(err)
	}
	st, found, lock, err := l.LockStatus(ctx, s, time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	if len(st.Entries) != 3 || len(found) != 1 || found[run.ID].State != Queued || found[run.ID].Key != run.Key {
		t.Fatalf("status %+v, runs %+v", st, found)
	}
	// What it read can be updated in one round trip, as if read by Get.
	if _, err := l.Move(ctx, found[run.ID], Started, func(r *Run) { r.SessionID = "ses_lock" }); err != nil {
		t.Fatal(err)
	}
}

// An update reads the run's subjects in its own round trip; a run read any
// other way lists them with a read of its own. Both see the same set.
func TestAnUpdateReadsTheSubjectsWithTheWrite(t *testing.T) {
	ctx := context.Background()
	rdb := testenv.Redis(t)
	l := NewLedger(rdb)
	a, b := Subject{Repo: "hexpm/hexpm", Issue: 1}, Subject{Repo: "hexpm/hexpm", Issue: 2}
	run, _, err := l.Claim(ctx, newRun("flaky:hexpm/hexpm:test/with_test.exs:1"), time.Hour, 100, a)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Subscribe(ctx, run.ID, b); err != nil {
		t.Fatal(err)
	}
	if err := updateScript.Load(ctx, rdb).Err(); err != nil { // not counted: a first EVALSHA would be refused
		t.Fatal(err)
	}
	counter := &commandCount{}
	rdb.AddHook(counter)
	started, err := l.Move(ctx, run, Started, func(r *Run) { r.SessionID = "ses_with" })
	if err != nil {
		t.Fatal(err)
	}
	got, err := l.SubjectsOf(ctx, started)
	if err != nil || len(got) != 2 || counter.n != 1 {
		t.Fatalf("subjects %v %v after %d round trips; want both after the update's one", got, err, counter.n)
	}
	read, err := l.Get(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := l.SubjectsOf(ctx, read); err != nil || len(got) != 2 || counter.n != 3 {
		t.Fatalf("subjects of a read run %v %v after %d round trips; want both after a read of their own", got, err, counter.n)
	}
}

// commandCount counts the commands a client sends.
type commandCount struct{ n int }

func (c *commandCount) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *commandCount) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { c.n++; return next(ctx, cmd) }
}
func (c *commandCount) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { c.n++; return next(ctx, cmds) }
}

// Reviews delivered out of order keep each reviewer's latest verdict, and
// a dismissal removes only the verdict it dismissed.
func TestAPullRequestKeepsEachReviewersLatestVerdict(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	var p Pull
	p.AddReview("alice", "changes_requested", t0.Add(2*time.Minute))
	p.AddReview("alice", "approved", t0) // an older review, delivered late
	if p.Review() != "changes requested" {
		t.Fatalf("%v", p.Reviews)
	}
	p.AddReview("alice", "dismissed", t0.Add(time.Minute)) // dismissing the older one
	p.AddReview("bob", "approved", t0)
	if p.Review() != "changes requested" {
		t.Fatalf("%v", p.Reviews)
	}
	p.AddReview("alice", "dismissed", t0.Add(3*time.Minute))
	if p.Review() != "approved" || len(p.Reviews) != 1 {
		t.Fatalf("%v", p.Reviews)
	}
	for i := 0; i < 2*MaxReviewers; i++ {
		p.AddReview(fmt.Sprintf("r%d", i), "approved", t0)
	}
	if len(p.Reviews) != MaxReviewers {
		t.Fatalf("%d reviewers kept", len(p.Reviews))
	}
}

// One CI app runs one suite per workflow: a failed one is not hidden by
// another that passed later.
func TestCISumsUpEverySuiteOfTheHead(t *testing.T) {
	for want, suites := range map[string]map[string]string{
		"failed":  {"github-actions/1": "failure", "github-actions/2": "success"},
		"running": {"github-actions/1": "success", "circleci-checks/3": ""},
		"passed":  {"github-actions/1": "success", "github-actions/2": "skipped"},
		"":        nil,
	} {
		if got := (Pull{Suites: suites}).CI(); got != want {
			t.Errorf("%v: %q, want %q", suites, got, want)
		}
	}
}

func TestARunAfterAMergedFixKeepsItThroughARetriedStart(t *testing.T) {
	ctx := context.Background()
	l := NewLedger(testenv.Redis(t))
	const key = "flaky:hexpm/hexpm:test/a_test.exs:1"
	merged := time.Date(2026, 12, 2, 9, 30, 0, 0, time.UTC)

	first, _, err := l.Claim(ctx, newRun(key), 0, 100, Subject{})
	if err != nil {
		t.Fatal(err)
	}
	if first.PriorFix != nil {
		t.Fatalf("a key's first run has a prior fix: %+v", first.PriorFix)
	}
	first, err = l.Move(ctx, first, Started, func(r *Run) { r.SessionID = "ses_1" })
	if err == nil {
		first, err = l.Move(ctx, first, Completed, func(r *Run) {
			r.PR = &Pull{Number: 77, URL: "https://github.com/hexpm/hexpm/pull/77", State: PullMerged, MergedAt: merged}
		})
	}
	if err != nil {
		t.Fatal(err)
	}

	want := PriorFix{Number: 77, URL: "https://github.com/hexpm/hexpm/pull/77", MergedAt: merged}
	second, claim, err := l.Claim(ctx, newRun(key), 0, 100, Subject{})
	if err != nil || claim != ClaimNew || second.PriorFix == nil || *second.PriorFix != want {
		t.Fatalf("the run after a merged fix: %s %+v %v", claim, second.PriorFix, err)
	}
	// The start failed and its task runs again: the claim attaches to the
	// queued run, which still names the fix.
	again, claim, err := l.Claim(ctx, newRun(key), 0, 100, Subject{})
	if err != nil || claim != ClaimAttached || again.PriorFix == nil || *again.PriorFix != want {
		t.Fatalf("the retried start's claim: %s %+v %v", claim, again.PriorFix, err)
	}
	if stored, err := l.Get(ctx, second.ID); err != nil || stored.PriorFix == nil || *stored.PriorFix != want || stored.Key != key {
		t.Fatalf("stored: %+v %v", stored, err)
	}

	// A previous run whose pull request was closed unmerged is no prior fix.
	second, err = l.Move(ctx, second, Failed, func(r *Run) {
		r.PR = &Pull{Number: 78, URL: "https://github.com/hexpm/hexpm/pull/78", State: PullClosed}
	})
	if err != nil {
		t.Fatal(err)
	}
	if third, _, err := l.Claim(ctx, newRun(key), 0, 100, Subject{}); err != nil || third.PriorFix != nil {
		t.Fatalf("after an unmerged pull request: %+v %v", third.PriorFix, err)
	}
}

func TestACachedValueReadAheadCostsNoRoundTripUntilItChanges(t *testing.T) {
	ctx := context.Background()
	rdb := testenv.Redis(t)
	l := NewLedger(rdb)
	for _, name := range []string{"config:hexpm/hexpm", "config:hexpm/diff"} {
		if err := l.Cache(ctx, name, []byte("v1"), time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	var withCached func(context.Context) context.Context
	if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		withCached = l.PrefetchCached(ctx, p, "config:hexpm/hexpm", "config:hexpm/diff", "config:hexpm/missing")
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		t.Fatal(err)
	}
	counted := &testenv.Trips{}
	rdb.AddHook(counted)
	ctx = withCached(ctx)
	for range 2 {
		if v, hit, err := l.Cached(ctx, "config:hexpm/hexpm"); err != nil || !hit || string(v) != "v1" {
			t.Fatalf("read ahead: %q %v %v", v, hit, err)
		}
	}
	if _, hit, err := l.Cached(ctx, "config:hexpm/missing"); err != nil || hit {
		t.Fatalf("a miss read ahead: %v %v", hit, err)
	}
	if n := counted.RoundTrips.Load(); n != 0 {
		t.Fatalf("%d round trips for values read ahead", n)
	}
	// What the same context changes is read from Redis again.
	if err := l.Cache(ctx, "config:hexpm/hexpm", []byte("v2"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := l.Cached(ctx, "config:hexpm/hexpm"); string(v) != "v2" {
		t.Fatalf("after Cache: %q", v)
	}
	if err := l.Uncache(ctx, "config:hexpm/diff"); err != nil {
		t.Fatal(err)
	}
	if _, hit, _ := l.Cached(ctx, "config:hexpm/diff"); hit {
		t.Fatal("after Uncache: still cached")
	}
}

// loadScripts loads the ledger's scripts into rdb, for a test that counts
// round trips: a Redis that has not seen a script answers its first
// EVALSHA with NOSCRIPT, and one more round trip sends its body (tested in
// TestRunScriptsRunsAScriptTheRedisHasNotLoaded). Without it the count
// depends on what ran on that Redis before.
func loadScripts(t *testing.T, rdb redis.Scripter) {
	t.Helper()
	for _, s := range []*redis.Script{lockStatusScript, unlockUnmarkScript, saveUnlockScript, unlockScript, renewScript,
		recordDeliveryScript, claimScript, bySessionScript, saveDashboardScript, lockPullScript, reserveDailyScript,
		updateScript, sightingScript, flakyTestsScript} {
		if err := s.Load(context.Background(), rdb).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// A run claimed a moment ago and still queued may be starting its
// session; one started, or claimed long ago, is not.
func TestStartInFlight(t *testing.T) {
	ctx := context.Background()
	l := NewLedger(testenv.Redis(t))
	clock := time.Unix(1_800_000_000, 0)
	l.now = func() time.Time { return clock }
	inFlight := func() bool {
		t.Helper()
		ok, err := l.StartInFlight(ctx, 2*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if inFlight() {
		t.Fatal("in flight with no run")
	}
	run, _, err := l.Claim(ctx, newRun("flaky:hexpm/hexpm:test/a_test.exs:1"), time.Hour, 100, Subject{})
	if err != nil {
		t.Fatal(err)
	}
	if !inFlight() {
		t.Fatal("a run queued a moment ago is not in flight")
	}
	clock = clock.Add(3 * time.Minute)
	if inFlight() {
		t.Fatal("a run queued three minutes ago is in flight")
	}
	clock = clock.Add(-3 * time.Minute)
	if _, err := l.Move(ctx, run, Started, func(r *Run) { r.SessionID = "ses_1" }); err != nil {
		t.Fatal(err)
	}
	if inFlight() {
		t.Fatal("a started run is in flight")
	}
}
