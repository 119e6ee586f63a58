// Package alerts reads the alerts outside services send: Datadog monitor
// webhooks (the payload template the docs give users, whose field names
// are pitcrew's contract, and Datadog's default body) and Sentry issue
// alerts (sentry.go). It is its own package because the payloads are
// hostile input (alert messages can carry text from production requests)
// and everything here is pure and fuzzed.
package alerts

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Transitions Datadog sends in $ALERT_TRANSITION.
const (
	Triggered   = "Triggered"
	ReTriggered = "Re-Triggered"
	Renotify    = "Renotify"
	Recovered   = "Recovered"
	NoData      = "No Data"
	ReNoData    = "Re-No Data"
	Warn        = "Warn"
	ReWarn      = "Re-Warn"
)

// Limits on what is kept of a payload.
const (
	MaxBody    = 1 << 20 // bytes accepted on the endpoint
	maxField   = 300
	maxMessage = 4000
	maxTags    = 50
)

// Alert is one monitor notification, validated and trimmed.
type Alert struct {
	ID         string   `json:"alert_id"`        // the monitor's alert id ($ALERT_ID)
	CycleKey   string   `json:"alert_cycle_key"` // one incident of the monitor; empty in the default body
	Transition string   `json:"transition"`
	Title      string   `json:"title"`
	Message    string   `json:"message"`
	Tags       []string `json:"tags"`
	Link       string   `json:"link"`
	Date       string   `json:"date"` // RFC 3339, from the payload's epoch milliseconds; empty when those were not plausible
	Priority   string   `json:"priority"`
	EventType  string   `json:"event_type"`
	Scope      string   `json:"scope"`
	OrgID      string   `json:"org_id"`
	// DefaultBody is true when Datadog's default payload was sent: no alert
	// id or cycle key, so incidents are told apart by title alone.
	DefaultBody bool `json:"default_body,omitempty"`
}

// ErrNotAlert is a body that is JSON but neither payload shape.
var ErrNotAlert = errors.New("not a Datadog monitor payload: need alert_id and transition (pitcrew's template) or id and title (Datadog's default)")

// Parse reads a webhook body in either shape.
func Parse(body []byte) (Alert, error) {
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		return Alert{}, fmt.Errorf("payload is not a JSON object: %w", err)
	}
	str := func(k string, max int) string { return Clean(asString(raw[k]), max) }
	a := Alert{
		ID: str("alert_id", 64), CycleKey: str("alert_cycle_key", 128), Transition: str("transition", 32),
		Title: str("title", maxField), Message: str("message", maxMessage), Link: str("link", maxField),
		Date: epochMillis(raw["date"]), Priority: str("priority", 16), EventType: str("event_type", 64),
		Scope: str("scope", maxField), OrgID: str("org_id", 64),
	}
	a.Tags = splitTags(asString(raw["tags"]))
	if a.ID == "" && a.Transition == "" {
		// Datadog's default body: id, title, body, event_type, date, last_updated, org.
		a.DefaultBody = true
		a.ID, a.Message = str("id", 64), str("body", maxMessage)
		a.Transition = transitionFromTitle(a.Title)
		if org, ok := raw["org"].(map[string]any); ok {
			a.OrgID = Clean(asString(org["id"]), 64)
		}
		if a.ID == "" || a.Title == "" {
			return Alert{}, ErrNotAlert
		}
	}
	if a.ID == "" || a.Transition == "" {
		return Alert{}, ErrNotAlert
	}
	if !strings.HasPrefix(a.Link, "https://") {
		a.Link = ""
	}
	return a, nil
}

// Plausible alert dates: a payload claiming a time outside them is wrong
// or hostile, and its date is left out.
var (
	earliestDate = time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
	latestDate   = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
)

// epochMillis reads Datadog's $DATE, epoch milliseconds given as a JSON
// number or a string of digits, and returns it as RFC 3339; "" for
// anything else or a time outside the plausible range.
func epochMillis(v any) string {
	var ms int64
	switch x := v.(type) {
	case float64:
		if x != math.Trunc(x) || x < 0 || x > 1<<53 {
			return ""
		}
		ms = int64(x)
	case string:
		if x == "" || len(x) > 16 || strings.Trim(x, "0123456789") != "" {
			return ""
		}
		ms, _ = strconv.ParseInt(x, 10, 64)
	default:
		return ""
	}
	t := time.UnixMilli(ms).UTC()
	if t.Before(earliestDate) || !t.Before(latestDate) {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}

// FiredAt is the alert's date; zero when the payload had none that was
// plausible.
func (a Alert) FiredAt() time.Time {
	t, err := time.Parse(time.RFC3339Nano, a.Date)
	if err != nil || t.Before(earliestDate) || !t.Before(latestDate) {
		return time.Time{}
	}
	return t
}

// IncidentKey identifies the incident an alert belongs to: the monitor's
// alert id and cycle key; for the default body, the title without its
// transition prefix.
func (a Alert) IncidentKey() string {
	if a.DefaultBody {
		sum := sha256.Sum256([]byte(strings.TrimSpace(stripTransition(a.Title))))
		return "title-" + hex.EncodeToString(sum[:8])
	}
	cycle := a.CycleKey
	if cycle == "" {
		cycle = "nocycle"
	}
	return safeKey(a.ID) + ":" + safeKey(cycle)
}

// Tag returns the value of the first tag named name ("service" for
// "service:hexpm").
func (a Alert) Tag(name string) string {
	for _, t := range a.Tags {
		if k, v, ok := strings.Cut(t, ":"); ok && k == name {
			return v
		}
	}
	return ""
}

// HasTag reports whether the alert carries tag exactly.
func (a Alert) HasTag(tag string) bool {
	for _, t := range a.Tags {
		if t == tag {
			return true
		}
	}
	return false
}

// Clean makes outside text safe to store and to fence: no control or
// invisible characters (newlines and tabs kept), valid UTF-8, at most max
// runes.
func Clean(s string, max int) string {
	s = strings.ToValidUTF8(s, "")
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n >= max {
			break
		}
		if r == '\n' || r == '\t' || (!unicode.IsControl(r) && !unicode.Is(unicode.Cf, r) && r != '\u2028' && r != '\u2029') {
			b.WriteRune(r)
			n++
		}
	}
	return strings.TrimSpace(b.String())
}

func asString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return fmt.Sprintf("%.0f", x)
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func splitTags(s string) []string {
	var out []string
	for _, t := range strings.Split(s, ",") {
		if t = Clean(t, 200); t != "" && len(out) < maxTags {
			out = append(out, t)
		}
	}
	return out
}

func safeKey(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.') {
			return r
		}
		return '_'
	}, s)
}

// transitionFromTitle reads the "[Triggered] ..." prefix Datadog puts on
// default-body titles.
func transitionFromTitle(title string) string {
	for _, t := range []string{ReTriggered, Triggered, Renotify, Recovered, ReNoData, NoData, ReWarn, Warn} {
		if strings.HasPrefix(title, "["+t+"]") || strings.HasPrefix(title, "["+t+" on ") {
			return t
		}
	}
	return Triggered
}

func stripTransition(title string) string {
	if strings.HasPrefix(title, "[") {
		if i := strings.IndexByte(title, ']'); i > 0 {
			return title[i+1:]
		}
	}
	return title
}
