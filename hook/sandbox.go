package hook

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/hibiken/asynq"
	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/internal/durable"
	"github.com/pitcrew/pitcrew/internal/metrics"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/sandbox"
)

// MaxCallbackBody bounds a sandbox callback body.
const MaxCallbackBody = 1 << 20

// startingWithin is how recently a run still queued must have been
// claimed for a callback of a session not recorded to be asked again.
const startingWithin = 2 * time.Minute

// SandboxCallbacks receives the sandbox's run.completed / run.failed callbacks on
// POST /api/rush/hook. A callback is only a hint: once verified and matched
// to a run, it queues a task that reads the session from the API.
type SandboxCallbacks struct {
	Verifier *sandbox.Verifier
	Ledger   *runs.Ledger
	Queue    *asynq.Client
	Metrics  *metrics.Metrics
	Logger   zerolog.Logger
	// Unverified bounds what bodies not yet verified may hold.
	Unverified *Budget
	// Replicated, when set, holds each 2xx until a replica has what was
	// stored (none when the primary has no replica).
	Replicated *durable.Waiter
}

func (h *SandboxCallbacks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	outcome := "error"
	defer func() { h.Metrics.Callbacks.WithLabelValues(outcome).Inc() }()
	body, done, refused := h.Unverified.readOrRefuse(w, r, MaxCallbackBody)
	defer done()
	if refused != "" {
		outcome = refused
		return
	}
	if err := h.Verifier.Verify(r.Header, body); err != nil {
		outcome = "rejected"
		h.Logger.Warn().Err(err).Msg("rejected a sandbox callback")
		http.Error(w, "invalid signature", http.StatusUnauthorized)
		return
	}
	cb, err := sandbox.ParseCallback(body)
	if errors.Is(err, sandbox.ErrUnknownEvent) {
		outcome = "ignored"
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if err != nil {
		outcome = "rejected"
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	log := h.Logger.With().Str("session_id", cb.SessionID).Str("event", cb.Event).Logger()
	run, err := h.Ledger.BySession(r.Context(), cb.SessionID)
	if errors.Is(err, runs.ErrNotFound) {
		// A session answers with its id before pitcrew records it: a run
		// still queued may be the one this callback is for. The sandbox
		// sends a callback answered 5xx again.
		if starting, ferr := h.Ledger.StartInFlight(r.Context(), startingWithin); ferr != nil || starting {
			outcome = "unknown_session_retry"
			log.Info().Msg("callback for a session pitcrew has not recorded while a run is starting; asked again")
			w.Header().Set("Retry-After", "5")
			http.Error(w, "a run is starting: send this callback again", http.StatusServiceUnavailable)
			return
		}
		outcome = "unknown_session"
		log.Info().Msg("callback for a session pitcrew did not start; ignored")
		w.WriteHeader(http.StatusOK)
		return
	}
	if err != nil {
		log.Error().Err(err).Msg("reading the ledger")
		http.Error(w, "try again later", http.StatusServiceUnavailable)
		return
	}
	// The task carries the run as read here: its worker need not read it again.
	snapshot, _ := json.Marshal(run.Snapshot())
	taskID := "cb:" + r.Header.Get("webhook-id")
	_, err = h.Queue.EnqueueContext(r.Context(), queue.RefreshTask(queue.Refresh{SessionID: cb.SessionID, Run: snapshot}, taskID))
	if err == nil || queue.IsDuplicate(err) {
		if werr := h.Replicated.Wait(r.Context(), queue.RefreshKey(taskID)); werr != nil {
			err = werr
		}
	}
	switch {
	case queue.IsDuplicate(err):
		outcome = "duplicate"
	case err != nil:
		log.Error().Err(err).Msg("could not queue the callback")
		http.Error(w, "try again later", http.StatusServiceUnavailable)
		return
	default:
		outcome = "queued"
		log.Info().Msg("queued a session refresh")
	}
	w.WriteHeader(http.StatusAccepted)
}
