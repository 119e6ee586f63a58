package runs

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sighting is how often pitcrew has seen one test flake, and where last.
type Sighting struct {
	Count     int64
	FirstSeen time.Time
	LastSeen  time.Time
	Commits   int64 // distinct commits it flaked on
	// Commit and Where describe the last sighting together: its commit
	// ("" when it was an issue) and its CI run or issue (a web URL; ""
	// when the CI gave none).
	Commit string
	Where  string
	// Name and Module are the ExUnit test's, as its CI log printed them
	// (untrusted text); "" when only an issue named the test.
	Name, Module string
}

// Seen is one sighting of a test, as a signal reports it.
type Seen struct {
	Key        string // the test's idempotency key
	Occurrence string // a failed CI attempt ("workflow_run:<id>/<attempt>") or an issue ("issue:<n>")
	Commit     string
	Where      string
	Name       string
	Module     string
}

// SightingsKept is how long a test's sightings, and its day-by-day
// history, are kept after the last one.
const SightingsKept = 90 * 24 * time.Hour

// maxTestsPerRepo bounds the tests a repository's index of flaky tests keeps
// (the most recently seen).
const maxTestsPerRepo = 1000

func (l *Ledger) flakyTestsKey(repo string) string {
	return l.prefix + "flaky-tests:" + strings.ToLower(repo)
}
func (l *Ledger) flakyReposKey() string         { return l.prefix + "flaky-repos" }
func (l *Ledger) flakyRepoNamesKey() string     { return l.prefix + "flaky-repo-names" }
func (l *Ledger) sightingKey(key string) string { return l.prefix + "seen:" + key }

// sightingScript counts one sighting of a test, once per occurrence (a
// retried task or a redelivered event counts nothing twice): its totals, its
// count for the day (ARGV[9], days since 1970; days past the kept 90 are
// dropped), and its place in the repository's index (KEYS[5], by last
// sighting) and the index's in the list of repositories (KEYS[6], by the
// lower-case name GitHub matches names by), with the name as GitHub
// spells it (KEYS[7]).
var sightingScript = redis.NewScript(`
local now, ttl, day = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[9])
if redis.call('SADD', KEYS[2], ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], 'count', 1)
  redis.call('HSETNX', KEYS[1], 'first_seen', now)
  redis.call('HSET', KEYS[1], 'last_seen', now, 'where', ARGV[5], 'commit', ARGV[2])
  if ARGV[2] ~= '' then redis.call('SADD', KEYS[3], ARGV[2]) end
  if ARGV[6] ~= '' then redis.call('HSET', KEYS[1], 'name', ARGV[6], 'module', ARGV[7]) end
  redis.call('HINCRBY', KEYS[4], day, 1)
  if redis.call('HLEN', KEYS[4]) > 90 then
    for _, d in ipairs(redis.call('HKEYS', KEYS[4])) do
      if tonumber(d) <= day - 90 then redis.call('HDEL', KEYS[4], d) end
    end
  end
  redis.call('ZADD', KEYS[5], now, ARGV[8])
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now - ttl)
  redis.call('ZREMRANGEBYRANK', KEYS[5], 0, -tonumber(ARGV[11]) - 1)
  redis.call('ZADD', KEYS[6], now, ARGV[10])
  redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', now - ttl)
  redis.call('HSET', KEYS[7], ARGV[10], ARGV[12])
end
for i = 1, 5 do redis.call('EXPIRE', KEYS[i], ttl) end
local f = redis.call('HMGET', KEYS[1], 'count', 'first_seen', 'last_seen')
return {f[1], f[2], f[3], redis.call('SCARD', KEYS[3])}
`)

// RecordSighting counts that a test of repo flaked (see Seen), and returns
// its totals.
func (l *Ledger) RecordSighting(ctx context.Context, repo string, s Seen) (Sighting, error) {
	call := l.sightingCall(repo, s)
	if err := l.runScripts(ctx, call); err != nil {
		return Sighting{}, err
	}
	return sightingOf(call, s)
}

// sightingCall is the script that records s (RecordSighting), for a round
// trip it may share.
func (l *Ledger) sightingCall(repo string, s Seen) *scriptCall {
	base := l.sightingKey(s.Key)
	now := l.now()
	return &scriptCall{script: sightingScript,
		keys: []string{base, base + ":occurrences", base + ":commits", base + ":days", l.flakyTestsKey(repo), l.flakyReposKey(), l.flakyRepoNamesKey()},
		args: []any{s.Occurrence, s.Commit, now.Unix(), int64(SightingsKept / time.Second), s.Where, s.Name, s.Module, s.Key,
			now.Unix() / 86400, strings.ToLower(repo), maxTestsPerRepo, repo}}
}

// sightingOf reads the totals a sightingCall answered.
func sightingOf(call *scriptCall, s Seen) (Sighting, error) {
	res, err := call.cmd.Slice()
	if err != nil {
		return Sighting{}, err
	}
	if len(res) != 4 {
		return Sighting{}, fmt.Errorf("runs: a sighting's answer has %d fields", len(res))
	}
	return Sighting{Count: toInt(res[0]), FirstSeen: time.Unix(toInt(res[1]), 0).UTC(), LastSeen: time.Unix(toInt(res[2]), 0).UTC(), Commits: toInt(res[3]),
		Commit: s.Commit, Where: s.Where, Name: s.Name, Module: s.Module}, nil
}

func toInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

// FlakyTest is one test of a repository's index of flaky tests: its
// sightings, day by day, and the run its key points at now.
type FlakyTest struct {
	Key      string
	Sighting Sighting
	// Days counts its sightings by day (days since 1970, UTC), for the
	// last 90 days.
	Days map[int64]int64
	Run  *Run // nil when no run was ever claimed, or its record expired
}

// Test is the test the key names: the part after the repository of a
// flaky test's key ("flaky:<owner/name>:<path:line>").
func (t FlakyTest) Test() string {
	if parts := strings.SplitN(t.Key, ":", 3); len(parts) == 3 {
		return parts[2]
	}
	return t.Key
}

// Recent is its sightings per day over the last n days up to now, oldest
// first.
func (t FlakyTest) Recent(now time.Time, n int) []int64 {
	out := make([]int64, n)
	today := now.Unix() / 86400
	for i := range out {
		out[i] = t.Days[today-int64(n-1-i)]
	}
	return out
}

// flakyTestsScript reads the most recently seen tests of a repository's
// index (or, with ARGV[3], the keys after it) with their sightings and
// current run, in one round trip.
var flakyTestsScript = redis.NewScript(`
local p = ARGV[2]
local out = {redis.call('ZCARD', KEYS[1])}
local keys
if ARGV[3] then keys = {unpack(ARGV, 3)} else keys = redis.call('ZREVRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1) end
for _, k in ipairs(keys) do
  local base = p .. 'seen:' .. k
  local id = redis.call('GET', p .. 'key:' .. k) or ''
  local run = {'', ''}
  if id ~= '' then run = redis.call('HMGET', p .. 'run:' .. id, 'state', 'json') end
  table.insert(out, {k, redis.call('HGETALL', base), redis.call('HGETALL', base .. ':days'), redis.call('SCARD', base .. ':commits'), id, run[1] or '', run[2] or ''})
end
return out
`)

// FlakyTests reads the limit most recently seen tests of repo, and how
// many the index holds in all.
func (l *Ledger) FlakyTests(ctx context.Context, repo string, limit int) ([]FlakyTest, int, error) {
	return l.flakyTests(ctx, repo, limit)
}

// KnownFlaky reads the tests of repo that keys name and that pitcrew has
// seen flaking (in the last 90 days), with their current run.
func (l *Ledger) KnownFlaky(ctx context.Context, repo string, keys []string) ([]FlakyTest, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	tests, _, err := l.flakyTests(ctx, repo, 0, keys...)
	return tests, err
}

func (l *Ledger) flakyTests(ctx context.Context, repo string, limit int, keys ...string) ([]FlakyTest, int, error) {
	args := []any{limit, l.prefix}
	for _, k := range keys {
		args = append(args, k)
	}
	res, err := flakyTestsScript.Run(ctx, l.rdb, []string{l.flakyTestsKey(repo)}, args...).Slice()
	if err != nil {
		return nil, 0, err
	}
	total := int(toInt(res[0]))
	var tests []FlakyTest
	for _, row := range res[1:] {
		f, _ := row.([]any)
		if len(f) != 7 {
			continue
		}
		t := FlakyTest{Key: str(f[0]), Days: map[int64]int64{}}
		h := pairs(f[1])
		if h["count"] == "" {
			continue // the test's sightings expired before the index did
		}
		t.Sighting = Sighting{Count: toInt(h["count"]), FirstSeen: time.Unix(toInt(h["first_seen"]), 0).UTC(), LastSeen: time.Unix(toInt(h["last_seen"]), 0).UTC(),
			Commits: toInt(f[3]), Commit: h["commit"], Where: h["where"], Name: h["name"], Module: h["module"]}
		for d, n := range pairs(f[2]) {
			t.Days[toInt(d)] = toInt(n)
		}
		if run, err := decodeRun(str(f[4]), str(f[5]), str(f[6])); err == nil {
			t.Run = &run
		}
		tests = append(tests, t)
	}
	return tests, total, nil
}

// FlakyRepos lists the repositories with a test seen flaking in the last
// 90 days, named as GitHub spells them, most recent first.
func (l *Ledger) FlakyRepos(ctx context.Context, limit int64) ([]string, error) {
	lower, err := l.rdb.ZRevRange(ctx, l.flakyReposKey(), 0, limit-1).Result()
	if err != nil || len(lower) == 0 {
		return lower, err
	}
	names, err := l.rdb.HMGet(ctx, l.flakyRepoNamesKey(), lower...).Result()
	if err != nil {
		return nil, err
	}
	for i, n := range names {
		if s, ok := n.(string); ok && strings.EqualFold(s, lower[i]) {
			lower[i] = s // else a sighting recorded before names were kept
		}
	}
	return lower, nil
}

func str(v any) string { s, _ := v.(string); return s }

// pairs reads an HGETALL reply a script returned (a flat list).
func pairs(v any) map[string]string {
	list, _ := v.([]any)
	out := map[string]string{}
	for i := 0; i+1 < len(list); i += 2 {
		out[str(list[i])] = str(list[i+1])
	}
	return out
}
