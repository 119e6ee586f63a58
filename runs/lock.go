package runs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

var unlockScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`)

// ErrLocked is returned when a lock stays taken for the whole wait.
var ErrLocked = errors.New("runs: lock is held elsewhere")

// Lock takes a short exclusive lock across all replicas, waiting up to wait.
// It serialises the edits of one status comment. While held it is renewed
// every ttl/3, so a slow holder keeps it, and a holder that dies (SIGKILL)
// loses it after ttl; unlock releases it only if still held by the caller.
func (l *Ledger) Lock(ctx context.Context, name string, ttl, wait time.Duration) (unlock func(), err error) {
	h, err := l.lock(ctx, name, ttl, wait, func(key, token string) (bool, error) {
		return l.rdb.SetNX(ctx, key, token, ttl).Result()
	})
	if err != nil {
		return nil, err
	}
	return h.unlock, nil
}

// held is a lock this process holds.
type held struct {
	ctx        context.Context
	rdb        redis.UniversalClient
	key, token string
	stop       chan struct{}
	stopOnce   sync.Once
	mu         sync.Mutex
	released   bool
}

// unlock releases the lock if still held; later calls do nothing.
func (h *held) unlock() {
	h.release(func() error {
		return unlockScript.Run(context.WithoutCancel(h.ctx), h.rdb, []string{h.key}, h.token).Err()
	})
}

// release runs send, which releases the lock with whatever it writes, once:
// a send that fails is taken as not done, so a later unlock tries again.
// Either way the lock is no longer renewed: if no release gets through,
// it expires.
func (h *held) release(send func() error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		return errReleased
	}
	defer h.stopOnce.Do(func() { close(h.stop) })
	if err := send(); err != nil {
		return err
	}
	h.released = true
	return nil
}

var errReleased = errors.New("runs: the lock was already released")

// newHeld names a lock this process may take, with a token of its own.
func (l *Ledger) newHeld(ctx context.Context, name string) *held {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return &held{ctx: withoutLocksAhead(ctx), rdb: l.rdb, key: l.prefix + "lock:" + name, token: hex.EncodeToString(b[:]), stop: make(chan struct{})}
}

// keep renews a lock just taken every ttl/3 until it is released.
func (h *held) keep(ttl time.Duration) {
	go func() {
		t := time.NewTicker(ttl / 3)
		defer t.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-t.C:
				renewScript.Run(context.WithoutCancel(h.ctx), h.rdb, []string{h.key}, h.token, ttl.Milliseconds())
			}
		}
	}()
}

// lock is Lock, with try as one attempt to take the lock (key) for token:
// a script may read what the lock guards in the same round trip. The
// locks ctx took ahead are given up first (see WithLocksAhead): a lock
// taken ahead is never held while waiting for another.
func (l *Ledger) lock(ctx context.Context, name string, ttl, wait time.Duration, try func(key, token string) (bool, error)) (*held, error) {
	locksAheadIn(ctx).release()
	h := l.newHeld(ctx, name)
	deadline := time.Now().Add(wait)
	for {
		taken, err := try(h.key, h.token)
		if err != nil {
			// The attempt may have taken the lock before failing: give it back.
			h.unlock()
			return nil, err
		}
		if taken {
			h.keep(ttl)
			return h, nil
		}
		if time.Now().After(deadline) {
			return nil, ErrLocked
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
