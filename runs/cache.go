package runs

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// A small cache shared by all replicas, for answers from GitHub that
// change rarely (a repository's configuration file).

func (l *Ledger) cacheKey(name string) string { return l.prefix + "cache:" + name }

// Cached returns a cached value; ok is false on a miss.
func (l *Ledger) Cached(ctx context.Context, name string) (value []byte, ok bool, err error) {
	b, err := l.rdb.Get(ctx, l.cacheKey(name)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	return b, err == nil, err
}

// Cache stores a value for ttl.
func (l *Ledger) Cache(ctx context.Context, name string, value []byte, ttl time.Duration) error {
	return l.rdb.Set(ctx, l.cacheKey(name), value, ttl).Err()
}

// Uncache drops a cached value.
func (l *Ledger) Uncache(ctx context.Context, name string) error {
	return l.rdb.Del(ctx, l.cacheKey(name)).Err()
}
