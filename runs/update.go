package runs

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

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
