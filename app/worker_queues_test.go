package app

import (
	"context"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/pitcrew/pitcrew/queue"
)

// Deliveries that take every delivery worker do not hold up an outcome:
// each queue has workers of its own.
func TestABusyIntakeDoesNotHoldUpOutcomes(t *testing.T) {
	h := newHarness(t, false, func(o *Options) { o.Concurrency = 1 })
	busy, outcome := make(chan struct{}), make(chan struct{})
	stop := make(chan struct{})
	defer close(stop)
	h.app.mux.HandleFunc("test:busy", func(ctx context.Context, _ *asynq.Task) error {
		busy <- struct{}{}
		<-stop
		return nil
	})
	h.app.mux.HandleFunc("test:outcome", func(ctx context.Context, _ *asynq.Task) error {
		close(outcome)
		return nil
	})
	h.startWorker(h.app)
	if _, err := h.app.queue.Enqueue(asynq.NewTask("test:busy", nil, asynq.Queue(queue.QueueGitHub))); err != nil {
		t.Fatal(err)
	}
	<-busy // the one delivery worker is taken
	if _, err := h.app.queue.Enqueue(asynq.NewTask("test:outcome", nil, asynq.Queue(queue.QueueOutcome))); err != nil {
		t.Fatal(err)
	}
	select {
	case <-outcome:
	case <-time.After(10 * time.Second):
		t.Fatal("the outcome waited for a delivery worker")
	}
}
