package queue

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// roundTimeout bounds a round trip whose callers set no deadline; one
// with deadlines lasts until the latest of them.
const roundTimeout = 5 * time.Second

// Batched wraps c so that the Lua scripts run by concurrent callers go to
// Redis together, in one pipeline per round trip (a group commit). asynq
// stores a task with one EVALSHA, so an asynq.Client on Batched(c) stores
// the deliveries that arrive while a round trip is out in the next one:
// one write and one read for Redis and for pitcrew instead of one each per
// delivery, which at full speed is most of what a delivery costs Redis.
//
// A caller alone sends its script at once, on its own goroutine, as c
// would. Each script keeps its own reply: a duplicate task or a NOSCRIPT
// (which go-redis's Script.Run answers with EVAL, unbatched) is that
// caller's alone, while a broken connection fails the whole round, as it
// would each caller's command. Everything but EvalSha goes to c unchanged.
//
// One round trip is out at a time, so a slow one holds the next for as
// long as its callers' deadlines allow. A round's commands run without
// their callers' contexts: hooks on c that go by a caller's context (the
// ledger's held status saves) do not see them, so the worker does not
// enqueue through Batched.
func Batched(c redis.UniversalClient) redis.UniversalClient {
	return &batched{UniversalClient: c}
}

type batched struct {
	redis.UniversalClient

	mu      sync.Mutex
	sending bool         // a round trip is out
	next    *scriptRound // the scripts waiting for the next one
}

// scriptRound is the scripts of one round trip; done is closed once each
// call's cmd holds its reply.
type scriptRound struct {
	calls     []*scriptCall
	deadline  time.Time // the latest of the callers'
	unbounded bool      // a caller has no deadline
	done      chan struct{}
}

// join adds a call to the round, which then lasts until the latest of its
// callers' deadlines, or roundTimeout once one of them has none.
func (r *scriptRound) join(c *scriptCall) {
	r.calls = append(r.calls, c)
	if d, ok := c.ctx.Deadline(); !ok {
		r.unbounded = true
	} else if d.After(r.deadline) {
		r.deadline = d
	}
}

func (r *scriptRound) until() time.Time {
	if r.unbounded || r.deadline.IsZero() {
		return time.Now().Add(roundTimeout)
	}
	return r.deadline
}

type scriptCall struct {
	ctx  context.Context
	sha  string
	keys []string
	args []any
	cmd  *redis.Cmd
}

// EvalSha runs the script now when no round trip is out, else with the
// next round.
func (b *batched) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	b.mu.Lock()
	if !b.sending {
		b.sending = true
		b.mu.Unlock()
		defer b.sent()
		return b.UniversalClient.EvalSha(ctx, sha, keys, args...)
	}
	if b.next == nil {
		b.next = &scriptRound{done: make(chan struct{})}
	}
	r, call := b.next, &scriptCall{ctx: ctx, sha: sha, keys: keys, args: args}
	r.join(call)
	b.mu.Unlock()
	select {
	case <-r.done:
		return call.cmd
	case <-ctx.Done():
		select {
		case <-r.done: // both happened: the reply is there
			return call.cmd
		default:
		}
		// The round may still send the script: like a command whose
		// reply came too late, it may be stored.
		return failed(ctx, ctx.Err())
	}
}

func failed(ctx context.Context, err error) *redis.Cmd {
	cmd := redis.NewCmd(ctx)
	cmd.SetErr(err)
	return cmd
}

// sent ends a round trip: the rounds that gathered meanwhile go out on a
// goroutine of their own, one after the other, until none is left.
func (b *batched) sent() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.next == nil {
		b.sending = false
		return
	}
	go b.sendRounds()
}

func (b *batched) sendRounds() {
	for {
		b.mu.Lock()
		r := b.next
		if r == nil {
			b.sending = false
			b.mu.Unlock()
			return
		}
		b.next = nil
		b.mu.Unlock()
		b.send(r)
	}
}

func (b *batched) send(r *scriptRound) {
	ctx, cancel := context.WithDeadline(context.Background(), r.until())
	defer cancel()
	_, err := b.UniversalClient.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, c := range r.calls {
			if c.ctx.Err() != nil { // its caller has stopped waiting
				c.cmd = failed(c.ctx, c.ctx.Err())
				continue
			}
			c.cmd = p.EvalSha(ctx, c.sha, c.keys, c.args...)
		}
		return nil
	})
	// Each reply, error or not, is in its cmd, but for an error in
	// setting up the connection (a Redis error such as a refused AUTH,
	// which go-redis returns without giving it to the commands): a script
	// with neither a reply nor an error was not run.
	for _, c := range r.calls {
		if err != nil && c.cmd.Err() == nil && c.cmd.Val() == nil {
			c.cmd.SetErr(err)
		}
	}
	close(r.done)
}
