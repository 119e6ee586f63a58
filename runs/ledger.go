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
}

// NewLedger returns a ledger keeping its records under "pitcrew:".
func NewLedger(rdb redis.UniversalClient) *Ledger {
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
// "<key>#<gen>". The generation counter never expires, so run ids (and the
// sandbox idempotency keys made from them) are never reused.
var claimScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur then
  local f = redis.call('HMGET', ARGV[3] .. cur, 'state', 'ended_at')
  local state, ended = f[1], tonumber(f[2] or '0')
  if state == 'queued' or state == 'started' then return {'attached', cur} end
  if (state == 'completed' or state == 'not_reproduced') and ended + tonumber(ARGV[2]) > tonumber(ARGV[1]) then
    return {'cooldown', cur}
  end
end
if redis.call('INCR', KEYS[3]) > tonumber(ARGV[7]) then
  redis.call('DECR', KEYS[3])
  return {'limited', ''}
end
redis.call('EXPIRE', KEYS[3], 172800)
local id = ARGV[4] .. '#' .. redis.call('INCR', KEYS[2])
local rk = ARGV[3] .. id
redis.call('HSET', rk, 'id', id, 'state', 'queued', 'ended_at', '0', 'json', ARGV[5])
redis.call('EXPIRE', rk, ARGV[6])
redis.call('SET', KEYS[1], id, 'EX', ARGV[6])
redis.call('ZADD', KEYS[4], ARGV[1], id)
redis.call('ZREMRANGEBYRANK', KEYS[4], 0, -501)
return {'new', id}
`)

// Claim records r as a new queued run for r.Key unless a live run holds
// the key, or an ended one does within cooldown. It returns the run that
// holds the key afterwards and how the caller's signal relates to it. A
// new run counts against r.Repo's dailyLimit runs per day (UTC); past it,
// nothing is recorded and the answer is ClaimLimited.
func (l *Ledger) Claim(ctx context.Context, r Run, cooldown time.Duration, dailyLimit int) (Run, Claim, error) {
	if r.Key == "" {
		return Run{}, "", errors.New("runs: claim without a key")
	}
	r.CreatedAt = l.now().UTC()
	body, err := json.Marshal(r)
	if err != nil {
		return Run{}, "", err
	}
	res, err := claimScript.Run(ctx, l.rdb,
		[]string{l.pointerKey(r.Key), l.genKey(r.Key), l.dailyKey(r.Repo), l.recentKey()},
		l.now().Unix(), int64(cooldown/time.Second), l.prefix+"run:", r.Key, body, int64(Retention/time.Second), dailyLimit,
	).StringSlice()
	if err != nil {
		return Run{}, "", fmt.Errorf("runs: claim %s: %w", r.Key, err)
	}
	if Claim(res[0]) == ClaimLimited {
		return Run{}, ClaimLimited, nil
	}
	got, err := l.Get(ctx, res[1])
	return got, Claim(res[0]), err
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
	if state == "" || body == "" {
		return Run{}, ErrNotFound
	}
	var r Run
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return Run{}, fmt.Errorf("runs: decode %s: %w", id, err)
	}
	r.ID, r.State = id, State(state)
	return r, nil
}

// BySession finds the run a sandbox session belongs to.
func (l *Ledger) BySession(ctx context.Context, sessionID string) (Run, error) {
	id, err := l.rdb.Get(ctx, l.sessionKey(sessionID)).Result()
	if errors.Is(err, redis.Nil) {
		return Run{}, ErrNotFound
	}
	if err != nil {
		return Run{}, fmt.Errorf("runs: find session: %w", err)
	}
	return l.Get(ctx, id)
}

// HasSession reports whether a sandbox session belongs to a run (one
// round trip, for the callback's answer).
func (l *Ledger) HasSession(ctx context.Context, sessionID string) (bool, error) {
	n, err := l.rdb.Exists(ctx, l.sessionKey(sessionID)).Result()
	return n > 0, err
}

// Update changes a run under optimistic locking: change sees the current
// record and may alter it; returning an error leaves it untouched. A change
// of State must follow the state machine. A run that has just got a
// session is indexed by it.
func (l *Ledger) Update(ctx context.Context, id string, change func(*Run) error) (Run, error) {
	var out Run
	key := l.runKey(id)
	txf := func(tx *redis.Tx) error {
		cur, err := l.get(ctx, tx, id)
		if err != nil {
			return err
		}
		next := cur
		if err := change(&next); err != nil {
			return err
		}
		if next.State != cur.State {
			if !CanMove(cur.State, next.State) {
				return ErrTransition{From: cur.State, To: next.State}
			}
			switch {
			case next.State == Started && next.StartedAt.IsZero():
				next.StartedAt = l.now().UTC()
			case next.State.Terminal() && next.EndedAt.IsZero():
				next.EndedAt = l.now().UTC()
			}
		}
		body, err := json.Marshal(next)
		if err != nil {
			return err
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, key, "state", string(next.State), "ended_at", strconv.FormatInt(endedUnix(next), 10), "json", body)
			p.Expire(ctx, key, Retention)
			if next.SessionID != "" && next.SessionID != cur.SessionID {
				p.Set(ctx, l.sessionKey(next.SessionID), id, Retention)
			}
			// Started runs are indexed by start time, for the reconciler.
			if next.State == Started && next.SessionID != "" {
				p.ZAdd(ctx, l.startedKey(), redis.Z{Score: float64(next.StartedAt.Unix()), Member: next.SessionID})
			} else if next.State.Terminal() && cur.SessionID != "" {
				p.ZRem(ctx, l.startedKey(), cur.SessionID)
			}
			return nil
		})
		out = next
		return err
	}
	for attempt := 0; attempt < 20; attempt++ {
		err := l.rdb.Watch(ctx, txf, key)
		if !errors.Is(err, redis.TxFailedErr) {
			return out, err
		}
	}
	return Run{}, fmt.Errorf("runs: update %s: too much contention", id)
}

// Move changes a run's state (and whatever change sets alongside).
func (l *Ledger) Move(ctx context.Context, id string, to State, change func(*Run)) (Run, error) {
	return l.Update(ctx, id, func(r *Run) error {
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

// RecordDelivery keeps the last 100 deliveries the workers handled.
func (l *Ledger) RecordDelivery(ctx context.Context, d DeliveryRecord) error {
	b, _ := json.Marshal(d)
	_, err := l.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.LPush(ctx, l.deliveriesKey(), b)
		p.LTrim(ctx, l.deliveriesKey(), 0, 99)
		return nil
	})
	return err
}

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
