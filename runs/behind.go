package runs

import (
	"context"
	"encoding/json"
	"time"

	"github.com/redis/go-redis/v9"
)

// Status saves held back.
//
// A delivery's handler usually ends with a status save that releases the
// status lock (StatusLock.SaveAndUnlock), and its worker then records the
// delivery and marks it processed (RecordDelivery): two round trips, back
// to back. In a context that holds saves back (HoldStatusSaves), the save
// waits instead, its lock still held and renewed, and goes with the
// delivery's record in one script, which marks the delivery processed only
// if the save went through.
//
// A save held back is sent on its own wherever locks taken ahead are given
// up (before the context waits for a lock or starts slow work, at the end
// of its work), before the context reads that subject's status, when the
// context holds back another save, and after aheadHold: nobody waits for
// the lock longer than that. If such a send finds its lock lost, the next
// RecordDelivery reports it and records nothing, so the delivery's task is
// retried, as when the handler saw the error itself.

// HoldStatusSaves makes ctx, a context with locks ahead (WithLocksAhead),
// hold its status saves back for RecordDelivery.
func HoldStatusSaves(ctx context.Context) {
	if a := locksAheadIn(ctx); a != nil {
		a.mu.Lock()
		a.holdSaves = true
		a.mu.Unlock()
	}
}

// heldSave is a status save held back: the lock, and the status to store.
type heldSave struct {
	sl   *StatusLock
	body []byte
}

func (a *locksAhead) holdsSaves() bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.holdSaves
}

// holdSave holds h back, sending the save held before it.
func (a *locksAhead) holdSave(h *heldSave) {
	h.sl.heldBack = true
	a.mu.Lock()
	prev := a.save
	a.save = h
	a.mu.Unlock()
	if prev != nil {
		a.send(prev)
	}
	time.AfterFunc(aheadHold, func() { a.sendSave(func(held *heldSave) bool { return held == h }) })
}

// sendSave sends the save held back, if which says it is the one.
func (a *locksAhead) sendSave(which func(*heldSave) bool) {
	if a == nil {
		return
	}
	a.mu.Lock()
	h := a.save
	if h == nil || !which(h) {
		a.mu.Unlock()
		return
	}
	a.save = nil
	a.mu.Unlock()
	a.send(h)
}

func anySave(*heldSave) bool { return true }

// send stores h's status and releases its lock; an error is kept for
// RecordDelivery.
func (a *locksAhead) send(h *heldSave) {
	ctx := context.WithoutCancel(h.sl.held.ctx)
	if err := h.sl.release(func() (bool, error) { return h.sl.saveUnlock(ctx, h.body) }); err != nil {
		h.sl.unlock() // unless the lock was lost, let it go all the same
		a.mu.Lock()
		if a.saveErr == nil {
			a.saveErr = err
		}
		a.mu.Unlock()
	}
}

// takeSave hands over the save held back, and the error of one sent
// before.
func (a *locksAhead) takeSave() (*heldSave, error) {
	if a == nil {
		return nil, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	h, err := a.save, a.saveErr
	a.save, a.saveErr = nil, nil
	return h, err
}

// recordDeliveryScript stores the status save held back, if any (ARGV[1]
// is its lock's token, else empty; KEYS[1..3] and ARGV[1..3] as
// saveUnlockScript's), and only if it went through keeps the delivery
// ARGV[4] among the last 100 (KEYS[4]) and, unless ARGV[5] is 0, sets its
// processed mark KEYS[5] for ARGV[5] seconds.
var recordDeliveryScript = redis.NewScript(`
if ARGV[1] ~= '' then` + saveUnlockLua + `
end
redis.call('LPUSH', KEYS[4], ARGV[4])
redis.call('LTRIM', KEYS[4], 0, 99)
if ARGV[5] ~= '0' then redis.call('SET', KEYS[5], '1', 'EX', ARGV[5]) end
return 1`)

// RecordDelivery keeps the last 100 deliveries the workers handled and,
// when mark is set, marks the delivery processed for ttl, in one round
// trip with the status save ctx held back (HoldStatusSaves). If that save,
// or one sent before, was refused (ErrLockLost: its lock was lost),
// nothing is recorded.
func (l *Ledger) RecordDelivery(ctx context.Context, d DeliveryRecord, mark string, ttl time.Duration) error {
	held, err := locksAheadIn(ctx).takeSave()
	if err != nil {
		return err
	}
	b, _ := json.Marshal(d)
	list := l.deliveriesKey()
	seconds := int64(0)
	if mark != "" {
		seconds = max(1, int64(ttl/time.Second))
	} else {
		mark = list // not written
	}
	call := func(keys []string, args ...any) (bool, error) {
		c := &scriptCall{script: recordDeliveryScript, keys: append(keys, list, mark), args: append(args, b, seconds)}
		if err := l.runScripts(ctx, c); err != nil {
			return false, err
		}
		n, err := c.cmd.Int()
		return n == 1, err
	}
	if held == nil {
		_, err := call([]string{list, list, list}, "", "", 0) // no save: the first keys are not read
		return err
	}
	err = held.sl.release(func() (bool, error) { return call(held.sl.saveKeys(), held.sl.saveArgs(held.body)...) })
	if err != nil {
		held.sl.unlock()
	}
	return err
}
