package handlers

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
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

// datadogJob fixes the bug behind a Datadog monitor alert.
var datadogJob = work.Job{
	Job:    runs.Job{Kind: runs.KindAlert, Prompt: "alert", Connections: []string{"datadog"}, Render: publish.RenderAlert, Evidence: evidence.JobAlert, RunLog: evidence.RunLogName},
	Config: datadogConfig,
	Source: &work.Source{
		Source:    hook.Source{Name: "datadog", Title: "Datadog", Auth: hook.Auth{Header: "X-Pitcrew-Token"}, MaxBody: alerts.MaxBody, Accept: acceptDatadog},
		SecretEnv: "DATADOG_WEBHOOK_TOKEN", ReposEnv: "DATADOG_SERVICE_REPOS", Handle: handleDatadogAlert},
	Retry: incidents.Retry,
}

// acceptDatadog checks a Datadog body is an alert of either payload shape.
func acceptDatadog(_ func(string) string, body []byte) (string, error) {
	a, err := alerts.Parse(body)
	return a.ID, err
}

// AlertConfig configures fixes for Datadog alerts (section alerts).
type AlertConfig struct {
	Enabled bool   `yaml:"enabled"`
	Label   string `yaml:"label" doc:"a label name, 1 to 50 characters"` // on the tracking issue
	// StartOn lists the transitions that may start a run.
	StartOn []string `yaml:"start_on" doc:"a list of Datadog transitions: Triggered, Re-Triggered, Renotify, No Data, Re-No Data, Warn, Re-Warn"`
	// SkipTags mark alerts a code change will not fix (infrastructure).
	SkipTags []string `yaml:"skip_tags" doc:"a list of Datadog tags"`
}

var datadogConfig = repoconfig.Section[AlertConfig]{
	Key: "alerts",
	Defaults: func() AlertConfig {
		return AlertConfig{Enabled: true, Label: "pitcrew:alert", StartOn: []string{"Triggered", "Re-Triggered", "Renotify"},
			SkipTags: []string{"pitcrew:skip", "team:infra"}}
	},
	Check: func(c AlertConfig) error {
		if c.Label == "" || len(c.Label) > 50 {
			return errors.New("alerts.label must be 1 to 50 characters")
		}
		for _, t := range c.StartOn {
			switch t {
			case "Triggered", "Re-Triggered", "Renotify", "No Data", "Re-No Data", "Warn", "Re-Warn":
			default:
				return fmt.Errorf("alerts.start_on: %q is not a transition that can start a run", t)
			}
		}
		return nil
	},
}

// handleDatadogAlert turns a stored Datadog alert into a fix run and a
// tracking issue: one of each per incident (the monitor's alert id and
// cycle key).
func handleDatadogAlert(ctx context.Context, b *work.Env, set work.SourceSettings, body []byte) error {
	a, err := alerts.Parse(body)
	if err != nil {
		return queue.Permanent(err)
	}
	log := zerolog.Ctx(ctx).With().Str("alert_id", a.ID).Str("transition", a.Transition).Logger()
	ctx = log.WithContext(ctx)
	repo, err := datadogRepo(a, set.Repos)
	if err != nil {
		log.Warn().Strs("tags", a.Tags).Msg("no repository for this alert: tag the monitor pitcrew_repo:owner/name or map its service")
		return nil
	}
	ctx = log.With().Str("repo", repo.String()).Logger().WithContext(ctx)
	t, proceed, err := incidents.TargetOf(ctx, b, repo, func(c repoconfig.Config) bool { return datadogConfig.Of(c).Enabled })
	if !proceed {
		return err
	}
	inst, gh, cfg := t.Inst, t.GH, t.Cfg
	dd := datadogConfig.Of(cfg)
	for _, tag := range dd.SkipTags {
		if a.HasTag(tag) {
			zerolog.Ctx(ctx).Info().Str("tag", tag).Msg("skipping an alert tagged as infrastructure")
			return nil
		}
	}
	key := incidents.Key(runs.KindAlert, repo, a.IncidentKey())
	unlock, err := b.Ledger.Lock(ctx, key, 30*time.Second, time.Minute)
	if err != nil {
		return err
	}
	defer unlock()

	switch {
	case slices.Contains(dd.StartOn, a.Transition):
		inc := incidents.Incident{Kind: runs.KindAlert, Repo: repo, Inst: inst, Key: key, ID: a.ID, Title: a.Title,
			IssueTitle: "Datadog alert: " + publish.Line(a.Title, 200), IssueBody: alertIssueBody(a), Label: dd.Label,
			Input: prompts.AlertInput{Repo: repo.String(), Fired: a.FiredAt(), Data: alertData(a)}}
		if a.Transition != alerts.Triggered {
			inc.Renotified = renotifiedComment(a)
		}
		return incidents.Start(ctx, b, gh, inc, cfg)
	case a.Transition == alerts.Recovered:
		n, err := incidents.Issue(ctx, b, gh, repo, key, dd.Label)
		if err != nil || n == 0 {
			return err
		}
		_, err = gh.CreateComment(ctx, repo, n, recoveredComment(a))
		return err
	default:
		zerolog.Ctx(ctx).Info().Msg("this transition starts no work (alerts.start_on)")
		return nil
	}
}

func recoveredComment(a alerts.Alert) string {
	return "✅ Datadog reports the monitor recovered" + firedAt(a) + "."
}

func renotifiedComment(a alerts.Alert) string {
	return "🔁 Datadog notified again (" + publish.Text(a.Transition, 32) + firedAt(a) + "); the run already on this incident goes on."
}

// firedAt is " at <time>" for an alert whose date was valid, else "".
func firedAt(a alerts.Alert) string {
	if t := a.FiredAt(); !t.IsZero() {
		return " at " + t.Format("2006-01-02 15:04:05 UTC")
	}
	return ""
}

var errNoRepo = errors.New("no repository for this alert")

// datadogRepo is the repository of an alert's code: its pitcrew_repo tag,
// else its service's in DATADOG_SERVICE_REPOS.
func datadogRepo(a alerts.Alert, serviceRepos map[string]string) (github.Repo, error) {
	if r := a.Tag("pitcrew_repo"); r != "" {
		return github.ParseRepo(r)
	}
	service := a.Tag("service")
	if m := serviceInTitle.FindStringSubmatch(a.Title); service == "" && m != nil {
		service = m[1] // the default body has no tags, but its title names the group
	}
	if r, ok := serviceRepos[service]; ok {
		return github.ParseRepo(r)
	}
	return github.Repo{}, errNoRepo
}

var serviceInTitle = regexp.MustCompile(`service:([A-Za-z0-9_.-]+)`)

func alertIssueBody(a alerts.Alert) string {
	var b strings.Builder
	b.WriteString("Datadog reported this alert; pitcrew sent an agent to find and fix its cause. Its progress and answer are in the comment below.\n\n")
	if a.Link != "" {
		fmt.Fprintf(&b, "- Monitor: %s\n", publish.SafeURL(a.Link))
	}
	for _, f := range [][2]string{{"Transition", a.Transition}, {"Priority", a.Priority}, {"Scope", a.Scope}, {"Tags", strings.Join(a.Tags, ", ")}, {"Alert id", a.ID}} {
		if f[1] != "" {
			fmt.Fprintf(&b, "- %s: %s\n", f[0], publish.Text(f[1], 300))
		}
	}
	return b.String()
}

// alertData is what of the alert the agent sees, inside the prompt's fence.
func alertData(a alerts.Alert) map[string]any {
	return map[string]any{"alert_id": a.ID, "transition": a.Transition, "title": a.Title, "message": a.Message,
		"tags": a.Tags, "scope": a.Scope, "priority": a.Priority, "date": a.Date, "link": a.Link, "event_type": a.EventType}
}
