package runs

import (
	"context"
	"encoding/json"
	"sync"
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
// Any other round trip of the context sends the save first (sendHeldSaves,
// a hook on the ledger's client), so whatever the context reads or writes
// after a save still comes after it, as when the save was sent at once,
// and a save refused (ErrLockLost: its lock was lost) fails that round
// trip and every later one of the context, whether or not its caller
// looks at errors. A save is also sent, without waiting for a round trip, where locks
// taken ahead are given up (before slow work, at the end of the context's
// work) and after aheadHold, so nobody waits for its lock much longer than
// before; the error of such a send fails the later round trips, and
// RecordDelivery, so the delivery's task is retried. What the context sent
// to GitHub between the save and the round trip that reports its refusal
// is sent again by the retry; a lock is lost only after its holder stalled
// for its whole TTL.

// HoldStatusSaves makes ctx, a context with locks ahead (WithLocksAhead),
// hold its status saves back for RecordDelivery.
func HoldStatusSaves(ctx context.Context) {
	if a := locksAheadIn(ctx); a != nil {
		a.mu.Lock()
		a.behind.holding = true
		a.mu.Unlock()
	}
}

// savesBehind is what a context holds back, guarded by locksAhead.mu.
type savesBehind struct {
	holding bool
	save    *heldSave
	sending int        // sends under way
	err     error      // of a refused send: every later round trip fails with it
	sent    *sync.Cond // on locksAhead.mu: a send ended
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
	return a.behind.holding
}

// holdSave holds h back, sending the save held before it.
func (a *locksAhead) holdSave(h *heldSave) {
	h.sl.heldBack = true
	a.mu.Lock()
	prev := a.behind.save
	a.behind.save = h
	if prev != nil {
		a.behind.sending++
	}
	a.mu.Unlock()
	if prev != nil {
		a.send(prev)
	}
	time.AfterFunc(aheadHold, func() { a.sendHeld(func(held *heldSave) bool { return held == h }) })
}

// sendHeld sends the save held back, if which says it is the one.
func (a *locksAhead) sendHeld(which func(*heldSave) bool) {
	if a == nil {
		return
	}
	a.mu.Lock()
	h := a.behind.save
	if h == nil || !which(h) {
		a.mu.Unlock()
		return
	}
	a.behind.save = nil
	a.behind.sending++
	a.mu.Unlock()
	a.send(h)
}

func anySave(*heldSave) bool { return true }

// send stores h's status and releases its lock, then counts the send
// ended, keeping its error for the next round trip to report.
func (a *locksAhead) send(h *heldSave) {
	err := h.sl.release(func() (bool, error) { return h.sl.saveUnlock(context.WithoutCancel(h.sl.held.ctx), h.body) })
	if err != nil {
		h.sl.unlock() // unless the lock was lost, let it go all the same
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.behind.sending--
	if err != nil && a.behind.err == nil {
		a.behind.err = err
	}
	a.behind.sent.Broadcast()
}

// flush sends the save held back and waits for every send under way; it
// reports the error of one that was refused.
func (a *locksAhead) flush() error {
	if a == nil {
		return nil
	}
	a.sendHeld(anySave)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.waitForSends()
	return a.behind.err
}

// takeSave waits for the sends under way and hands over the save held
// back, or the error of one that was refused.
func (a *locksAhead) takeSave() (*heldSave, error) {
	if a == nil {
		return nil, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.waitForSends()
	h, err := a.behind.save, a.behind.err
	a.behind.save = nil
	if h != nil && err != nil { // sent on its own, so that its lock goes
		a.behind.sending++
		go a.send(h)
		a.waitForSends()
		return nil, err
	}
	return h, err
}

// waitForSends waits, with a.mu held, until no send is under way.
func (a *locksAhead) waitForSends() {
	for a.behind.sending > 0 {
		a.behind.sent.Wait()
	}
}

// sendHeldSaves is the hook on the ledger's client that sends the save a
// context holds back before any other round trip of that context.
type sendHeldSaves struct{}

func (sendHeldSaves) DialHook(next redis.DialHook) redis.DialHook { return next }

func (sendHeldSaves) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := locksAheadIn(ctx).flush(); err != nil {
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}

func (sendHeldSaves) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if err := locksAheadIn(ctx).flush(); err != nil {
			for _, cmd := range cmds {
				cmd.SetErr(err)
			}
			return err
		}
		return next(ctx, cmds)
	}
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
// nothing is recorded. The delivery's work is done: the record is written
// even if ctx was cancelled since.
func (l *Ledger) RecordDelivery(ctx context.Context, d DeliveryRecord, mark string, ttl time.Duration) error {
	held, err := locksAheadIn(ctx).takeSave()
	if err != nil {
		return err
	}
	ctx = withoutLocksAhead(context.WithoutCancel(ctx))
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
