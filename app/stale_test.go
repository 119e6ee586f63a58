package app

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/sandbox"
)

// age makes pitcrew's keys in Redis what they would be d later: a key
// whose time to live is shorter is gone, the others have d less. asynq's
// own keys are left alone: the worker runs on them.
func (h *harness) age(d time.Duration) {
	h.t.Helper()
	ctx := h.t.Context()
	iter := h.redis.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		key := iter.Val()
		if strings.HasPrefix(key, "asynq:") {
			continue
		}
		switch ttl := h.redis.PTTL(ctx, key).Val(); {
		case ttl < 0: // no expiry (or gone meanwhile)
		case ttl <= d:
			h.redis.Del(ctx, key)
		default:
			h.redis.PExpire(ctx, key, ttl-d)
		}
	}
	if err := iter.Err(); err != nil {
		h.t.Fatal(err)
	}
}

// GitHub signs only the body: a captured delivery sent again under a new
// id must not start a second run of a failed one (which holds no
// cooldown), at once or after GitHub's own 3 days of redeliveries, as long
// as the ledger keeps its run. A retry of the first delivery's own task is
// no replay.
func TestABodyReplayedUnderANewDeliveryIDIsDropped(t *testing.T) {
	for _, later := range []time.Duration{0, 29 * 24 * time.Hour} {
		t.Run(later.String(), func(t *testing.T) {
			h := newHarness(t, true)
			body := testenv.LabeledEvent(t, "flaky", "alice", 21, flakyTest, "")
			first := testenv.DeliveryID()
			h.deliver("issues", first, body)
			h.eventually("the run to start", h.commentContains(21, "the agent is working on it"))
			h.finish("ses_1", sandbox.StatusFailed, "The sandbox ran out of memory.")
			h.eventually("the failure", h.commentContains(21, "failed: The sandbox ran out of memory"))
			h.eventually("the delivery marked processed", func() bool {
				return h.redis.Exists(t.Context(), queue.ProcessedKey(first)).Val() == 1
			})
			h.age(later)
			if code := h.deliver("issues", testenv.DeliveryID(), body); code != 202 {
				t.Fatalf("the replay answered %d", code)
			}
			h.eventually("the replay dropped", func() bool {
				return strings.Contains(h.get("/metrics"), `pitcrew_deliveries_total{event="issues",outcome="replay"} 1`)
			})
			if n := h.sandbox.SessionCount(); n != 1 {
				t.Fatalf("the replay started a run: %d sessions", n)
			}
			if later > 0 {
				return
			}
			w := NewDeliveryWorker(h.redis, nil)
			if done, firstID, _, err := w.seen(t.Context(), "issues", first, body); err != nil || firstID != first || !done {
				t.Fatalf("the first delivery seen as done=%v first=%q err=%v", done, firstID, err)
			}
		})
	}
}

// The sandbox signs its callback's timestamp with its body (Standard
// Webhooks): a captured callback sent again over 5 minutes on is refused
// before anything is read or stored, whatever its webhook-id.
func TestASandboxCallbackSignedOverFiveMinutesAgoIsRefused(t *testing.T) {
	h := newHarness(t, false)
	v, err := sandbox.NewVerifier(testRushSecret)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"event":"run.completed","session_id":"ses_1"}`)
	post := func(id string, at time.Time) int {
		return h.postTo("/api/rush/hook", map[string]string{"Content-Type": "application/json", "webhook-id": id,
			"webhook-timestamp": strconv.FormatInt(at.Unix(), 10), "webhook-signature": v.Sign(id, at.Unix(), body)}, bytes.NewReader(body))
	}
	for _, at := range []time.Time{time.Now().Add(-6 * time.Minute), time.Now().Add(6 * time.Minute), time.Now().Add(-365 * 24 * time.Hour)} {
		if code := post("msg_"+strconv.FormatInt(at.UnixNano(), 10), at); code != 401 {
			t.Errorf("a callback signed at %s answered %d, want 401", at.Format(time.RFC3339), code)
		}
	}
	if !strings.Contains(h.get("/metrics"), `pitcrew_sandbox_callbacks_total{outcome="rejected"} 3`) || h.storedTasks() != 0 {
		t.Fatal("a stale callback was not refused before anything was stored")
	}
	if code := post("msg_now", time.Now()); code != 200 { // signed now: verified, for a session pitcrew did not start
		t.Fatalf("a callback signed now answered %d", code)
	}
}
