package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// Claim says how a new signal relates to the runs already recorded.
type Claim string

// The answers of Ledger.Claim.
const (
	ClaimNew      Claim = "new"      // a new run was recorded, queued, for the caller to start
	ClaimAttached Claim = "attached" // a live run already works on this key
	ClaimCooldown Claim = "cooldown" // a run on this key ended within the cooldown
	ClaimLimited  Claim = "limited"  // a new run was needed but the caller may not start one
)

// claimScript decides, atomically, whether a key gets a new run. It reads
// the run the key points at; a live run, or an ended one still in its
// cooldown, wins. Otherwise it takes one of the repository's runs for the
// day (KEYS[3]; none left: "limited") and records a new queued run
// "<key>#<gen>", with the previous run's merged pull request as its
// PriorFix. The generation counter never expires, so run ids (and the
// sandbox idempotency keys made from them) are never reused. A subscriber
// (ARGV[8]) is subscribed to the run it settles on, unless that run belongs
// to another installation than ARGV[9].
var claimScript = redis.NewScript(`
local function subscribe(id, body)
  if ARGV[8] == '' then return end
  -- Compared as digits: Lua numbers are doubles. A quote and colon right
  -- after the name cannot occur inside a JSON string, where quotes are escaped.
  if string.match(body or '', '"installation_id":(%-?%d+)') ~= ARGV[9] then return end
  local sk = ARGV[3] .. id .. ':subjects'
  redis.call('SADD', sk, ARGV[8])
  redis.call('EXPIRE', sk, ARGV[6])
end
-- The merged fix of the key's previous run, as a prior_fix field, so that
-- the new run keeps it through a retried start.
local function priorFix(prevBody)
  if prevBody == '' then return nil end
  local ok, prev = pcall(cjson.decode, prevBody)
  if not ok or type(prev) ~= 'table' or type(prev.pr) ~= 'table' or prev.pr.state ~= 'merged' then return nil end
  local pr = prev.pr
  if type(pr.number) ~= 'number' or type(pr.url) ~= 'string' or type(pr.merged_at) ~= 'string' then return nil end
  return cjson.encode({number = pr.number, url = pr.url, merged_at = pr.merged_at})
end
local cur = redis.call('GET', KEYS[1])
local prev = ''
if cur then
  local f = redis.call('HMGET', ARGV[3] .. cur, 'state', 'ended_at', 'json')
  prev = f[3] or ''
  local state, ended = f[1], tonumber(f[2] or '0')
  if state == 'queued' or state == 'started' then
    subscribe(cur, f[3])
    return {'attached', cur, state, f[3]}
  end
  if (state == 'completed' or state == 'not_reproduced') and ended + tonumber(ARGV[2]) > tonumber(ARGV[1]) then
    subscribe(cur, f[3])
    return {'cooldown', cur, state, f[3]}
  end
end
if redis.call('INCR', KEYS[3]) > tonumber(ARGV[7]) then
  redis.call('DECR', KEYS[3])
  return {'limited', '', '', ''}
end
redis.call('EXPIRE', KEYS[3], 172800)
local id = ARGV[4] .. '#' .. redis.call('INCR', KEYS[2])
local rk = ARGV[3] .. id
local body = ARGV[5]
local fix = priorFix(prev)
if fix then body = string.sub(body, 1, -2) .. ',"prior_fix":' .. fix .. '}' end
redis.call('HSET', rk, 'id', id, 'state', 'queued', 'ended_at', '0', 'json', body)
redis.call('EXPIRE', rk, ARGV[6])
redis.call('SET', KEYS[1], id, 'EX', ARGV[6])
redis.call('ZADD', KEYS[4], ARGV[1], id)
redis.call('ZREMRANGEBYRANK', KEYS[4], 0, -501)
subscribe(id, body)
return {'new', id, 'queued', body}
`)

// Claim records r as a new queued run for r.Key unless a live run holds
// the key, or an ended one does within cooldown. It returns the run that
// holds the key afterwards and how the caller's signal relates to it. A
// new run counts against r.Repo's dailyLimit runs per day (UTC); past it,
// nothing is recorded and the answer is ClaimLimited. A non-zero
// subscriber is subscribed to the run (Subscribe) in the same round trip,
// unless the run belongs to another installation than r's.
func (l *Ledger) Claim(ctx context.Context, r Run, cooldown time.Duration, dailyLimit int, subscriber Subject) (Run, Claim, error) {
	run, claim, _, err := l.ClaimSeen(ctx, r, cooldown, dailyLimit, subscriber, nil)
	return run, claim, err
}

// ClaimSeen is Claim with, when seen is set, the signal's sighting of the
// test recorded first in the same round trip (RecordSighting), and its
// totals returned.
func (l *Ledger) ClaimSeen(ctx context.Context, r Run, cooldown time.Duration, dailyLimit int, subscriber Subject, seen *Seen) (Run, Claim, Sighting, error) {
	if r.Key == "" {
		return Run{}, "", Sighting{}, errors.New("runs: claim without a key")
	}
	r.CreatedAt = l.now().UTC()
	body, err := json.Marshal(r)
	if err != nil {
		return Run{}, "", Sighting{}, err
	}
	claim := &scriptCall{script: claimScript,
		keys: []string{l.pointerKey(r.Key), l.genKey(r.Key), l.dailyKey(r.Repo), l.recentKey()},
		args: []any{l.now().Unix(), int64(cooldown / time.Second), l.prefix + "run:", r.Key, body, int64(Retention / time.Second), dailyLimit,
			subscriberName(subscriber), r.InstallationID}}
	calls := []*scriptCall{claim}
	var sighting Sighting
	if seen != nil {
		calls = append([]*scriptCall{l.sightingCall(r.Repo, *seen)}, claim)
	}
	_ = l.runScripts(ctx, calls...) // each answer is read below
	res, err := claim.cmd.StringSlice()
	if err != nil {
		return Run{}, "", Sighting{}, fmt.Errorf("runs: claim %s: %w", r.Key, err)
	}
	if seen != nil {
		if sighting, err = sightingOf(calls[0], *seen); err != nil {
			// The claim stands: failing the signal now would leave its
			// run queued and a slot of the daily limit taken.
			zerolog.Ctx(ctx).Warn().Err(err).Str("idempotency_key", r.Key).Msg("the sighting could not be counted")
		}
	}
	if Claim(res[0]) == ClaimLimited {
		return Run{}, ClaimLimited, sighting, nil
	}
	got, err := decodeRun(res[1], res[2], res[3])
	if err == nil {
		locksAheadIn(ctx).saw(got)
	}
	if err == nil && got.State == Queued {
		// A queued run is what a session starts from: a replica must have
		// it first, or a failover could forget it and start a second one.
		err = l.replicated.Wait(ctx, l.runKey(got.ID))
	}
	return got, Claim(res[0]), sighting, err
}

func subscriberName(s Subject) string {
	if s == (Subject{}) {
		return ""
	}
	return s.String()
}

func (l *Ledger) dailyKey(repo string) string {
	return l.prefix + "daily:" + strings.ToLower(repo) + ":" + l.now().UTC().Format("2006-01-02")
}
