package queue

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// roundTimeout bounds a round trip that carries other callers' scripts;
// each caller still waits no longer than its own context allows.
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
	calls []*scriptCall
	done  chan struct{}
}

type scriptCall struct {
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
	r, call := b.next, &scriptCall{sha: sha, keys: keys, args: args}
	r.calls = append(r.calls, call)
	b.mu.Unlock()
	select {
	case <-r.done:
		return call.cmd
	case <-ctx.Done():
		// The round still sends the script: like a command whose reply
		// came too late, it may be stored.
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(ctx.Err())
		return cmd
	}
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
	ctx, cancel := context.WithTimeout(context.Background(), roundTimeout)
	defer cancel()
	// Each reply, error or not, is in its cmd: Pipelined's error is the
	// first of them.
	_, _ = b.UniversalClient.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, c := range r.calls {
			c.cmd = p.EvalSha(ctx, c.sha, c.keys, c.args...)
		}
		return nil
	})
	close(r.done)
}
