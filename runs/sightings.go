package runs

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sighting is how often pitcrew has seen one test flake.
type Sighting struct {
	Count     int64
	FirstSeen time.Time
	LastSeen  time.Time
	Commits   int64 // distinct commits it flaked on
}

// sightingScript counts one sighting of a test, once per occurrence (a
// retried task or a redelivered event counts nothing twice).
var sightingScript = redis.NewScript(`
if redis.call('SADD', KEYS[2], ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], 'count', 1)
  redis.call('HSETNX', KEYS[1], 'first_seen', ARGV[3])
  redis.call('HSET', KEYS[1], 'last_seen', ARGV[3])
  redis.call('SADD', KEYS[3], ARGV[2])
end
redis.call('EXPIRE', KEYS[1], ARGV[4]); redis.call('EXPIRE', KEYS[2], ARGV[4]); redis.call('EXPIRE', KEYS[3], ARGV[4])
local f = redis.call('HMGET', KEYS[1], 'count', 'first_seen', 'last_seen')
return {f[1], f[2], f[3], redis.call('SCARD', KEYS[3])}
`)

// RecordSighting counts that the test with idempotency key key flaked in
// occurrence (e.g. "<workflow run id>/<attempt>") on commit, and returns
// the totals. Sightings are kept for 90 days after the last one.
func (l *Ledger) RecordSighting(ctx context.Context, key, occurrence, commit string) (Sighting, error) {
	base := l.prefix + "seen:" + key
	res, err := sightingScript.Run(ctx, l.rdb, []string{base, base + ":occurrences", base + ":commits"},
		occurrence, commit, l.now().Unix(), int64(90*24*time.Hour/time.Second)).Slice()
	if err != nil {
		return Sighting{}, err
	}
	num := func(v any) int64 {
		switch x := v.(type) {
		case int64:
			return x
		case string:
			n, _ := strconv.ParseInt(x, 10, 64)
			return n
		}
		return 0
	}
	return Sighting{Count: num(res[0]), FirstSeen: time.Unix(num(res[1]), 0).UTC(), LastSeen: time.Unix(num(res[2]), 0).UTC(), Commits: num(res[3])}, nil
}

// TakeDailyStart reserves one of a repository's limit runs for today
// (UTC); false when the limit is reached. Give it back with
// ReturnDailyStart when the run is not started after all.
func (l *Ledger) TakeDailyStart(ctx context.Context, repo string, limit int) (bool, error) {
	key := l.dailyKey(repo)
	n, err := l.rdb.Incr(ctx, key).Result()
	if err != nil {
		return false, err
	}
	if n == 1 {
		l.rdb.Expire(ctx, key, 48*time.Hour)
	}
	if n > int64(limit) {
		l.rdb.Decr(ctx, key)
		return false, nil
	}
	return true, nil
}

// ReturnDailyStart gives back a reservation of TakeDailyStart.
func (l *Ledger) ReturnDailyStart(ctx context.Context, repo string) error {
	return l.rdb.Decr(ctx, l.dailyKey(repo)).Err()
}

func (l *Ledger) dailyKey(repo string) string {
	return l.prefix + "daily:" + repo + ":" + l.now().UTC().Format("2006-01-02")
}
