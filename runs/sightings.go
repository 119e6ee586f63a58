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
