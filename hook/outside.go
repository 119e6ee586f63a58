package hook

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"

	"github.com/hibiken/asynq"
	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/internal/durable"
	"github.com/pitcrew/pitcrew/internal/metrics"
	"github.com/pitcrew/pitcrew/queue"
)

// Source is an outside service's side of its route,
// POST /api/<Name>/hook (Datadog, Sentry): how its requests prove they
// are its own, how large they may be, and which of them ask for work.
type Source struct {
	Name  string // in the route, the task type and the metrics
	Title string // as people name it, in logs
	Auth  Auth
	// MaxBody bounds a request's body.
	MaxBody int64
	// Accept reads what a verified request asks for: ErrIgnored for one
	// that starts no work (acknowledged, not stored), ErrStale for one too
	// old to act on, another error for a body of the wrong shape (both
	// refused). id names it in logs.
	Accept func(header func(string) string, body []byte) (id string, err error)
}

// TaskType is the queue task that carries the source's stored requests.
func (s *Source) TaskType() string { return s.Name + ":alert" }

// ErrIgnored is a verified request the source sends that starts no work.
var ErrIgnored = errors.New("nothing to do for this request")

// ErrStale, wrapped, is a verified request whose signed times are outside
// the source's window. A proof that covers only the body holds whenever a
// captured body is sent again; the body's own times are what tell a
// replay, and it is refused (400) before anything is stored.
var ErrStale = errors.New("stale")

// Auth is how a source proves a request is its own: Header carries the
// secret itself, or, with HMAC, the hex HMAC-SHA256 of the raw body keyed
// with the secret.
type Auth struct {
	Header string
	HMAC   bool
}

// verify checks the request's proof in constant time; an empty secret
// proves nothing.
func (a Auth) verify(secret string, header func(string) string, body []byte) bool {
	got := header(a.Header)
	if secret == "" || got == "" {
		return false
	}
	if a.HMAC {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write(body)
		want := hex.EncodeToString(mac.Sum(nil))
		return hmac.Equal([]byte(strings.ToLower(got)), []byte(want))
	}
	// Compared as hashes, so the secret's length does not leak either.
	x, y := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare(x[:], y[:]) == 1
}

// Outside answers a source's route: the body bounded through the budget
// of unverified bytes, the proof checked before anything else happens,
// the shape checked, and the request stored (its task id the body's hash,
// so a repeat is acknowledged, not redone) before the 2xx.
type Outside struct {
	Source     *Source
	Secret     string
	Queue      *asynq.Client
	Metrics    *metrics.Metrics
	Log        zerolog.Logger
	Unverified *Budget
	// Replicated, when set, holds each 2xx until a replica has what was
	// stored (none when the primary has no replica).
	Replicated *durable.Waiter
}

func (h *Outside) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	outcome := "error"
	defer func() { h.Metrics.SourceRequests.WithLabelValues(h.Source.Name, outcome).Inc() }()
	body, done, refused := h.Unverified.readOrRefuse(w, r, h.Source.MaxBody)
	defer done()
	if refused != "" {
		outcome = refused
		return
	}
	if !h.Source.Auth.verify(h.Secret, r.Header.Get, body) {
		outcome = "rejected"
		h.Log.Warn().Str("source", h.Source.Name).Msgf("rejected a %s webhook: missing or wrong %s", h.Source.Title, h.Source.Auth.Header)
		http.Error(w, "invalid "+h.Source.Auth.Header, http.StatusUnauthorized)
		return
	}
	id, err := h.Source.Accept(r.Header.Get, body)
	if errors.Is(err, ErrIgnored) {
		outcome = "ignored"
		w.WriteHeader(http.StatusOK)
		return
	}
	switch {
	case errors.Is(err, ErrStale):
		outcome = "stale"
		h.Log.Warn().Err(err).Str("source", h.Source.Name).Str("id", id).Msgf("refused a stale %s webhook: sent again, or the clocks are apart", h.Source.Title)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	case err != nil:
		outcome = "rejected"
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	_, err = h.Queue.EnqueueContext(r.Context(), queue.AlertTask(h.Source.TaskType(), h.Source.Name, body))
	if err == nil || queue.IsDuplicate(err) {
		if werr := h.Replicated.Wait(r.Context(), queue.AlertKey(h.Source.Name, body)); werr != nil {
			err = werr
		}
	}
	log := h.Log.With().Str("source", h.Source.Name).Str("id", id).Logger()
	switch {
	case queue.IsDuplicate(err):
		outcome = "duplicate"
		w.WriteHeader(http.StatusOK)
	case err != nil:
		log.Error().Err(err).Msgf("could not store a %s webhook", h.Source.Title)
		http.Error(w, "could not store the request; retry", http.StatusServiceUnavailable)
	default:
		outcome = "queued"
		log.Info().Msgf("stored a %s webhook", h.Source.Title)
		w.WriteHeader(http.StatusAccepted)
	}
}
