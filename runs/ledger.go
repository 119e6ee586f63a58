package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pitcrew/pitcrew/internal/durable"
)

// Retention is how long a run record stays in Redis after its last change.
const Retention = 30 * 24 * time.Hour

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

// StartInFlight reports whether a run claimed within the last within is
// still queued: its session may be starting, and a callback for a
// session pitcrew has not recorded yet may be that run's. It asks for the
// runs' states in one round trip: it is on the callback's path.
func (l *Ledger) StartInFlight(ctx context.Context, within time.Duration) (bool, error) {
	since := strconv.FormatInt(l.now().Add(-within).Unix(), 10)
	ids, err := l.rdb.ZRevRangeByScore(ctx, l.recentKey(), &redis.ZRangeBy{Min: since, Max: "+inf", Count: 100}).Result()
	if err != nil || len(ids) == 0 {
		return false, err
	}
	pipe := l.rdb.Pipeline()
	states := make([]*redis.StringCmd, len(ids))
	for i, id := range ids {
		states[i] = pipe.HGet(ctx, l.runKey(id), "state")
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return false, err
	}
	for _, s := range states {
		if s.Val() == string(Queued) {
			return true, nil
		}
	}
	return false, nil
}
