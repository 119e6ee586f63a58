package app

import (
	"strings"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/queue"
)

func TestSweeperRedeliversWhatNeverGotAnOK(t *testing.T) {
	h := newHarness(t, true, func(o *Options) {
		o.Schedule = queue.Schedule{SweepEvery: 300 * time.Millisecond, ReconcileEvery: time.Hour}
	})
	// Two deliveries fail (pitcrew unreachable), one succeeds.
	h.gh.SetHook("http://127.0.0.1:1/api/github/hook", testWebhookSecret)
	missed := []string{testenv.DeliveryID(), testenv.DeliveryID()}
	for i, id := range missed {
		if code := h.gh.Deliver("issues", id, testenv.LabeledEvent(t, "flaky", "alice", 70+i, "test/missed_test.exs:"+string(rune('1'+i)), "")); code != 0 {
			t.Fatalf("delivery to a dead address answered %d", code)
		}
	}
	h.gh.SetHook(h.server.URL+"/api/github/hook", testWebhookSecret)
	if code := h.gh.Deliver("issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky", "alice", 72, "test/ok_test.exs:3", "")); code != 202 {
		t.Fatalf("answered %d", code)
	}
	h.eventually("the missed deliveries to be redelivered and handled", func() bool { return h.sandbox.SessionCount() == 3 })
	time.Sleep(time.Second) // more sweeps: each guid is asked for once
	redeliveries := 0
	for _, d := range h.gh.Deliveries() {
		if d.Redelivery {
			redeliveries++
		}
	}
	if redeliveries != 2 || h.sandbox.SessionCount() != 3 {
		t.Fatalf("%d redeliveries, %d sessions", redeliveries, h.sandbox.SessionCount())
	}
	if m := h.get("/metrics"); !strings.Contains(m, `pitcrew_sweeper_redeliveries_total{outcome="asked"} 2`) {
		t.Fatalf("redeliveries not counted in /metrics:\n%s", m)
	}
}

// A redelivery that fails too (pitcrew still refusing, during a failover
// say) is asked for again at a later sweep, up to five times per guid.
func TestSweeperAsksAgainWhenARedeliveryFailsToo(t *testing.T) {
	h := newHarness(t, true, func(o *Options) {
		o.Schedule = queue.Schedule{SweepEvery: 300 * time.Millisecond, ReconcileEvery: time.Hour}
	})
	redeliveriesOf := func(guid string) (n int) {
		for _, d := range h.gh.Deliveries() {
			if d.Redelivery && d.GUID == guid {
				n++
			}
		}
		return n
	}
	dead, live := "http://127.0.0.1:1/api/github/hook", h.server.URL+"/api/github/hook"
	h.gh.SetHook(dead, testWebhookSecret)
	first := testenv.DeliveryID()
	h.gh.Deliver("issues", first, testenv.LabeledEvent(t, "flaky", "alice", 80, "test/first_test.exs:1", ""))
	h.eventually("two failed redeliveries", func() bool { return redeliveriesOf(first) >= 2 })
	h.gh.SetHook(live, testWebhookSecret)
	h.eventually("the delivery handled at last", func() bool { return h.sandbox.SessionCount() == 1 })

	h.gh.SetHook(dead, testWebhookSecret)
	never := testenv.DeliveryID()
	h.gh.Deliver("issues", never, testenv.LabeledEvent(t, "flaky", "alice", 81, "test/never_test.exs:1", ""))
	time.Sleep(4 * time.Second) // a dozen sweeps
	if n := redeliveriesOf(never); n != 5 {
		t.Fatalf("%d redeliveries of a delivery that always fails, want 5", n)
	}
	if n := redeliveriesOf(first); n > 5 {
		t.Fatalf("%d redeliveries of the first", n)
	}
}
