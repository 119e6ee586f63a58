// Package durable makes "stored" mean "replicated": Redis replicates
// asynchronously, so a write the primary acknowledged can vanish when a
// replica is promoted. Before pitcrew answers a sender (GitHub, an alert
// source, the sandbox) or starts a session for a claim, a Waiter makes sure
// what it wrote reached a replica, when the primary has any.
package durable

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNotReplicated means no replica acknowledged the writes in time: the
// sender is to be answered 503, so that it retries (or the delivery sweeper
// asks GitHub for it again).
var ErrNotReplicated = errors.New("redis: no replica acknowledged the write in time")

// markKey is written just before WAIT, on the same connection: WAIT waits
// for that connection's last write, and the primary replicates in order, so
// every write before the mark (asynq's, on other connections) is covered.
const markKey = "pitcrew:replicated"

// Waiter waits for replicas. The zero Waiter's Wait does nothing; a nil one
// too, so a single Redis costs nothing.
//
// Waits that overlap share one WAIT (a group commit): a round started after
// a caller's writes covers them, so each caller joins the next round to
// start, and one caller runs it for all who joined.
type Waiter struct {
	Redis redis.UniversalClient
	// Timeout bounds each wait (default 500 ms): past it the write counts
	// as not replicated.
	Timeout time.Duration
	// Every is how long the count of the primary's replicas is reused
	// before it is read again (default 1 s).
	Every time.Duration

	mu       sync.Mutex
	read     time.Time
	replicas int
	last     error  // the last wait's outcome, for /readyz
	next     *round // the round callers join; started by the first of them once none runs
	running  bool
}

// round is one WAIT shared by the callers who joined it.
type round struct {
	done chan struct{}
	err  error
}

// Wait returns nil once one replica acknowledged every write made before
// it, or at once when the primary has no replica connected.
func (w *Waiter) Wait(ctx context.Context) error {
	if w == nil || w.Redis == nil {
		return nil
	}
	n, err := w.connected(ctx)
	if err != nil || n == 0 {
		return w.record(err)
	}
	w.mu.Lock()
	if w.next == nil {
		w.next = &round{done: make(chan struct{})}
	}
	r := w.next
	lead := !w.running
	if lead {
		w.running = true
	}
	w.mu.Unlock()
	if lead {
		w.lead(context.WithoutCancel(ctx))
	}
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// lead runs the next round, then hands the one after (if anyone joined it
// meanwhile) to a goroutine: the caller that led waits one round only.
func (w *Waiter) lead(ctx context.Context) {
	w.mu.Lock()
	r := w.next
	w.next = nil
	w.mu.Unlock()
	r.err = w.record(w.wait(ctx))
	close(r.done)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.next == nil {
		w.running = false
		return
	}
	go w.lead(ctx)
}

// wait writes a mark and sends WAIT on the same connection.
func (w *Waiter) wait(ctx context.Context) error {
	timeout := w.Timeout
	if timeout <= 0 {
		timeout = 500 * time.Millisecond
	}
	var acked *redis.Cmd
	_, err := w.Redis.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, markKey, time.Now().UnixNano(), time.Minute)
		acked = p.Do(ctx, "WAIT", 1, timeout.Milliseconds())
		return nil
	})
	if err != nil {
		return fmt.Errorf("redis: waiting for a replica: %w", err)
	}
	if got, _ := acked.Int64(); got < 1 {
		w.forget() // the replica may be gone: count them again
		return ErrNotReplicated
	}
	return nil
}

// Problem is why the last wait failed; nil when it succeeded.
func (w *Waiter) Problem() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

func (w *Waiter) record(err error) error {
	w.mu.Lock()
	w.last = err
	w.mu.Unlock()
	return err
}

func (w *Waiter) forget() {
	w.mu.Lock()
	w.read = time.Time{}
	w.mu.Unlock()
}

// connected is how many replicas the primary has connected, read at most
// once per Every.
func (w *Waiter) connected(ctx context.Context) (int, error) {
	every := w.Every
	if every <= 0 {
		every = time.Second
	}
	w.mu.Lock()
	if time.Since(w.read) < every {
		n := w.replicas
		w.mu.Unlock()
		return n, nil
	}
	w.mu.Unlock()
	info, err := w.Redis.Info(ctx, "replication").Result()
	var answered redis.Error
	if errors.As(err, &answered) {
		info, err = "", nil // a Redis that does not say (an embedded one) has no replicas
	}
	if err != nil {
		return 0, fmt.Errorf("redis: reading its replication: %w", err)
	}
	n := ConnectedReplicas(info)
	w.mu.Lock()
	w.read, w.replicas = time.Now(), n
	w.mu.Unlock()
	return n, nil
}

// ConnectedReplicas reads connected_slaves from INFO replication; 0 when
// absent (a replica, or a Redis that does not say).
func ConnectedReplicas(info string) int {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "connected_slaves:"); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}
