package sandbox

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Callback events.
const (
	EventRunCompleted = "run.completed"
	EventRunFailed    = "run.failed"
)

// Callback is the body the sandbox posts when a session ends. It is only a
// hint to go and read the session.
type Callback struct {
	Event       string `json:"event"`
	SessionID   string `json:"session_id"`
	ExecutionID string `json:"execution_id,omitempty"`
	SessionURL  string `json:"session_url,omitempty"`
	Result      string `json:"result,omitempty"`
}

// ErrUnknownEvent is a well-formed callback for an event pitcrew does not
// act on; it is acknowledged, not refused, so the sender stops retrying.
var ErrUnknownEvent = errors.New("callback has an event pitcrew does not handle:")

// ParseCallback decodes and checks a callback body.
func ParseCallback(body []byte) (Callback, error) {
	var cb Callback
	if err := json.Unmarshal(body, &cb); err != nil {
		return Callback{}, fmt.Errorf("callback is not valid JSON: %w", err)
	}
	if cb.Event != EventRunCompleted && cb.Event != EventRunFailed {
		return Callback{}, fmt.Errorf("%w %q", ErrUnknownEvent, clip(cb.Event))
	}
	if !ValidSessionID(cb.SessionID) {
		return Callback{}, errors.New("callback has an invalid session_id")
	}
	return cb, nil
}

// Verifier checks Standard Webhooks signatures: webhook-signature carries
// "v1,<base64 HMAC-SHA256 of id.timestamp.body>" (several, space-separated,
// during a secret rotation).
type Verifier struct {
	key       []byte
	Tolerance time.Duration // accepted clock difference, default 5 minutes
	Now       func() time.Time
}

// ErrSignature is returned for a callback that fails verification.
var ErrSignature = errors.New("callback signature is invalid")

// NewVerifier takes the secret as the sandbox shows it: "whsec_<base64>",
// or the raw secret.
func NewVerifier(secret string) (*Verifier, error) {
	if secret == "" {
		return nil, errors.New("sandbox: RUSH_WEBHOOK_SECRET is required")
	}
	key := []byte(secret)
	if rest, ok := strings.CutPrefix(secret, "whsec_"); ok {
		k, err := base64.StdEncoding.DecodeString(rest)
		if err != nil {
			return nil, errors.New("sandbox: RUSH_WEBHOOK_SECRET starts with whsec_ but is not base64")
		}
		key = k
	}
	return &Verifier{key: key, Tolerance: 5 * time.Minute, Now: time.Now}, nil
}

// Sign returns the webhook-signature value for a message; used by tests
// and the load generator.
func (v *Verifier) Sign(id string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, v.key)
	fmt.Fprintf(m, "%s.%d.", id, ts)
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// Verify checks the headers of a callback against its body.
func (v *Verifier) Verify(h http.Header, body []byte) error {
	id, tsText, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || tsText == "" || sigs == "" {
		return fmt.Errorf("%w: missing webhook-id, webhook-timestamp or webhook-signature", ErrSignature)
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: bad timestamp", ErrSignature)
	}
	if d := v.Now().Sub(time.Unix(ts, 0)); d > v.Tolerance || d < -v.Tolerance {
		return fmt.Errorf("%w: timestamp outside the %s window", ErrSignature, v.Tolerance)
	}
	want := v.Sign(id, ts, body)
	for _, s := range strings.Fields(sigs) {
		if hmac.Equal([]byte(s), []byte(want)) {
			return nil
		}
	}
	return ErrSignature
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
