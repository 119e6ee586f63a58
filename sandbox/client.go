// Package sandbox talks to the service where the agent runs (Rush's
// sessions API): it starts sessions, reads them back, and verifies the
// callbacks the service sends when a session ends.
package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
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
