// Package sandbox talks to the service where the agent runs (Rush's
// sessions API): it starts sessions, reads them back, and verifies the
// callbacks the service sends when a session ends.
package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Config is how to reach the sandbox service.
type Config struct {
	BaseURL string // RUSH_API_URL
	Org     string // RUSH_ORG
	APIKey  string // RUSH_API_KEY
	Agent   string // RUSH_AGENT

	HTTPClient  *http.Client  // default: 30 s timeout
	MaxAttempts int           // per call, default 5
	BaseDelay   time.Duration // first retry delay, doubled each time; default 500 ms
}

// Client calls the sandbox API. Safe for concurrent use.
type Client struct{ cfg Config }

// StartRequest is the body of a session start.
type StartRequest struct {
	Agent       string     `json:"agent"`
	Input       string     `json:"input"`
	Resources   []Resource `json:"resources"`
	Connections []string   `json:"connections,omitempty"`
}

// Resource is something the session gets access to, such as a repository.
type Resource struct {
	URL string `json:"url"`
}

// Artifact is a file a session produced; URL downloads it with the API key.
type Artifact struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// Session is the sandbox's view of one agent run.
type Session struct {
	ID          string     `json:"id"`
	ExecutionID string     `json:"execution_id,omitempty"`
	Status      string     `json:"status,omitempty"` // running, completed, failed
	Result      string     `json:"result,omitempty"`
	SessionURL  string     `json:"session_url,omitempty"`
	Artifacts   []Artifact `json:"artifacts,omitempty"`
}

// Session statuses.
const (
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
)

// PermanentError is an answer that retrying will not change (a 4xx other
// than 408 and 429). Callers report it instead of retrying.
type PermanentError struct {
	Status int
	Detail string
}

func (e *PermanentError) Error() string {
	return fmt.Sprintf("sandbox API answered %d: %s", e.Status, e.Detail)
}

// IsPermanent reports whether err is a PermanentError.
func IsPermanent(err error) bool { return errors.As(err, new(*PermanentError)) }

var sessionID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// ValidSessionID reports whether id may be placed in an API path.
func ValidSessionID(id string) bool { return sessionID.MatchString(id) }

// NewClient checks cfg and fills its defaults.
func NewClient(cfg Config) (*Client, error) {
	if cfg.BaseURL == "" || cfg.Org == "" || cfg.APIKey == "" {
		return nil, errors.New("sandbox: RUSH_API_URL, RUSH_ORG and RUSH_API_KEY are required")
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.Agent == "" {
		cfg.Agent = "claude"
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 5
	}
	if cfg.BaseDelay <= 0 {
		cfg.BaseDelay = 500 * time.Millisecond
	}
	return &Client{cfg: cfg}, nil
}

// Start starts a session working on repoURL with prompt. The idempotency
// key is sent on every attempt, so retries after a lost answer return the
// session already made instead of making a second one.
func (c *Client) Start(ctx context.Context, idempotencyKey, prompt, repoURL string, connections []string) (Session, error) {
	body, err := json.Marshal(StartRequest{Agent: c.cfg.Agent, Input: prompt, Resources: []Resource{{URL: repoURL}}, Connections: connections})
	if err != nil {
		return Session{}, err
	}
	var s Session
	err = c.do(ctx, http.MethodPost, c.cfg.BaseURL+"/o/"+c.cfg.Org+"/sessions", body, idempotencyKey, &s)
	if err == nil && !ValidSessionID(s.ID) {
		err = fmt.Errorf("sandbox: start answered an invalid session id")
	}
	return s, err
}

// MessageRequest is the body of a follow-up message.
type MessageRequest struct {
	Input string `json:"input"`
}

// Message sends a follow-up message to a session that ended: the session
// runs again and ends with another callback. The idempotency key is sent
// on every attempt, so a retry after a lost answer sends the message once.
// (The path is pitcrew's assumption of the API, kept here alone.)
func (c *Client) Message(ctx context.Context, sessionID, idempotencyKey, message string) (Session, error) {
	if !ValidSessionID(sessionID) {
		return Session{}, &PermanentError{Status: 400, Detail: "invalid session id"}
	}
	body, err := json.Marshal(MessageRequest{Input: message})
	if err != nil {
		return Session{}, err
	}
	var s Session
	err = c.do(ctx, http.MethodPost, c.cfg.BaseURL+"/o/"+c.cfg.Org+"/sessions/"+sessionID+"/messages", body, idempotencyKey, &s)
	return s, err
}

// Get reads a session. Callbacks are only hints; this is the truth.
func (c *Client) Get(ctx context.Context, id string) (Session, error) {
	if !ValidSessionID(id) {
		return Session{}, &PermanentError{Status: 400, Detail: "invalid session id"}
	}
	var s Session
	err := c.do(ctx, http.MethodGet, c.cfg.BaseURL+"/o/"+c.cfg.Org+"/sessions/"+id, nil, "", &s)
	return s, err
}

func (c *Client) do(ctx context.Context, method, url string, body []byte, idempotencyKey string, out any) error {
	var last error
	for attempt := 0; attempt < c.cfg.MaxAttempts; attempt++ {
		if attempt > 0 {
			if err := sleep(ctx, c.delay(attempt, last)); err != nil {
				return err
			}
		}
		req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
		req.Header.Set("Accept", "application/json")
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if idempotencyKey != "" {
			req.Header.Set("Idempotency-Key", idempotencyKey)
		}
		resp, err := c.cfg.HTTPClient.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			last = fmt.Errorf("sandbox: %s %s: %w", method, req.URL.Path, errors.Unwrap(err))
			continue
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		resp.Body.Close()
		switch {
		case err != nil:
			last = fmt.Errorf("sandbox: reading answer: %w", err)
		case resp.StatusCode >= 200 && resp.StatusCode < 300:
			if err := json.Unmarshal(data, out); err != nil {
				return fmt.Errorf("sandbox: %s %s: undecodable answer: %w", method, req.URL.Path, err)
			}
			return nil
		case resp.StatusCode == 429 || resp.StatusCode == 408 || resp.StatusCode >= 500:
			last = &retryable{status: resp.StatusCode, after: retryAfter(resp.Header)}
		default:
			// The answer may quote the request; keep the key out of errors.
			return &PermanentError{Status: resp.StatusCode, Detail: strings.ReplaceAll(detail(data), c.cfg.APIKey, "[redacted]")}
		}
	}
	return fmt.Errorf("sandbox: %s gave up after %d attempts: %w", method, c.cfg.MaxAttempts, last)
}

type retryable struct {
	status int
	after  time.Duration
}

func (r *retryable) Error() string { return "answered " + strconv.Itoa(r.status) }

// delay is exponential backoff with full jitter, or the server's
// Retry-After when it gave one.
func (c *Client) delay(attempt int, last error) time.Duration {
	var r *retryable
	if errors.As(last, &r) && r.after > 0 {
		return min(r.after, 2*time.Minute)
	}
	d := c.cfg.BaseDelay << (attempt - 1)
	return d/2 + rand.N(d/2+1)
}

func retryAfter(h http.Header) time.Duration {
	if s, err := strconv.Atoi(h.Get("Retry-After")); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	return 0
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// detail extracts a short message from an error answer, never echoing
// more than a line of it.
func detail(data []byte) string {
	var e struct {
		Error   any    `json:"error"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(data, &e)
	msg := e.Message
	if msg == "" {
		if s, ok := e.Error.(string); ok {
			msg = s
		}
	}
	if msg == "" {
		msg = "no detail given"
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > 200 {
		msg = msg[:200]
	}
	return msg
}

// MaxArtifact bounds an artifact download.
const MaxArtifact = 8 << 20

// Download fetches an artifact listed by a session read. The API key goes
// only to the sandbox API's own origin (scheme, host and port), and only
// what that origin serves is returned: an artifact URL elsewhere, or a
// redirect elsewhere, is refused rather than handed the key or trusted.
func (c *Client) Download(ctx context.Context, artifactURL string) ([]byte, error) {
	base, err := url.Parse(c.cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(artifactURL)
	if err != nil || !sameOrigin(u, base) {
		return nil, &PermanentError{Status: 400, Detail: "artifact URL is not on the sandbox API's origin"}
	}
	var out []byte
	for attempt := 0; attempt < c.cfg.MaxAttempts; attempt++ {
		if attempt > 0 {
			if err := sleep(ctx, c.delay(attempt, err)); err != nil {
				return nil, err
			}
		}
		out, err = c.download(ctx, u.String(), base)
		if err == nil || IsPermanent(err) {
			return out, err
		}
	}
	return nil, fmt.Errorf("sandbox: artifact download gave up after %d attempts: %w", c.cfg.MaxAttempts, err)
}

func (c *Client) download(ctx context.Context, u string, base *url.URL) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	// net/http keeps the Authorization header on a redirect to another port
	// of the same host, and follows redirects to other hosts.
	hc := *c.cfg.HTTPClient
	hc.CheckRedirect = func(next *http.Request, via []*http.Request) error {
		if !sameOrigin(next.URL, base) {
			return errOffOrigin
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	resp, err := hc.Do(req)
	if errors.Is(err, errOffOrigin) {
		return nil, &PermanentError{Status: 400, Detail: "artifact download redirected off the sandbox API's origin"}
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox: downloading artifact: %w", errors.Unwrap(err))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
		data, err := io.ReadAll(io.LimitReader(resp.Body, MaxArtifact+1))
		if err == nil && len(data) > MaxArtifact {
			data = data[:MaxArtifact]
		}
		return data, err
	case resp.StatusCode == 429 || resp.StatusCode >= 500:
		return nil, &retryable{status: resp.StatusCode, after: retryAfter(resp.Header)}
	default:
		return nil, &PermanentError{Status: resp.StatusCode, Detail: "artifact download refused"}
	}
}

var errOffOrigin = errors.New("redirect off the sandbox API's origin")

// sameOrigin compares scheme, host and port, a missing port being the
// scheme's default.
func sameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		return map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return a.Hostname() != "" && strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}
