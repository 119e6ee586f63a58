package runs

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// A small cache shared by all replicas, for answers from GitHub that
// change rarely (a repository's configuration file).

func (l *Ledger) cacheKey(name string) string { return l.prefix + "cache:" + name }

// Cached returns a cached value; ok is false on a miss. A value read
// ahead for ctx (PrefetchCached) costs no round trip.
func (l *Ledger) Cached(ctx context.Context, name string) (value []byte, ok bool, err error) {
	if get, found := prefetchedIn(ctx).read(name); found && (get.Err() == nil || errors.Is(get.Err(), redis.Nil)) {
		return cachedOf(get)
	}
	return cachedOf(l.rdb.Get(ctx, l.cacheKey(name)))
}

func cachedOf(get *redis.StringCmd) ([]byte, bool, error) {
	b, err := get.Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	return b, err == nil, err
}

// Cache stores a value for ttl.
func (l *Ledger) Cache(ctx context.Context, name string, value []byte, ttl time.Duration) error {
	prefetchedIn(ctx).drop(name)
	return l.rdb.Set(ctx, l.cacheKey(name), value, ttl).Err()
}

// Uncache drops a cached value.
func (l *Ledger) Uncache(ctx context.Context, name string) error {
	prefetchedIn(ctx).drop(name)
	return l.rdb.Del(ctx, l.cacheKey(name)).Err()
}

// PrefetchCached queues on p the reads of the named cached values, so that
// a caller reads them in a round trip it makes anyway. Once p has run, the
// function it returns makes a context in which Cached answers them from
// what p read, until a Cache or Uncache of the same name in that context
// (a read that failed is made again).
func (l *Ledger) PrefetchCached(ctx context.Context, p redis.Pipeliner, names ...string) func(context.Context) context.Context {
	pre := &prefetched{gets: map[string]*redis.StringCmd{}}
	for _, name := range names {
		pre.gets[name] = p.Get(ctx, l.cacheKey(name))
	}
	return func(ctx context.Context) context.Context { return context.WithValue(ctx, prefetchedKey{}, pre) }
}

type prefetchedKey struct{}

// prefetched holds the cached values read ahead for one context.
type prefetched struct {
	mu   sync.Mutex
	gets map[string]*redis.StringCmd
}

func prefetchedIn(ctx context.Context) *prefetched {
	p, _ := ctx.Value(prefetchedKey{}).(*prefetched)
	return p
}

func (p *prefetched) read(name string) (*redis.StringCmd, bool) {
	if p == nil {
		return nil, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	get, ok := p.gets[name]
	return get, ok
}

func (p *prefetched) drop(name string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.gets, name)
}
