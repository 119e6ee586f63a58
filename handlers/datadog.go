package handlers

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/hibiken/asynq"
	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/alerts"
)

// TaskDatadogAlert is a stored Datadog notification.
const TaskDatadogAlert = "datadog:alert"

// DatadogHook receives Datadog monitor webhooks on POST /api/datadog/hook.
// It checks the shared token before anything else, checks the body is an
// alert, and stores it durably before answering, so Datadog's retries on a
// 5xx lose nothing and a repeated delivery is acknowledged, not redone.
type DatadogHook struct {
	Token   string // DATADOG_WEBHOOK_TOKEN; empty refuses every request
	Queue   *asynq.Client
	Metrics *Metrics
	Logger  zerolog.Logger
}

func (h *DatadogHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	outcome := "error"
	defer func() { h.Metrics.Deliveries.WithLabelValues("datadog", outcome).Inc() }()
	if !h.validToken(r.Header.Get("X-Pitcrew-Token")) {
		outcome = "rejected"
		h.Logger.Warn().Msg("rejected a Datadog webhook: missing or wrong X-Pitcrew-Token")
		http.Error(w, "invalid token", http.StatusUnauthorized)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, alerts.MaxBody))
	if err != nil {
		outcome = "rejected"
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	a, err := alerts.Parse(body)
	if err != nil {
		outcome = "rejected"
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	sum := sha256.Sum256(body)
	_, err = h.Queue.EnqueueContext(r.Context(), asynq.NewTask(TaskDatadogAlert, body,
		asynq.TaskID("dd:"+hex.EncodeToString(sum[:16])), asynq.Queue(QueueGitHub), asynq.MaxRetry(maxRetry),
		asynq.Retention(24*time.Hour), asynq.Timeout(5*time.Minute)))
	switch {
	case isDuplicate(err):
		outcome = "duplicate"
		w.WriteHeader(http.StatusOK)
	case err != nil:
		h.Logger.Error().Err(err).Msg("could not store a Datadog alert")
		http.Error(w, "could not store the alert; retry", http.StatusServiceUnavailable)
	default:
		outcome = "queued"
		h.Logger.Info().Str("alert_id", a.ID).Str("transition", a.Transition).Msg("stored a Datadog alert")
		w.WriteHeader(http.StatusAccepted)
	}
}

// validToken compares in constant time (over hashes, so the length of the
// token does not leak either).
func (h *DatadogHook) validToken(got string) bool {
	if h.Token == "" || got == "" {
		return false
	}
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(h.Token))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

var errNoRepo = errors.New("no repository for this alert")
