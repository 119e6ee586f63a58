package runs

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// lockStatusScript takes a status lock and, once taken, reads the status,
// the runs its entries name and the runs ARGV[5...] name. A status not on
// GitHub yet (no comment or check run id) gets its create mark (KEYS[3],
// kept ARGV[4] seconds): 'new' when this lock placed it, 'earlier' when an
// earlier holder did and may have created without recording it. It answers
// {0} when the lock is held elsewhere, else {1, status, mark, then id,
// state, body of each run found}.
var lockStatusScript = redis.NewScript(`
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {0} end
local st = redis.call('GET', KEYS[2])
local v = nil
if st then
  local ok, decoded = pcall(cjson.decode, st)
  if ok and type(decoded) == 'table' then v = decoded end
end
local function placed(id) return type(id) == 'number' and id > 0 end
local mark = ''
if not (v and (placed(v.comment_id) or placed(v.check_run_id))) then
  if redis.call('SET', KEYS[3], '1', 'NX', 'EX', ARGV[4]) then mark = 'new' else mark = 'earlier' end
end
local out, seen = {1, st or '', mark}, {}
local function read(id)
  if type(id) ~= 'string' or id == '' or seen[id] then return end
  seen[id] = true
  local f = redis.call('HMGET', ARGV[3] .. id, 'state', 'json')
  if f[1] and f[2] then
    table.insert(out, id)
    table.insert(out, f[1])
    table.insert(out, f[2])
  end
end
if v and type(v.entries) == 'table' then
  for _, e in ipairs(v.entries) do
    if type(e) == 'table' then read(e.run_id) end
  end
end
for i = 5, #ARGV do read(ARGV[i]) end
return out`)

func statusLockName(s Subject) string { return "status:" + s.String() }

func (l *Ledger) createMarkKey(s Subject) string { return l.prefix + "status-creating:" + s.String() }

// LockStatus takes the lock on a subject's status (see Lock) and reads the
// status, the runs its entries name and the runs also names (those the
// caller is about to show), in the same round trip. A status not on GitHub
// yet is marked as one a create may follow (StatusLock.BeforeCreate), and
// one whose mark an earlier holder left comes back with Creating set. A
// lock ctx took ahead (WithLocksAhead) is handed over without a round trip.
func (l *Ledger) LockStatus(ctx context.Context, s Subject, ttl, wait time.Duration, also ...string) (Status, map[string]Run, *StatusLock, error) {
	if ahead := locksAheadIn(ctx).takeStatus(s); ahead != nil {
		if err := l.readMissing(ctx, ahead.found, also); err != nil {
			ahead.lock.Unlock()
			return Status{}, nil, nil, err
		}
		return ahead.st, ahead.found, ahead.lock, nil
	}
	var res []any
	h, err := l.lock(ctx, statusLockName(s), ttl, wait, func(key, token string) (bool, error) {
		c := l.lockStatusCall(s, key, token, ttl, also)
		var err error
		res, err = c.script.Run(ctx, l.rdb, c.keys, c.args...).Slice()
		return err == nil && len(res) > 0 && res[0] == int64(1), err
	})
	if err != nil {
		return Status{}, nil, nil, err
	}
	return l.statusLocked(s, h, res)
}

// readMissing reads, in one round trip, the runs of ids that found lacks.
func (l *Ledger) readMissing(ctx context.Context, found map[string]Run, ids []string) error {
	var missing []string
	for _, id := range ids {
		if _, ok := found[id]; !ok && id != "" {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	reads := make([]*redis.SliceCmd, len(missing))
	if _, err := l.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range missing {
			reads[i] = p.HMGet(ctx, l.runKey(id), "state", "json")
		}
		return nil
	}); err != nil {
		return err
	}
	for i, id := range missing {
		state, _ := reads[i].Val()[0].(string)
		body, _ := reads[i].Val()[1].(string)
		if r, err := decodeRun(id, state, body); err == nil { // as LockStatus: a run that does not decode is left to Get
			found[id] = r
		}
	}
	return nil
}

// lockStatusCall is one attempt at a subject's status lock for token
// (lockStatusScript).
func (l *Ledger) lockStatusCall(s Subject, key, token string, ttl time.Duration, also []string) *scriptCall {
	args := []any{token, ttl.Milliseconds(), l.prefix + "run:", int64(Retention / time.Second)}
	for _, id := range also {
		args = append(args, id)
	}
	return &scriptCall{script: lockStatusScript, keys: []string{key, l.statusKey(s), l.createMarkKey(s)}, args: args}
}

// statusLocked decodes what lockStatusScript read with the lock h took.
func (l *Ledger) statusLocked(s Subject, h *held, res []any) (Status, map[string]Run, *StatusLock, error) {
	mark, _ := res[2].(string)
	sl := &StatusLock{l: l, s: s, held: h, marked: mark != "", earlier: mark == "earlier"}
	st, found, err := decodeLocked(res)
	if err != nil {
		sl.Unlock() // and the mark it placed
		return Status{}, nil, nil, err
	}
	st.Creating = st.Creating || sl.earlier
	return st, found, sl, nil
}

func decodeLocked(res []any) (Status, map[string]Run, error) {
	var st Status
	if raw, _ := res[1].(string); raw != "" {
		if err := json.Unmarshal([]byte(raw), &st); err != nil {
			return st, nil, err
		}
	}
	found := map[string]Run{}
	for i := 3; i+2 < len(res); i += 3 {
		id, _ := res[i].(string)
		state, _ := res[i+1].(string)
		body, _ := res[i+2].(string)
		// A run that does not decode is left to Get, which reports it only
		// if the status still shows it after the change.
		if r, err := decodeRun(id, state, body); err == nil {
			found[id] = r
		}
	}
	return st, found, nil
}

// StatusLock is the held lock on one subject's status.
type StatusLock struct {
	l    *Ledger
	s    Subject
	held *held
	// marked says the status carries its create mark; earlier that the
	// mark was there before this lock; sent that a create was about to be
	// sent under this lock (BeforeCreate); heldBack that its save was held
	// back (HoldStatusSaves), to release the lock when sent.
	marked, earlier, sent, heldBack bool
}

// Unlock releases the lock; after SaveAndUnlock it does nothing. A create
// mark this lock placed goes with it when nothing was created.
func (sl *StatusLock) Unlock() {
	if sl.heldBack {
		return // the save held back releases it
	}
	sl.unlock()
}

func (sl *StatusLock) unlock() {
	if !sl.marked || sl.earlier || sl.sent {
		sl.held.unlock()
		return
	}
	_ = sl.held.release(func() error {
		return unlockUnmarkScript.Run(context.WithoutCancel(sl.held.ctx), sl.l.rdb, []string{sl.held.key, sl.l.createMarkKey(sl.s)}, sl.held.token).Err()
	})
}

// BeforeCreate records, before the subject's comment or check run is
// created, that a create is under way, so that an attempt that dies between
// GitHub's answer and SaveAndUnlock makes the next holder look for what it
// created instead of making a second one. The mark LockStatus placed says
// so already (no round trip); otherwise st is saved with Creating set.
func (sl *StatusLock) BeforeCreate(ctx context.Context, st Status) error {
	if sl.marked {
		sl.sent = true
		return nil
	}
	st.Creating = true
	return sl.l.SaveStatus(ctx, sl.s, st)
}

var unlockUnmarkScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[2])
return redis.call('DEL', KEYS[1])`)

// saveUnlockLua stores a status (KEYS[2], ARGV[2] for ARGV[3] seconds),
// drops its create mark (KEYS[3]) and releases its lock (KEYS[1], token
// ARGV[1]), only while the caller still holds the lock: a holder whose
// lock expired must not overwrite what the next holder wrote.
const saveUnlockLua = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])
redis.call('DEL', KEYS[3])
redis.call('DEL', KEYS[1])`

var saveUnlockScript = redis.NewScript(saveUnlockLua + "\nreturn 1")

// ErrLockLost is a status save refused because its lock had expired or
// been released.
var ErrLockLost = errors.New("runs: the status lock was lost before the save")

// SaveAndUnlock stores the status and releases the lock in one round trip,
// or, in a context that holds saves back (HoldStatusSaves), holds it back
// for the delivery's record. If the lock is no longer held nothing is
// stored (ErrLockLost); if Redis cannot be reached, Unlock may still
// release it.
func (sl *StatusLock) SaveAndUnlock(ctx context.Context, st Status) error {
	st.Written = sl.l.now().UTC()
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if a := locksAheadIn(ctx); a.holdsSaves() {
		a.holdSave(&heldSave{sl: sl, body: b})
		return nil
	}
	return sl.release(func() (bool, error) { return sl.saveUnlock(ctx, b) })
}

func (sl *StatusLock) saveKeys() []string {
	return []string{sl.held.key, sl.l.statusKey(sl.s), sl.l.createMarkKey(sl.s)}
}

func (sl *StatusLock) saveArgs(status []byte) []any {
	return []any{sl.held.token, status, int64(Retention / time.Second)}
}

// saveUnlock runs saveUnlockScript: saved is false if the lock was lost.
func (sl *StatusLock) saveUnlock(ctx context.Context, status []byte) (saved bool, err error) {
	n, err := saveUnlockScript.Run(ctx, sl.l.rdb, sl.saveKeys(), sl.saveArgs(status)...).Int()
	return n == 1, err
}

// release releases the lock with save, a write that says whether it went
// through: ErrLockLost if it did not, or if the lock was released before.
func (sl *StatusLock) release(save func() (saved bool, err error)) error {
	saved := false
	err := sl.held.release(func() error {
		var err error
		saved, err = save()
		return err
	})
	switch {
	case errors.Is(err, errReleased), err == nil && !saved:
		return ErrLockLost
	}
	return err
}
