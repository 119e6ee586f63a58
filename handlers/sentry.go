package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pitcrew/pitcrew/alerts"
	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/hook"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
)

// sentryJob fixes the bug behind a Sentry issue alert: one incident (one
// run, one tracking issue) per Sentry issue. A Sentry internal integration
// posts to /api/sentry/hook, signing the raw body with its client secret.
var sentryJob = Job{
	Job:    runs.Job{Kind: kindSentry, Prompt: "sentry", Render: publish.RenderAlert, Evidence: evidence.JobAlert, RunLog: evidence.RunLogName},
	Config: sentryConfig,
	Source: &Source{
		Source: hook.Source{Name: "sentry", Title: "Sentry", Auth: hook.Auth{Header: "Sentry-Hook-Signature", HMAC: true},
			MaxBody: maxSentryBody, Accept: acceptSentry},
		SecretEnv: "SENTRY_CLIENT_SECRET", ReposEnv: "SENTRY_PROJECT_REPOS", Handle: handleSentryAlert},
	Retry: retryAlert,
}

const kindSentry runs.Kind = "sentry"

// SentryConfig configures fixes for Sentry issue alerts (section sentry).
type SentryConfig struct {
	Enabled bool   `yaml:"enabled"`
	Label   string `yaml:"label"` // on the tracking issue
}

var sentryConfig = repoconfig.Section[SentryConfig]{
	Key:      "sentry",
	Defaults: func() SentryConfig { return SentryConfig{Enabled: true, Label: "pitcrew:alert"} },
	Check: func(c SentryConfig) error {
		if c.Label == "" || len(c.Label) > 50 {
			return errors.New("sentry.label must be 1 to 50 characters")
		}
		return nil
	},
}

// Limits on what is kept of a Sentry event. Events carry breadcrumbs and
// contexts pitcrew does not read, hence a larger body than Datadog's.
const (
	maxSentryBody       = 2 << 20
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
	WebURL  string // the event on Sentry, http(s) only
	Fired   time.Time
	Tags    [][2]string
	// Exceptions are the event's exceptions, innermost last, each with its
	// in-app frames only (most recent call last, as Sentry orders them).
	Exceptions []SentryException
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

// ParseSentryAlert reads an event_alert webhook body. An action other than
// triggered is hook.ErrIgnored; a body without an event and its issue id is an
// error.
func ParseSentryAlert(body []byte) (SentryAlert, error) {
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
		return SentryAlert{}, hook.ErrIgnored
	}
	ev := v.Data.Event
	if ev == nil {
		return SentryAlert{}, errors.New("not a Sentry event alert: data.event is missing")
	}
	a := SentryAlert{
		IssueID: jsonScalar(ev.IssueID), EventID: alerts.Clean(ev.EventID, 64), Rule: alerts.Clean(v.Data.Rule, 200),
		Title: alerts.Clean(ev.Title, 300), Culprit: alerts.Clean(ev.Culprit, 300), Level: alerts.Clean(ev.Level, 20),
		WebURL: publish.SafeURL(alerts.Clean(ev.WebURL, 500)), Tags: sentryTags(ev.Tags),
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
	values := ev.Exception.Values
	if len(values) > maxSentryExceptions {
		values = values[len(values)-maxSentryExceptions:]
	}
	for _, x := range values {
		e := SentryException{Type: alerts.Clean(x.Type, 200), Value: alerts.Clean(x.Value, 1000), Module: alerts.Clean(x.Module, 200)}
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
			e.Frames = append(e.Frames, SentryFrame{File: alerts.Clean(file, 300), Function: alerts.Clean(f.Function, 300), Module: alerts.Clean(f.Module, 200), Line: line})
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
		out = append(out, [2]string{alerts.Clean(pair[0], 100), alerts.Clean(pair[1], 300)})
		if len(out) == maxSentryTags {
			break
		}
	}
	return out
}

// acceptSentry takes event alerts that fired; Sentry's other resources
// (installation, issue, metric_alert, ...) are acknowledged and ignored.
func acceptSentry(header func(string) string, body []byte) (string, error) {
	if header("Sentry-Hook-Resource") != "event_alert" {
		return "", hook.ErrIgnored
	}
	a, err := ParseSentryAlert(body)
	return a.IssueID, err
}

// handleSentryAlert turns a stored Sentry event alert into the incident
// of its Sentry issue.
func handleSentryAlert(ctx context.Context, b *Base, set SourceSettings, body []byte) error {
	a, err := ParseSentryAlert(body)
	if err != nil {
		return queue.Permanent(err)
	}
	log := logFor(ctx).With().Str("sentry_issue", a.IssueID).Str("sentry_project", a.Project).Logger()
	ctx = log.WithContext(ctx)
	repo, err := sentryRepo(a, set.Repos)
	if err != nil {
		log.Warn().Err(err).Msg("no repository for this Sentry alert")
		return nil
	}
	ctx = log.With().Str("repo", repo.String()).Logger().WithContext(ctx)
	t, proceed, err := b.alertTarget(ctx, repo, func(c repoconfig.Config) bool { return sentryConfig.Of(c).Enabled })
	if !proceed {
		return err
	}
	key := incidentKey(kindSentry, repo, a.IssueID)
	unlock, err := b.Ledger.Lock(ctx, key, 30*time.Second, time.Minute)
	if err != nil {
		return err
	}
	defer unlock()
	return b.startIncident(ctx, t.GH, incident{Kind: kindSentry, Repo: repo, Inst: t.Inst, Key: key, ID: a.IssueID, Title: a.Title,
		IssueTitle: "Sentry issue: " + publish.Line(a.Title, 200), IssueBody: sentryIssueBody(a), Label: sentryConfig.Of(t.Cfg).Label,
		Input: prompts.AlertInput{Repo: repo.String(), Fired: a.Fired, Data: sentryData(a)}}, t.Cfg)
}

// sentryRepo is the repository of an event's code: the one its
// pitcrew_repo tag names, else its project's in SENTRY_PROJECT_REPOS. A
// tag may only name a repository of an owner the map names: anyone who
// holds a project's DSN (public in a browser app) can set an event's tags,
// and must not be able to send an agent to another organisation's code.
func sentryRepo(a SentryAlert, repos map[string]string) (github.Repo, error) {
	if tag := a.Tag("pitcrew_repo"); tag != "" {
		r, err := github.ParseRepo(tag)
		if err == nil && mappedOwner(r.Owner, repos) {
			return r, nil
		}
		if mapped := repos[a.Project]; mapped == "" {
			return github.Repo{}, fmt.Errorf("the pitcrew_repo tag %q names no owner in SENTRY_PROJECT_REPOS, and project %q is not mapped there", tag, a.Project)
		}
	}
	if mapped := repos[a.Project]; mapped != "" {
		return github.ParseRepo(mapped)
	}
	return github.Repo{}, fmt.Errorf("project %q is not in SENTRY_PROJECT_REPOS", a.Project)
}

func mappedOwner(owner string, repos map[string]string) bool {
	for _, r := range repos {
		if o, _, _ := strings.Cut(r, "/"); strings.EqualFold(o, owner) {
			return true
		}
	}
	return false
}

func sentryIssueBody(a SentryAlert) string {
	var b strings.Builder
	b.WriteString("A Sentry issue alert fired; pitcrew sent an agent to find and fix its cause. Its progress and answer are in the comment below.\n\n")
	if a.WebURL != "" {
		fmt.Fprintf(&b, "- Event: %s\n", a.WebURL)
	}
	for _, f := range [][2]string{{"Rule", a.Rule}, {"Level", a.Level}, {"Culprit", a.Culprit}, {"Environment", a.Tag("environment")}, {"Release", a.Tag("release")}, {"Sentry issue", a.IssueID}} {
		if f[1] != "" {
			fmt.Fprintf(&b, "- %s: %s\n", f[0], publish.Text(f[1], 300))
		}
	}
	if n := len(a.Exceptions); n > 0 && len(a.Exceptions[n-1].Frames) > 0 {
		x := a.Exceptions[n-1]
		fmt.Fprintf(&b, "\n%s, in this code (most recent call first):\n\n", publish.Code(x.Type, 200))
		for i := len(x.Frames) - 1; i >= 0 && i >= len(x.Frames)-5; i-- {
			f := x.Frames[i]
			fmt.Fprintf(&b, "- %s in %s\n", publish.Code(fmt.Sprintf("%s:%d", f.File, f.Line), 320), publish.Code(f.Function, 300))
		}
	}
	return b.String()
}

// sentryData is what of the event the agent sees, inside the prompt's fence.
func sentryData(a SentryAlert) map[string]any {
	tags := map[string]string{}
	for _, t := range a.Tags {
		tags[t[0]] = t[1]
	}
	return map[string]any{"sentry_issue_id": a.IssueID, "event_id": a.EventID, "project": a.Project, "rule": a.Rule,
		"title": a.Title, "culprit": a.Culprit, "level": a.Level, "web_url": a.WebURL, "tags": tags, "exceptions": a.Exceptions}
}
