package alerts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// ErrNotTriggered is a Sentry webhook whose action is not "triggered": an
// alert that starts no work.
var ErrNotTriggered = errors.New("not a triggered Sentry alert")

// Limits on what is kept of a Sentry event; MaxSentryBody bounds its hook.
// Events carry breadcrumbs and contexts pitcrew does not read, hence a
// larger body than Datadog's.
const (
	MaxSentryBody       = 2 << 20
	maxSentryExceptions = 5  // chained exceptions, the last raised kept
	maxSentryFrames     = 25 // in-app frames per exception, the innermost kept
	maxSentryTags       = 50
)

// SentryAlert is one Sentry issue alert (resource event_alert, action
// triggered), validated and trimmed: every string cleaned of control and
// invisible characters and capped.
type SentryAlert struct {
	IssueID string // Sentry's issue id, digits: one incident
	EventID string
	Project string // the project's slug, from the event's API URL; "" when absent
	Rule    string // the alert rule that fired
	Title   string
	Culprit string
	Level   string
	WebURL  string // the event on Sentry, cleaned but unchecked: publish.SafeURL it before showing it
	Fired   time.Time
	Tags    [][2]string
	// Exceptions are the event's exceptions, innermost last, each with its
	// in-app frames only (most recent call last, as Sentry orders them).
	Exceptions []SentryException
	// Received is when Sentry received the event, Happened when the event
	// says it happened (its timestamp, else its datetime); zero when the
	// body has no valid one. Fresh reads them.
	Received, Happened time.Time
}

// SentryException is one exception of an event.
type SentryException struct {
	Type   string        `json:"type"`
	Value  string        `json:"value"`
	Module string        `json:"module,omitempty"`
	Frames []SentryFrame `json:"in_app_frames"`
}

// SentryFrame is one in-app stack frame.
type SentryFrame struct {
	File     string `json:"file"`
	Function string `json:"function"`
	Module   string `json:"module,omitempty"`
	Line     int    `json:"line,omitempty"`
}

// Tag is the value of the event's tag name; "" when it has none.
func (a SentryAlert) Tag(name string) string {
	for _, t := range a.Tags {
		if t[0] == name {
			return t[1]
		}
	}
	return ""
}

var (
	sentryIssueID = regexp.MustCompile(`^[0-9]{1,20}$`)
	// https://sentry.io/api/0/projects/{org}/{project}/events/{id}/
	sentryProjectInURL = regexp.MustCompile(`/api/0/projects/[^/]+/([A-Za-z0-9_.-]+)/events/`)
)

// ParseSentry reads an event_alert webhook body. An action other than
// triggered is ErrNotTriggered; a body without an event and its issue id is an
// error.
func ParseSentry(body []byte) (SentryAlert, error) {
	var v struct {
		Action string `json:"action"`
		Data   struct {
			Rule  string `json:"triggered_rule"`
			Event *struct {
				IssueID   json.RawMessage `json:"issue_id"`
				EventID   string          `json:"event_id"`
				URL       string          `json:"url"`
				WebURL    string          `json:"web_url"`
				Title     string          `json:"title"`
				Culprit   string          `json:"culprit"`
				Level     string          `json:"level"`
				Datetime  string          `json:"datetime"`
				Received  json.RawMessage `json:"received"`
				Timestamp json.RawMessage `json:"timestamp"`
				Tags      json.RawMessage `json:"tags"`
				Exception struct {
					Values []struct {
						Type       string `json:"type"`
						Value      string `json:"value"`
						Module     string `json:"module"`
						Stacktrace struct {
							Frames []struct {
								Filename string          `json:"filename"`
								AbsPath  string          `json:"abs_path"`
								Function string          `json:"function"`
								Module   string          `json:"module"`
								Lineno   json.RawMessage `json:"lineno"`
								InApp    *bool           `json:"in_app"`
							} `json:"frames"`
						} `json:"stacktrace"`
					} `json:"values"`
				} `json:"exception"`
			} `json:"event"`
		} `json:"data"`
	}
	if b := bytes.TrimSpace(body); len(b) == 0 || b[0] != '{' {
		return SentryAlert{}, errors.New("not a Sentry webhook: the body is not a JSON object")
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return SentryAlert{}, fmt.Errorf("not a Sentry event alert: %w", err)
	}
	if v.Action != "triggered" {
		return SentryAlert{}, ErrNotTriggered
	}
	ev := v.Data.Event
	if ev == nil {
		return SentryAlert{}, errors.New("not a Sentry event alert: data.event is missing")
	}
	a := SentryAlert{
		IssueID: jsonScalar(ev.IssueID), EventID: Clean(ev.EventID, 64), Rule: Clean(v.Data.Rule, 200),
		Title: Clean(ev.Title, 300), Culprit: Clean(ev.Culprit, 300), Level: Clean(ev.Level, 20),
		WebURL: Clean(ev.WebURL, 500), Tags: sentryTags(ev.Tags),
	}
	if !sentryIssueID.MatchString(a.IssueID) {
		return SentryAlert{}, errors.New("not a Sentry event alert: data.event.issue_id is not a Sentry issue id")
	}
	if m := sentryProjectInURL.FindStringSubmatch(ev.URL); m != nil {
		a.Project = m[1]
	}
	if t, err := time.Parse(time.RFC3339Nano, ev.Datetime); err == nil && t.Year() >= 2000 && t.Year() < 2200 {
		a.Fired = t.UTC()
	}
	a.Received, a.Happened = sentryTime(ev.Received), sentryTime(ev.Timestamp)
	if a.Happened.IsZero() {
		a.Happened = a.Fired
	}
	values := ev.Exception.Values
	if len(values) > maxSentryExceptions {
		values = values[len(values)-maxSentryExceptions:]
	}
	for _, x := range values {
		e := SentryException{Type: Clean(x.Type, 200), Value: Clean(x.Value, 1000), Module: Clean(x.Module, 200)}
		for _, f := range x.Stacktrace.Frames {
			if f.InApp == nil || !*f.InApp {
				continue
			}
			file := f.Filename
			if file == "" {
				file = f.AbsPath
			}
			line, _ := strconv.Atoi(jsonScalar(f.Lineno))
			if line < 0 || line > 10_000_000 {
				line = 0
			}
			e.Frames = append(e.Frames, SentryFrame{File: Clean(file, 300), Function: Clean(f.Function, 300), Module: Clean(f.Module, 200), Line: line})
		}
		if len(e.Frames) > maxSentryFrames {
			e.Frames = e.Frames[len(e.Frames)-maxSentryFrames:]
		}
		a.Exceptions = append(a.Exceptions, e)
	}
	return a, nil
}

// jsonScalar is a JSON string or number as text ("" otherwise): Sentry
// sends issue ids as strings, older payloads and line numbers as numbers.
func jsonScalar(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// sentryTags reads an event's tags, sent as [key, value] pairs or as
// {"key", "value"} objects.
func sentryTags(raw json.RawMessage) [][2]string {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	var out [][2]string
	for _, it := range items {
		var pair []string
		var obj struct{ Key, Value string }
		switch {
		case json.Unmarshal(it, &pair) == nil && len(pair) == 2:
		case json.Unmarshal(it, &obj) == nil && obj.Key != "":
			pair = []string{obj.Key, obj.Value}
		default:
			continue
		}
		out = append(out, [2]string{Clean(pair[0], 100), Clean(pair[1], 300)})
		if len(out) == maxSentryTags {
			break
		}
	}
	return out
}
