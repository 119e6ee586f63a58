package queue

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

// roundTrips counts the scripts a client sends to Redis: alone, or in
// pipelines (with the scripts they carried). Its first command
// waits until hold is closed, so that callers gather behind it.
type roundTrips struct {
	singles, pipelines, piped atomic.Int64
	hold                      chan struct{}
	first                     sync.Once
}

func (h *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "evalsha" {
			h.singles.Add(1)
			h.first.Do(func() {
				if h.hold != nil {
					<-h.hold
				}
			})
		}
		return next(ctx, cmd)
	}
}

func (h *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if cmds[0].Name() == "evalsha" { // not a new connection's handshake
			h.pipelines.Add(1)
			h.piped.Add(int64(len(cmds)))
		}
		return next(ctx, cmds)
	}
}

// enqueueAll enqueues n tasks at once through an asynq.Client on
// Batched(rdb), the first held until all the others have been asked for,
// and returns each one's error.
func enqueueAll(t *testing.T, rdb *redis.Client, h *roundTrips, n int, id func(i int) string) []error {
	t.Helper()
	q := asynq.NewClientFromRedisClient(Batched(rdb))
	errs := make([]error, n)
	atOnce(rdb, h, n, func(i int) {
		_, errs[i] = q.EnqueueContext(t.Context(), DeliveryTask(id(i), AppendDelivery(nil, "issues", id(i), []byte(`{"action":"labeled"}`))))
	})
	return errs
}

// atOnce runs call(0) to call(n-1) on goroutines of their own, with h
// on rdb holding the first script sent until all have started, so that
// the others gather behind it.
func atOnce(rdb *redis.Client, h *roundTrips, n int, call func(i int)) {
	h.hold = make(chan struct{})
	rdb.AddHook(h)
	var started, done sync.WaitGroup
	for i := range n {
		started.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			started.Done()
			call(i)
		}()
	}
	started.Wait()
	time.Sleep(50 * time.Millisecond) // the goroutines past started.Done reach EvalSha
	close(h.hold)
	done.Wait()
}

// Deliveries stored at once share round trips, and each is stored.
func TestConcurrentEnqueuesShareRoundTrips(t *testing.T) {
	rdb := testenv.Redis(t)
	h := &roundTrips{}
	const n = 100
	errs := enqueueAll(t, rdb, h, n, func(i int) string { return fmt.Sprintf("batch-%d", i) })
	for i, err := range errs {
		if err != nil {
			t.Fatalf("delivery %d: %v", i, err)
		}
	}
	pending, err := rdb.LLen(t.Context(), "asynq:{github}:pending").Result()
	if err != nil || pending != n {
		t.Fatalf("%d tasks pending of %d (%v)", pending, n, err)
	}
	if trips := h.singles.Load() + h.pipelines.Load(); trips > n/4 {
		t.Fatalf("%d deliveries took %d round trips (%d alone, %d pipelines carrying %d)",
			n, trips, h.singles.Load(), h.pipelines.Load(), h.piped.Load())
	}
}

// Each script keeps its own reply: of one delivery sent many times at
// once, one is stored and the others are told it is a duplicate.
func TestABatchedDuplicateIsThatCallersAlone(t *testing.T) {
	rdb := testenv.Redis(t)
	errs := enqueueAll(t, rdb, &roundTrips{}, 20, func(int) string { return "same-delivery" })
	stored := 0
	for _, err := range errs {
		switch {
		case err == nil:
			stored++
		case !IsDuplicate(err):
			t.Fatalf("a repeat failed with %v, not as a duplicate", err)
		}
	}
	if stored != 1 {
		t.Fatalf("%d copies stored", stored)
	}
}

// A script Redis does not know (after a restart or SCRIPT FLUSH) is sent
// again whole, alone or batched: each caller here runs a script of its
// own that Redis has never seen, so every EVALSHA of the round is refused
// with NOSCRIPT and go-redis's Script.Run sends that caller's EVAL.
func TestABatchedScriptRedisForgotIsSentAgain(t *testing.T) {
	rdb := testenv.Redis(t)
	h := &roundTrips{}
	b := Batched(rdb)
	const n = 10
	got := make([]any, n)
	errs := make([]error, n)
	atOnce(rdb, h, n, func(i int) {
		script := redis.NewScript(fmt.Sprintf("return %d -- %d", i, time.Now().UnixNano()))
		got[i], errs[i] = script.Run(t.Context(), b, nil).Result()
	})
	for i := range n {
		if errs[i] != nil || got[i] != int64(i) {
			t.Fatalf("script %d: %v, %v", i, got[i], errs[i])
		}
	}
	if h.piped.Load() < 2 {
		t.Fatalf("no round carried more than one script (%d piped)", h.piped.Load())
	}
}

// A caller waiting for its round gives up when its context ends; one whose
// round cannot reach Redis gets the connection's error, not a hang.
func TestABatchedCallerIsBoundByItsContextAndTheConnection(t *testing.T) {
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer down.Close()
	b := Batched(down)
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = b.EvalSha(t.Context(), "0123456789abcdef0123456789abcdef01234567", []string{"k"}).Err()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err == nil {
			t.Fatalf("caller %d: no error from a Redis that is not there", i)
		}
	}

	hold := make(chan struct{})
	slow := &batched{UniversalClient: &stalled{UniversalClient: down, hold: hold}}
	go slow.EvalSha(t.Context(), "sha", nil) // holds the round trip
	for !isSending(slow) {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if err := slow.EvalSha(ctx, "sha", nil).Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a caller past its deadline got %v", err)
	}
	close(hold)
}

func isSending(b *batched) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sending
}

// stalled is a client whose EvalSha waits until hold is closed.
type stalled struct {
	redis.UniversalClient
	hold chan struct{}
}

func (s *stalled) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	<-s.hold
	cmd := redis.NewCmd(ctx)
	cmd.SetErr(errors.New("released"))
	return cmd
}

// A Redis error in setting up the round's connection (here a refused
// AUTH) reaches every script of the round: go-redis returns it from
// Pipelined without giving it to the commands.
func TestARoundWhoseConnectionIsRefusedFailsEachScript(t *testing.T) {
	refused := redis.NewClient(&redis.Options{Addr: refusingRedis(t), Password: "not-the-password", MaxRetries: -1})
	defer refused.Close()
	r := &scriptRound{done: make(chan struct{})}
	for range 3 {
		r.join(&scriptCall{ctx: t.Context(), sha: "0123456789abcdef0123456789abcdef01234567", keys: []string{"k"}})
	}
	(&batched{UniversalClient: refused}).send(r)
	for i, c := range r.calls {
		if c.cmd.Err() == nil {
			t.Fatalf("script %d: no error, reply %v", i, c.cmd.Val())
		}
	}
}

// refusingRedis serves a Redis that answers whatever it is sent with a
// refused password, and returns its address.
func refusingRedis(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				buf := make([]byte, 4096)
				for {
					if _, err := conn.Read(buf); err != nil {
						return
					}
					if _, err := conn.Write([]byte("-WRONGPASS invalid username-password pair or user is disabled.\r\n")); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// A round lasts until the latest of its callers' deadlines, and takes
// roundTimeout when one of them has none.
func TestARoundLastsUntilItsLatestCallersDeadline(t *testing.T) {
	soon, later := time.Now().Add(time.Minute), time.Now().Add(time.Hour)
	for _, c := range []struct {
		name      string
		deadlines []time.Time // zero: none
		want      time.Time   // zero: roundTimeout from now
	}{
		{"one", []time.Time{soon}, soon},
		{"the latest", []time.Time{later, soon}, later},
		{"the latest, last", []time.Time{soon, later}, later},
		{"one without", []time.Time{soon, {}, later}, time.Time{}},
		{"the first without", []time.Time{{}, soon}, time.Time{}},
	} {
		r := &scriptRound{}
		for _, d := range c.deadlines {
			ctx, cancel := context.WithCancel(t.Context())
			if !d.IsZero() {
				ctx, cancel = context.WithDeadline(t.Context(), d)
			}
			defer cancel()
			r.join(&scriptCall{ctx: ctx})
		}
		got, want := r.until(), c.want
		if want.IsZero() {
			want = time.Now().Add(roundTimeout)
		}
		if got.Sub(want).Abs() > time.Second {
			t.Errorf("%s: the round lasts until %v, want %v", c.name, got, want)
		}
	}
}
