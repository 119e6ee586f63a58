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
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNotReplicated means no replica acknowledged the writes in time: the
// sender is to be answered 503, so that it retries (or the delivery sweeper
// asks GitHub for it again).
var ErrNotReplicated = errors.New("redis: no replica acknowledged the write in time")

// ErrNotOnPrimary means the keys written are not on the primary the wait
// reached: the write went to a primary that has since been replaced.
var ErrNotOnPrimary = errors.New("redis: the write is not on the current primary")

// markKey is written just before WAIT, on the same connection: WAIT waits
// for that connection's last write, and the primary replicates in order, so
// every write before the mark (asynq's, on other connections) is covered.
const markKey = "pitcrew:replicated"

// Waiter waits for replicas. A nil Waiter's Wait does nothing, so a single
// Redis costs nothing.
//
// Waits that overlap share one WAIT (a group commit): a round started after
// a caller's writes covers them, so each caller joins the next round to
// start, and one goroutine runs it for all who joined.
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
	next     *round // the round callers join; started once none runs
	running  bool
}

// round is one WAIT shared by the callers who joined it; each caller's
// keys are checked in the same pipeline.
type round struct {
	done chan struct{}
	keys [][]string
	errs []error
}

// Wait returns nil once one replica acknowledged every write made before
// it, or at once when the primary has no replica online. keys are what the
// caller wrote: they must be on the primary that replicated, or a failover
// between the write and the wait could hide a lost write (ErrNotOnPrimary).
func (w *Waiter) Wait(ctx context.Context, keys ...string) error {
	if w == nil || w.Redis == nil {
		return nil
	}
	n, err := w.online(ctx)
	if err != nil || n == 0 {
		return err
	}
	w.mu.Lock()
	if w.next == nil {
		w.next = &round{done: make(chan struct{})}
	}
	r := w.next
	mine := len(r.keys)
	r.keys = append(r.keys, keys)
	if !w.running {
		w.running = true
		// The leader serves every caller that joins: it carries none of
		// this caller's context (a task's held-back status save, say).
		go w.lead(context.Background())
	}
	w.mu.Unlock()
	select {
	case <-r.done:
		return r.errs[mine]
	case <-ctx.Done():
		return ctx.Err()
	}
}

// lead runs rounds while callers join them.
func (w *Waiter) lead(ctx context.Context) {
	for {
		w.mu.Lock()
		r := w.next
		if r == nil {
			w.running = false
			w.mu.Unlock()
			return
		}
		w.next = nil
		w.mu.Unlock()
		r.errs = w.wait(ctx, r.keys)
		close(r.done)
	}
}

// wait checks each caller's keys, writes a mark and sends WAIT, all on one
// connection, under a deadline of its own.
func (w *Waiter) wait(ctx context.Context, keys [][]string) []error {
	timeout := w.Timeout
	if timeout <= 0 {
		timeout = 500 * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(ctx, timeout+time.Second)
	defer cancel()
	exists := make([]*redis.IntCmd, len(keys))
	var acked *redis.Cmd
	_, err := w.Redis.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			if len(k) > 0 {
				exists[i] = p.Exists(ctx, k...)
			}
		}
		p.Set(ctx, markKey, time.Now().UnixNano(), time.Minute)
		acked = p.Do(ctx, "WAIT", 1, timeout.Milliseconds())
		return nil
	})
	errs := make([]error, len(keys))
	if got, _ := acked.Int64(); err == nil && got < 1 {
		w.forget() // the replica may be gone: count them again
		err = ErrNotReplicated
	} else if err != nil {
		err = fmt.Errorf("redis: waiting for a replica: %w", err)
	}
	for i, k := range keys {
		switch {
		case err != nil:
			errs[i] = err
		case exists[i] != nil && exists[i].Val() < int64(len(k)):
			errs[i] = ErrNotOnPrimary
		}
	}
	return errs
}

func (w *Waiter) forget() {
	w.mu.Lock()
	w.read = time.Time{}
	w.mu.Unlock()
}

// online is how many replicas the primary has online, read at most once
// per Every. An error is not remembered: the next wait asks again.
func (w *Waiter) online(ctx context.Context) (int, error) {
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
	if err != nil {
		return 0, fmt.Errorf("redis: reading its replication: %w", err)
	}
	n := OnlineReplicas(info)
	w.mu.Lock()
	w.read, w.replicas = time.Now(), n
	w.mu.Unlock()
	return n, nil
}

// OnlineReplicas counts the replicas INFO replication lists as online
// ("slave0:ip=...,state=online,..."). One still syncing has nothing to
// acknowledge yet: waiting for it would refuse every write until it is
// done, so until then the primary counts as alone.
func OnlineReplicas(info string) int {
	n := 0
	for _, line := range strings.Split(info, "\n") {
		name, fields, _ := strings.Cut(strings.TrimSpace(line), ":")
		if index, ok := strings.CutPrefix(name, "slave"); !ok || index == "" || strings.Trim(index, "0123456789") != "" {
			continue
		}
		for _, f := range strings.Split(fields, ",") {
			if f == "state=online" {
				n++
			}
		}
	}
	return n
}
