package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/internal/durable"
)

// Retention is how long a run record stays in Redis after its last change.
const Retention = 30 * 24 * time.Hour

// Claim says how a new signal relates to the runs already recorded.
type Claim string

// The answers of Ledger.Claim.
const (
	ClaimNew      Claim = "new"      // a new run was recorded, queued, for the caller to start
	ClaimAttached Claim = "attached" // a live run already works on this key
	ClaimCooldown Claim = "cooldown" // a run on this key ended within the cooldown
	ClaimLimited  Claim = "limited"  // a new run was needed but the caller may not start one
)

// ErrNotFound is returned when no run matches.
var ErrNotFound = errors.New("run not found")

// Ledger stores runs in Redis. All its methods are safe for concurrent use
// by any number of processes sharing the Redis.
type Ledger struct {
	rdb    redis.UniversalClient
	prefix string
	now    func() time.Time
	// replicated, when set, holds a new claim until a replica has it, so
	// a failover cannot forget a run whose session then starts.
	replicated *durable.Waiter
}

// WaitForReplicas makes each new claim wait for a replica (durable.Waiter).
func (l *Ledger) WaitForReplicas(w *durable.Waiter) { l.replicated = w }

// NewLedger returns a ledger keeping its records under "pitcrew:". It adds
// to rdb the hook that sends a context's held-back status save before any
// other round trip of that context (see HoldStatusSaves); a second ledger
// on the same client adds one more, which finds nothing left to send.
func NewLedger(rdb redis.UniversalClient) *Ledger {
	rdb.AddHook(sendHeldSaves{})
	return &Ledger{rdb: rdb, prefix: "pitcrew:", now: time.Now}
}

func (l *Ledger) runKey(id string) string      { return l.prefix + "run:" + id }
func (l *Ledger) pointerKey(key string) string { return l.prefix + "key:" + key }
func (l *Ledger) genKey(key string) string     { return l.prefix + "gen:" + key }
func (l *Ledger) sessionKey(id string) string  { return l.prefix + "session:" + id }
func (l *Ledger) startedKey() string           { return l.prefix + "started" }
func (l *Ledger) recentKey() string            { return l.prefix + "recent-runs" }

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

// Get reads one run.
func (l *Ledger) Get(ctx context.Context, id string) (Run, error) {
	return l.get(ctx, l.rdb, id)
}

func (l *Ledger) get(ctx context.Context, c redis.Cmdable, id string) (Run, error) {
	f, err := c.HMGet(ctx, l.runKey(id), "state", "json").Result()
	if err != nil {
		return Run{}, fmt.Errorf("runs: read %s: %w", id, err)
	}
	state, _ := f[0].(string)
	body, _ := f[1].(string)
	return decodeRun(id, state, body)
}

// decodeRun makes a Run of its stored fields; the stored body is kept, so
// that an update can check nobody changed the run since.
func decodeRun(id, state, body string) (Run, error) {
	if state == "" || body == "" {
		return Run{}, ErrNotFound
	}
	var r Run
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return Run{}, fmt.Errorf("runs: decode %s: %w", id, err)
	}
	r.ID, r.State, r.stored = id, State(state), body
	return r, nil
}

var bySessionScript = redis.NewScript(`
local id = redis.call('GET', KEYS[1])
if not id then return {'', '', ''} end
local f = redis.call('HMGET', ARGV[1] .. id, 'state', 'json')
return {id, f[1] or '', f[2] or ''}
`)

// BySession finds the run a sandbox session belongs to, in one round trip.
func (l *Ledger) BySession(ctx context.Context, sessionID string) (Run, error) {
	res, err := bySessionScript.Run(ctx, l.rdb, []string{l.sessionKey(sessionID)}, l.prefix+"run:").StringSlice()
	if err != nil {
		return Run{}, fmt.Errorf("runs: find session: %w", err)
	}
	return decodeRun(res[0], res[1], res[2])
}

// Snapshot is a run as the ledger stored it, carried in a task so that
// the task need not read it again: Open gives the run back with its stored
// body, so an update of it is one round trip while nobody changed the run.
// Only writes check it (Update reads a stale copy again): a reader that
// decides on it must know it may be old.
type Snapshot struct {
	ID    string `json:"id"`
	State string `json:"state"`
	Body  string `json:"body"`
}

// Snapshot is the run as it was read or last written.
func (r Run) Snapshot() Snapshot { return Snapshot{ID: r.ID, State: string(r.State), Body: r.stored} }

// Open decodes the run a snapshot holds.
func (s Snapshot) Open() (Run, error) { return decodeRun(s.ID, s.State, s.Body) }

// updateScript writes a run only if it is still as the writer read it
// (state and body), and keeps the session index and the started set with
// it: one round trip for an update nobody raced. With ARGV[11] set, the
// write also releases the lock KEYS[5] it holds with that token; with
// ARGV[12] set too, and the lock still its own, it points the last key (a
// pull request's pointer, which that lock guards) at the run. It answers
// {1, the run's subjects...} when it wrote, {0} when the run had changed.
var updateScript = redis.NewScript(`
local f = redis.call('HMGET', KEYS[1], 'state', 'json')
if f[1] ~= ARGV[1] or f[2] ~= ARGV[2] then return {0} end
local owns = ARGV[11] ~= '' and redis.call('GET', KEYS[5]) == ARGV[11]
if owns then redis.call('DEL', KEYS[5]) end
if owns and ARGV[12] ~= '' then redis.call('SET', KEYS[#KEYS], ARGV[12], 'EX', ARGV[6]) end
redis.call('HSET', KEYS[1], 'state', ARGV[3], 'ended_at', ARGV[4], 'json', ARGV[5])
redis.call('EXPIRE', KEYS[1], ARGV[6])
if ARGV[7] ~= '' then redis.call('SET', KEYS[2], ARGV[7], 'EX', ARGV[6]) end
if ARGV[8] == 'add' then redis.call('ZADD', KEYS[3], ARGV[9], ARGV[10]) end
if ARGV[8] == 'rem' then redis.call('ZREM', KEYS[3], ARGV[10]) end
local out = redis.call('SMEMBERS', KEYS[4])
table.insert(out, 1, 1)
return out
`)

// Update changes a run under optimistic locking: change sees the current
// record and may alter it; returning an error leaves it untouched. A change
// of State must follow the state machine. A run that has just got a
// session is indexed by it. run is the caller's copy: when nobody changed
// the run since it was read, the update is one round trip; a run with only
// its ID is read first, and a stale copy is read again and change re-run.
func (l *Ledger) Update(ctx context.Context, run Run, change func(*Run) error) (Run, error) {
	return l.update(ctx, run, change, writeAhead{})
}

// UpdateShowing is Update for a run its caller shows on subject s next:
// in a context that takes locks ahead, the write tries the status lock of
// s in its own round trip (see WithLocksAhead).
func (l *Ledger) UpdateShowing(ctx context.Context, run Run, change func(*Run) error, s Subject) (Run, error) {
	return l.update(ctx, run, change, writeAhead{show: s})
}

// writeAhead is what a write does besides: release is a lock the write
// releases (see LockedPull.Update), and stays held when nothing is
// written; pointer is a pull request's pointer the write sets to the run
// (see LockedPull); show is the subject whose status lock, and follow
// the number of the run's pull request (of the run as written) whose lock
// to follow it, the write tries ahead (see WithLocksAhead).
type writeAhead struct {
	release *held
	pointer string
	show    Subject
	follow  func(Run) int
}

// update is Update, doing what ahead says besides.
func (l *Ledger) update(ctx context.Context, run Run, change func(*Run) error, ahead writeAhead) (Run, error) {
	cur := run
	for attempt := 0; attempt < 20; attempt++ {
		fresh := cur.stored == ""
		if fresh {
			var err error
			if cur, err = l.Get(ctx, run.ID); err != nil {
				return Run{}, err
			}
		}
		next := cur
		err := change(&next)
		if err == nil && next.State != cur.State && !CanMove(cur.State, next.State) && !resumes(cur, next) {
			err = ErrTransition{From: cur.State, To: next.State}
		}
		if err != nil && !fresh {
			cur = Run{} // judged on the caller's copy: judge again on the stored run
			continue
		}
		if err != nil {
			return Run{}, err
		}
		if next.State != cur.State {
			switch {
			case next.State == Started && next.StartedAt.IsZero():
				next.StartedAt = l.now().UTC()
			case next.State.Terminal() && next.EndedAt.IsZero():
				next.EndedAt = l.now().UTC()
			}
		}
		body, err := json.Marshal(next)
		if err != nil {
			return Run{}, err
		}
		var index, session, member string
		var score int64
		if next.SessionID != "" && next.SessionID != cur.SessionID {
			session = next.ID
		}
		// Started runs are indexed by start time, for the reconciler.
		if next.State == Started && next.SessionID != "" {
			index, score, member = "add", next.StartedAt.Unix(), next.SessionID
		} else if next.State.Terminal() && cur.SessionID != "" {
			index, member = "rem", cur.SessionID
		}
		keys, token, pointTo := []string{l.runKey(next.ID), l.sessionKey(next.SessionID), l.startedKey(), l.subjectsKey(next.ID)}, "", ""
		if ahead.release != nil {
			keys, token = append(keys, ahead.release.key), ahead.release.token
		}
		if ahead.pointer != "" {
			keys, pointTo = append(keys, ahead.pointer), next.ID
		}
		write := &scriptCall{script: updateScript, keys: keys, args: []any{
			string(cur.State), cur.stored, string(next.State), endedUnix(next), body, int64(Retention / time.Second),
			session, index, score, member, token, pointTo}}
		tries := l.triesFor(ctx, ahead, next)
		_ = l.runScripts(ctx, append([]*scriptCall{write}, tries.calls()...)...) // each answer is read below
		tries.keep()
		res, err := write.cmd.Slice()
		if err != nil {
			return Run{}, fmt.Errorf("runs: update %s: %w", next.ID, err)
		}
		if len(res) > 0 && res[0] == int64(1) {
			if ahead.release != nil {
				_ = ahead.release.release(func() error { return nil }) // released by the write
			}
			next.stored, next.subjects = string(body), []string{}
			for _, s := range res[1:] {
				if s, ok := s.(string); ok {
					next.subjects = append(next.subjects, s)
				}
			}
			locksAheadIn(ctx).saw(next)
			if session != "" {
				// A session's callbacks find its run by this index: a
				// failover must not forget it. On an error the caller
				// retries, and the sandbox's idempotency key gives it the
				// same session to record again.
				err = l.replicated.Wait(ctx, l.runKey(next.ID), l.sessionKey(next.SessionID))
			}
			return next, err
		}
		cur = Run{} // someone else wrote it: read it again
	}
	return Run{}, fmt.Errorf("runs: update %s: too much contention", run.ID)
}

// Move changes a run's state (and whatever change sets alongside); run is
// as for Update.
func (l *Ledger) Move(ctx context.Context, run Run, to State, change func(*Run)) (Run, error) {
	return l.Update(ctx, run, func(r *Run) error {
		r.State = to
		if change != nil {
			change(r)
		}
		return nil
	})
}

func endedUnix(r Run) int64 {
	if r.EndedAt.IsZero() {
		return 0
	}
	return r.EndedAt.Unix()
}

// StartedBefore lists the sessions of runs started before cutoff that have
// no outcome yet (at most limit, oldest first).
func (l *Ledger) StartedBefore(ctx context.Context, cutoff time.Time, limit int64) ([]string, error) {
	return l.rdb.ZRangeByScore(ctx, l.startedKey(), &redis.ZRangeBy{Min: "-inf", Max: strconv.FormatInt(cutoff.Unix(), 10), Count: limit}).Result()
}

// Recent lists the newest runs (at most limit; the ledger keeps 500).
func (l *Ledger) Recent(ctx context.Context, limit int64) ([]Run, error) {
	ids, err := l.rdb.ZRevRange(ctx, l.recentKey(), 0, limit-1).Result()
	if err != nil {
		return nil, err
	}
	var out []Run
	for _, id := range ids {
		r, err := l.Get(ctx, id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// DeliveryRecord is one GitHub delivery as the worker handled it.
type DeliveryRecord struct {
	ID      string    `json:"id"`
	Event   string    `json:"event"`
	Outcome string    `json:"outcome"` // handled, failed, skipped (already processed)
	At      time.Time `json:"at"`
}

func (l *Ledger) deliveriesKey() string { return l.prefix + "recent-deliveries" }

// RecentDeliveries lists the last deliveries, newest first.
func (l *Ledger) RecentDeliveries(ctx context.Context, limit int64) ([]DeliveryRecord, error) {
	vals, err := l.rdb.LRange(ctx, l.deliveriesKey(), 0, limit-1).Result()
	if err != nil {
		return nil, err
	}
	out := make([]DeliveryRecord, 0, len(vals))
	for _, v := range vals {
		var d DeliveryRecord
		if json.Unmarshal([]byte(v), &d) == nil {
			out = append(out, d)
		}
	}
	return out, nil
}
