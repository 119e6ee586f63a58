package app

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
	"github.com/palantir/go-githubapp/githubapp"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/handlers"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/metrics"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
)

// DeliveryWorker takes stored deliveries off the queue and hands each to
// the handler of its event. A delivery that was processed before (GitHub
// redelivered it after the intake's own dedup window) is skipped, and so is
// a body already accepted under another delivery id (a replay).
type DeliveryWorker struct {
	Redis    redis.UniversalClient
	Ledger   *runs.Ledger
	Metrics  *metrics.Metrics
	Handlers map[string][]handlers.EventHandler // each event's, in order
	// CachedReads names the cached values a delivery's handlers read
	// first (handlers.CachedReads), read with the delivery's own checks.
	CachedReads func(body []byte) []string
}

// NewDeliveryWorker indexes handlers by the events they handle.
func NewDeliveryWorker(rdb redis.UniversalClient, ledger *runs.Ledger, list ...handlers.EventHandler) *DeliveryWorker {
	w := &DeliveryWorker{Redis: rdb, Ledger: ledger, Handlers: map[string][]handlers.EventHandler{}}
	for _, h := range list {
		for _, e := range h.Handles() {
			w.Handlers[e] = append(w.Handlers[e], h)
		}
	}
	return w
}

// Events lists the events some handler handles.
func (w *DeliveryWorker) Events() []string {
	var out []string
	for e := range w.Handlers {
		out = append(out, e)
	}
	return out
}

// ProcessTask implements asynq.Handler for TaskGitHubDelivery and
// TaskGitHubDeliveryJSON.
func (w *DeliveryWorker) ProcessTask(ctx context.Context, t *asynq.Task) error {
	event, id, body, err := queue.DecodeDelivery(t.Payload())
	if err != nil {
		return queue.Permanent(err)
	}
	log := zerolog.Ctx(ctx).With().Str(githubapp.LogKeyEventType, event).Str(githubapp.LogKeyDeliveryID, id).Logger()
	ctx = log.WithContext(ctx)
	done, firstID, withCached, err := w.seen(ctx, event, id, body)
	if err != nil {
		return err
	}
	ctx = withCached(ctx)
	// The handlers' last status save goes with the delivery's record.
	runs.HoldStatusSaves(ctx)
	record := func(outcome string) {
		if w.Ledger != nil {
			_ = w.Ledger.RecordDelivery(ctx, runs.DeliveryRecord{ID: id, Event: event, Outcome: outcome, At: time.Now().UTC()}, "", 0)
		}
	}
	switch {
	case done:
		log.Info().Msg("delivery was already processed; skipping")
		record("skipped: already processed")
		return nil
	case firstID != id:
		log.Warn().Str("first_delivery_id", firstID).Msg("dropping a replay: this body was already accepted under another delivery id")
		record("skipped: replay of " + publish.Line(firstID, 100))
		if w.Metrics != nil {
			w.Metrics.Deliveries.WithLabelValues(event, "replay").Inc()
		}
		return nil
	}
	start := time.Now()
	// Handlers of one event act on different actions of it and are
	// idempotent, so a retry after one failed may run them all again.
	if err := w.handle(ctx, event, id, body); err != nil {
		log.Error().Err(err).Msg("handling delivery failed")
		record("failed: " + publish.Line(err.Error(), 120))
		if github.WillNotChange(err) {
			return queue.Permanent(fmt.Errorf("%s %s: %w", event, id, err))
		}
		return fmt.Errorf("%s %s: %w", event, id, err)
	}
	log.Info().Dur("took", time.Since(start)).Msg("delivery handled")
	if w.Ledger == nil {
		return w.Redis.Set(ctx, queue.ProcessedKey(id), 1, queue.ProcessedTTL).Err()
	}
	// The status page's record and the mark that matters, in one round
	// trip with the last status save.
	return w.Ledger.RecordDelivery(ctx, runs.DeliveryRecord{ID: id, Event: event, Outcome: "handled", At: time.Now().UTC()},
		queue.ProcessedKey(id), queue.ProcessedTTL)
}

func (w *DeliveryWorker) handle(ctx context.Context, event, id string, body []byte) error {
	for _, h := range w.Handlers[event] {
		if err := h.Handle(ctx, event, id, body); err != nil {
			return err
		}
	}
	return nil
}

// seen reports whether delivery id was processed already, and the id
// under which its body was first accepted. GitHub signs only the body and
// redelivers under the same id, so a body seen under another id is a
// captured delivery sent again. An id is remembered as long as GitHub may
// redeliver it (queue.ProcessedTTL), a body as long as the ledger keeps
// the runs it may have started (queue.BodyTTL). The same round trip reads the cached values
// the handlers read first (CachedReads): withCached gives them to a context.
func (w *DeliveryWorker) seen(ctx context.Context, event, id string, body []byte) (done bool, firstID string, withCached func(context.Context) context.Context, err error) {
	digest := sha256.Sum256(body)
	var exists *redis.IntCmd
	var first *redis.StatusCmd
	withCached = func(ctx context.Context) context.Context { return ctx }
	_, _ = w.Redis.Pipelined(ctx, func(p redis.Pipeliner) error {
		exists = p.Exists(ctx, queue.ProcessedKey(id))
		first = p.SetArgs(ctx, queue.BodyKey(event, digest[:]), id, redis.SetArgs{Mode: "NX", Get: true, TTL: queue.BodyTTL})
		if w.Ledger != nil && w.CachedReads != nil {
			withCached = w.Ledger.PrefetchCached(ctx, p, w.CachedReads(body)...)
		}
		return nil
	})
	// Only the delivery's own checks decide; a cached read that failed is
	// made again by whoever needs it.
	for _, cmd := range []redis.Cmder{exists, first} {
		if err := cmd.Err(); err != nil && !errors.Is(err, redis.Nil) {
			return false, "", nil, err
		}
	}
	firstID = first.Val()
	if firstID == "" {
		firstID = id
	}
	return exists.Val() > 0, firstID, withCached, nil
}
