package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/alerts"
	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/hook"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/incidents"
)

// sentryJob fixes the bug behind a Sentry issue alert: one incident (one
// run, one tracking issue) per Sentry issue. A Sentry internal integration
// posts to /api/sentry/hook, signing the raw body with its client secret.
var sentryJob = work.Job{
	Job:    runs.Job{Kind: kindSentry, Prompt: "sentry", Render: publish.RenderAlert, Evidence: evidence.JobAlert, RunLog: evidence.RunLogName},
	Config: sentryConfig,
	Source: &work.Source{
		Source: hook.Source{Name: "sentry", Title: "Sentry", Auth: hook.Auth{Header: "Sentry-Hook-Signature", HMAC: true},
			MaxBody: alerts.MaxSentryBody, Accept: acceptSentry},
		SecretEnv: "SENTRY_CLIENT_SECRET", ReposEnv: "SENTRY_PROJECT_REPOS", Handle: handleSentryAlert},
	Retry: incidents.Retry,
}

const kindSentry runs.Kind = "sentry"

// SentryConfig configures fixes for Sentry issue alerts (section sentry).
type SentryConfig struct {
	Enabled bool   `yaml:"enabled"`
	Label   string `yaml:"label" doc:"a label name, 1 to 50 characters"` // on the tracking issue
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

// acceptSentry takes event alerts that fired, unless their times show a
// captured one sent again (SentryAlert.Fresh); Sentry's other resources
// (installation, issue, metric_alert, ...) are acknowledged and ignored.
func acceptSentry(header func(string) string, body []byte) (string, error) {
	if header("Sentry-Hook-Resource") != "event_alert" {
		return "", hook.ErrIgnored
	}
	a, err := alerts.ParseSentry(body)
	switch {
	case errors.Is(err, alerts.ErrNotTriggered):
		return "", hook.ErrIgnored
	case err != nil:
		return "", err
	}
	if err := a.Fresh(header("Sentry-Hook-Timestamp"), time.Now()); err != nil {
		return a.IssueID, fmt.Errorf("%w: %w", hook.ErrStale, err)
	}
	return a.IssueID, nil
}

// handleSentryAlert turns a stored Sentry event alert into the incident
// of its Sentry issue.
func handleSentryAlert(ctx context.Context, b *work.Env, set work.SourceSettings, body []byte) error {
	a, err := alerts.ParseSentry(body)
	if err != nil {
		return queue.Permanent(err)
	}
	a.WebURL = publish.SafeURL(a.WebURL)
	log := zerolog.Ctx(ctx).With().Str("sentry_issue", a.IssueID).Str("sentry_project", a.Project).Logger()
	ctx = log.WithContext(ctx)
	repo, err := sentryRepo(a, set.Repos)
	if err != nil {
		log.Warn().Err(err).Msg("no repository for this Sentry alert")
		return nil
	}
	ctx = log.With().Str("repo", repo.String()).Logger().WithContext(ctx)
	t, proceed, err := incidents.TargetOf(ctx, b, repo, func(c repoconfig.Config) bool { return sentryConfig.Of(c).Enabled })
	if !proceed {
		return err
	}
	key := incidents.Key(kindSentry, repo, a.IssueID)
	unlock, err := b.Ledger.Lock(ctx, key, 30*time.Second, time.Minute)
	if err != nil {
		return err
	}
	defer unlock()
	return incidents.Start(ctx, b, t.GH, incidents.Incident{Kind: kindSentry, Repo: repo, Inst: t.Inst, Key: key, ID: a.IssueID, Title: a.Title,
		IssueTitle: "Sentry issue: " + publish.Line(a.Title, 200), IssueBody: sentryIssueBody(a), Label: sentryConfig.Of(t.Cfg).Label,
		Input: prompts.AlertInput{Repo: repo.String(), Fired: a.Fired, Data: sentryData(a)}}, t.Cfg)
}

// sentryRepo is the repository of an event's code: the one its
// pitcrew_repo tag names, else its project's in SENTRY_PROJECT_REPOS. A
// tag may only name a repository of an owner the map names: anyone who
// holds a project's DSN (public in a browser app) can set an event's tags,
// and must not be able to send an agent to another organisation's code.
func sentryRepo(a alerts.SentryAlert, repos map[string]string) (github.Repo, error) {
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

func sentryIssueBody(a alerts.SentryAlert) string {
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
func sentryData(a alerts.SentryAlert) map[string]any {
	tags := map[string]string{}
	for _, t := range a.Tags {
		tags[t[0]] = t[1]
	}
	return map[string]any{"sentry_issue_id": a.IssueID, "event_id": a.EventID, "project": a.Project, "rule": a.Rule,
		"title": a.Title, "culprit": a.Culprit, "level": a.Level, "web_url": a.WebURL, "tags": tags, "exceptions": a.Exceptions}
}
