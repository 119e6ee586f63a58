package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/go-github/v66/github"
	"github.com/hibiken/asynq"
	"github.com/palantir/go-githubapp/githubapp"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/runs"
)

// DeliveryWorker takes stored deliveries off the queue and hands each to
// the handler of its event. A delivery that was processed before (GitHub
// redelivered it after the intake's own dedup window) is skipped.
type DeliveryWorker struct {
	Redis    redis.UniversalClient
	Ledger   *runs.Ledger
	Handlers map[string]githubapp.EventHandler
}

// NewDeliveryWorker indexes handlers by the events they handle.
func NewDeliveryWorker(rdb redis.UniversalClient, ledger *runs.Ledger, handlers ...githubapp.EventHandler) *DeliveryWorker {
	w := &DeliveryWorker{Redis: rdb, Ledger: ledger, Handlers: map[string]githubapp.EventHandler{}}
	for _, h := range handlers {
		for _, e := range h.Handles() {
			w.Handlers[e] = h
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

// ProcessTask implements asynq.Handler for TaskGitHubDelivery.
func (w *DeliveryWorker) ProcessTask(ctx context.Context, t *asynq.Task) error {
	event, id, body, err := decodeDelivery(t.Payload())
	if err != nil {
		return permanent(err)
	}
	log := zerolog.Ctx(ctx).With().Str(githubapp.LogKeyEventType, event).Str(githubapp.LogKeyDeliveryID, id).Logger()
	ctx = log.WithContext(ctx)
	done, err := w.Redis.Exists(ctx, processedKey(id)).Result()
	if err != nil {
		return err
	}
	record := func(outcome string) {
		if w.Ledger != nil {
			_ = w.Ledger.RecordDelivery(context.WithoutCancel(ctx), runs.DeliveryRecord{ID: id, Event: event, Outcome: outcome, At: time.Now().UTC()})
		}
	}
	if done > 0 {
		log.Info().Msg("delivery was already processed; skipping")
		record("skipped: already processed")
		return nil
	}
	h, ok := w.Handlers[event]
	if !ok {
		return nil
	}
	start := time.Now()
	if err := h.Handle(ctx, event, id, body); err != nil {
		log.Error().Err(err).Msg("handling delivery failed")
		record("failed: " + prompts.PlainLine(err.Error(), 120))
		if gitHubWillNotChange(err) {
			return permanent(fmt.Errorf("%s %s: %w", event, id, err))
		}
		return fmt.Errorf("%s %s: %w", event, id, err)
	}
	log.Info().Dur("took", time.Since(start)).Msg("delivery handled")
	record("handled")
	return w.Redis.Set(ctx, processedKey(id), 1, processedTTL).Err()
}

// gitHubWillNotChange reports a GitHub answer that retrying cannot change:
// 401, 404, 422, or 403 that is not a rate limit (those are waited out).
func gitHubWillNotChange(err error) bool {
	var e *github.ErrorResponse
	if !errors.As(err, &e) || e.Response == nil {
		return false
	}
	switch e.Response.StatusCode {
	case http.StatusUnauthorized, http.StatusNotFound, http.StatusUnprocessableEntity:
		return true
	case http.StatusForbidden:
		_, limited := rateLimitWait(e.Response)
		return !limited
	}
	return false
}
