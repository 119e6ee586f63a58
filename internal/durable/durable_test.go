package durable

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

// Samples from redis-server 7 (INFO replication of a primary and of a
// replica); only replicas online count.
func TestOnlineReplicasReadsInfoReplication(t *testing.T) {
	for info, want := range map[string]int{
		"# Replication\r\nrole:master\r\nconnected_slaves:2\r\nslave0:ip=127.0.0.1,port=6380,state=online,offset=1,lag=0\r\nslave1:ip=127.0.0.1,port=6381,state=online,offset=1,lag=1\r\nmaster_failover_state:no-failover\r\n": 2,
		"# Replication\r\nrole:master\r\nconnected_slaves:2\r\nslave0:ip=127.0.0.1,port=6380,state=wait_bgsave,offset=0,lag=0\r\nslave1:ip=127.0.0.1,port=6381,state=online,offset=1,lag=0\r\n":                                 1,
		"# Replication\r\nrole:master\r\nconnected_slaves:1\r\nslave0:ip=127.0.0.1,port=6380,state=send_bulk,offset=0,lag=0\r\n":                                                                                                0,
		"# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_repl_offset:0\r\n":                                                                                                                                        0,
		"# Replication\r\nrole:slave\r\nmaster_host:127.0.0.1\r\nslave_read_repl_offset:15\r\nslave_repl_offset:15\r\nslave_priority:100\r\n":                                                                                   0,
		"": 0,
	} {
		if got := OnlineReplicas(info); got != want {
			t.Errorf("%q: %d, want %d", info, got, want)
		}
	}
}

// A primary without replicas costs nothing more than its cached INFO; with
// one, a write is acknowledged once the replica has it, and refused when
// the replica stops answering.
func TestAWriteIsAcknowledgedOnceAReplicaHasIt(t *testing.T) {
	ctx := context.Background()
	primary, _ := testenv.RedisServer(t, "--repl-diskless-sync-delay", "0")
	rdb := redis.NewClient(&redis.Options{Addr: primary})
	defer rdb.Close()
	// A generous timeout while the replica answers: under a loaded CI a
	// replica that has just synced may take a while to acknowledge.
	w := &Waiter{Redis: rdb, Timeout: 5 * time.Second, Every: 10 * time.Millisecond}
	if err := w.Wait(ctx); err != nil {
		t.Fatalf("no replica: %v", err)
	}
	if n, _ := rdb.Exists(ctx, markKey).Result(); n != 0 {
		t.Fatal("waited without a replica")
	}

	host, port, _ := net.SplitHostPort(primary)
	_, replica := testenv.RedisServer(t, "--replicaof", host, port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, _ := rdb.Info(ctx, "replication").Result()
		if strings.Contains(info, "state=online") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica never came online:\n%s", info)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // past Every: the replica is counted
	if err := rdb.Set(ctx, "delivery", "stored", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if err := w.Wait(ctx, "delivery"); err != nil {
		t.Fatalf("with a replica online: %v", err)
	}
	// The round that serves every caller carries none of a caller's
	// context (a task's held-back status save is sent by its own round
	// trips only).
	seen := &callerValues{}
	rdb.AddHook(seen)
	if err := w.Wait(context.WithValue(ctx, callerKey{}, "task A"), "delivery"); err != nil {
		t.Fatal(err)
	}
	if seen.waits.Load() == 0 || seen.carried.Load() != 0 {
		t.Fatalf("%d of %d WAIT rounds carried the caller's context", seen.carried.Load(), seen.waits.Load())
	}
	// A key the caller wrote that is not on this primary: a failover came
	// between the write and the wait.
	if err := w.Wait(ctx, "delivery", "written-elsewhere"); !errors.Is(err, ErrNotOnPrimary) {
		t.Fatalf("a write not on the primary: %v", err)
	}

	// Waits that overlap share a WAIT.
	counter := &waits{}
	rdb.AddHook(counter)
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.Wait(ctx, "delivery"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := counter.n.Load(); n < 1 || n >= 25 {
		t.Fatalf("%d WAITs for 50 overlapping waits", n)
	} else {
		t.Logf("%d WAITs for 50 overlapping waits", n)
	}

	replica.Process.Signal(syscall.SIGSTOP) // the replica stops acknowledging
	defer replica.Process.Signal(syscall.SIGCONT)
	w = &Waiter{Redis: rdb, Timeout: 300 * time.Millisecond, Every: 10 * time.Millisecond}
	start := time.Now()
	if err := w.Wait(ctx); !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("with the replica stopped: %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("the refusal took %v, past its bound", took)
	}
}

func TestANilWaiterWaitsForNothing(t *testing.T) {
	var w *Waiter
	if w.Wait(context.Background(), "anything") != nil {
		t.Fatal("a nil waiter")
	}
}

// waits counts the WAIT commands sent.
type waits struct{ n atomic.Int64 }

func (c *waits) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (c *waits) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (c *waits) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			if cmd.Name() == "wait" {
				c.n.Add(1)
			}
		}
		return next(ctx, cmds)
	}
}

type callerKey struct{}

// callerValues counts the pipelines with a WAIT, and those whose context
// carries a caller's value.
type callerValues struct{ waits, carried atomic.Int64 }

func (c *callerValues) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (c *callerValues) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (c *callerValues) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			if strings.EqualFold(cmd.Name(), "wait") {
				c.waits.Add(1)
				if ctx.Value(callerKey{}) != nil {
					c.carried.Add(1)
				}
			}
		}
		return next(ctx, cmds)
	}
}
