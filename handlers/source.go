package handlers

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/pitcrew/pitcrew/queue"

	"github.com/pitcrew/pitcrew/internal/github"

	"github.com/hibiken/asynq"
	"github.com/rs/zerolog"
)

// Source is an outside service that asks for work on
// POST /api/<Name>/hook (Datadog, Sentry). A request is verified with the
// source's secret, bounded, checked for shape and stored durably before it
// is answered, as GitHub's are; Handle then works on each stored body from
// the queue. A source is data: the hook, the task and the environment keys
// are the same code for all of them.
type Source struct {
	Name  string // in the route, the task type and the metrics
	Title string // as people name it, in logs
	// SecretEnv names the variable holding the secret that verifies its
	// requests; unset, the hook refuses every request.
	SecretEnv string
	// ReposEnv names the variable mapping the source's own names (a
	// service, a project) to repositories: "name=owner/repo,...".
	ReposEnv string
	Auth     Auth
	MaxBody  int64
	// Accept reads what a verified request asks for: errIgnored for one
	// that starts no work (acknowledged, not stored), another error for a
	// body of the wrong shape (refused). id names it in logs.
	Accept func(header func(string) string, body []byte) (id string, err error)
	// Handle works on a stored body.
	Handle func(ctx context.Context, b *Base, s SourceSettings, body []byte) error
}

// Auth is how a source proves a request is its own: Header carries the
// secret itself, or, with HMAC, the hex HMAC-SHA256 of the raw body keyed
// with the secret.
type Auth struct {
	Header string
	HMAC   bool
}

// SourceSettings is a source's configuration from the environment.
type SourceSettings struct {
	Secret string
	Repos  map[string]string // the source's names to owner/name
}

// errIgnored is a verified request the source sends that starts no work.
var errIgnored = errors.New("nothing to do for this request")

// TaskType is the queue task that carries the source's stored requests.
func (s *Source) TaskType() string { return s.Name + ":alert" }

// EnvKeys are the variables the source reads.
func (s *Source) EnvKeys() []string { return []string{s.SecretEnv, s.ReposEnv} }

// settings reads the source's variables from env.
func (s *Source) settings(env map[string]string) (SourceSettings, error) {
	set := SourceSettings{Secret: env[s.SecretEnv], Repos: map[string]string{}}
	for _, pair := range strings.Split(env[s.ReposEnv], ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		name, repo, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if _, err := github.ParseRepo(repo); !ok || name == "" || err != nil {
			return SourceSettings{}, fmt.Errorf("%s: %q is not name=owner/repo", s.ReposEnv, pair)
		}
		set.Repos[name] = repo
	}
	return set, nil
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

// sourceHook is a source's route.
type sourceHook struct {
	source     *Source
	secret     string
	queue      *asynq.Client
	metrics    *Metrics
	log        zerolog.Logger
	unverified *byteBudget
}

func (h *sourceHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	outcome := "error"
	defer func() { h.metrics.SourceRequests.WithLabelValues(h.source.Name, outcome).Inc() }()
	body, done, err := h.unverified.readAll(r, h.source.MaxBody)
	defer done()
	if errors.Is(err, errIntakeBusy) {
		outcome = "busy"
		refuseBusy(w)
		return
	}
	if err != nil {
		outcome = "rejected"
		http.Error(w, "body too large or unreadable", http.StatusRequestEntityTooLarge)
		return
	}
	if !h.source.Auth.verify(h.secret, r.Header.Get, body) {
		outcome = "rejected"
		h.log.Warn().Str("source", h.source.Name).Msgf("rejected a %s webhook: missing or wrong %s", h.source.Title, h.source.Auth.Header)
		http.Error(w, "invalid "+h.source.Auth.Header, http.StatusUnauthorized)
		return
	}
	id, err := h.source.Accept(r.Header.Get, body)
	if errors.Is(err, errIgnored) {
		outcome = "ignored"
		w.WriteHeader(http.StatusOK)
		return
	}
	if err != nil {
		outcome = "rejected"
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	sum := sha256.Sum256(body)
	_, err = h.queue.EnqueueContext(r.Context(), asynq.NewTask(h.source.TaskType(), body,
		asynq.TaskID(h.source.Name+":"+hex.EncodeToString(sum[:16])), asynq.Queue(queue.QueueGitHub), asynq.MaxRetry(queue.MaxRetry),
		asynq.Retention(24*time.Hour), asynq.Timeout(5*time.Minute)))
	log := h.log.With().Str("source", h.source.Name).Str("id", id).Logger()
	switch {
	case queue.IsDuplicate(err):
		outcome = "duplicate"
		w.WriteHeader(http.StatusOK)
	case err != nil:
		log.Error().Err(err).Msgf("could not store a %s webhook", h.source.Title)
		http.Error(w, "could not store the request; retry", http.StatusServiceUnavailable)
	default:
		outcome = "queued"
		log.Info().Msgf("stored a %s webhook", h.source.Title)
		w.WriteHeader(http.StatusAccepted)
	}
}

// sourceTask works on a source's stored requests.
type sourceTask struct {
	Base
	source   *Source
	settings SourceSettings
}

// ProcessTask implements asynq.Handler for the source's TaskType.
func (h *sourceTask) ProcessTask(ctx context.Context, t *asynq.Task) error {
	return h.source.Handle(ctx, &h.Base, h.settings, t.Payload())
}
