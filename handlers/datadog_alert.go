package handlers

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"github.com/pitcrew/pitcrew/alerts"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/runs"
)

// AlertReceived turns a stored Datadog alert into a fix run and a tracking
// issue: one of each per incident (the monitor's alert id and cycle key).
type AlertReceived struct {
	Base
	// ServiceRepos maps a service tag to the repository of its code, for
	// monitors without a pitcrew_repo tag.
	ServiceRepos map[string]string
}

// alertCooldown is how long an incident's ended run answers for it.
const alertCooldown = 7 * 24 * time.Hour

// ProcessTask implements asynq.Handler for TaskDatadogAlert.
func (h *AlertReceived) ProcessTask(ctx context.Context, t *asynq.Task) error {
	a, err := alerts.Parse(t.Payload())
	if err != nil {
		return permanent(err)
	}
	log := logFor(ctx).With().Str("alert_id", a.ID).Str("transition", a.Transition).Logger()
	ctx = log.WithContext(ctx)
	repo, err := h.repoFor(a)
	if err != nil {
		log.Warn().Strs("tags", a.Tags).Msg("no repository for this alert: tag the monitor pitcrew_repo:owner/name or map its service")
		return nil
	}
	ctx = log.With().Str("repo", repo.String()).Logger().WithContext(ctx)
	inst, err := h.Clients.InstallationFor(ctx, repo)
	if err != nil || inst == 0 {
		if inst == 0 && err == nil {
			logFor(ctx).Warn().Msg("pitcrew is not installed on the alert's repository")
		}
		return err
	}
	gh, err := h.Clients.Installation(inst)
	if err != nil {
		return err
	}
	cfg, proceed, err := h.jobConfig(ctx, gh, repo, func(c RepoConfig) bool { return c.Alerts.Enabled })
	if !proceed {
		return err
	}
	for _, tag := range cfg.Alerts.SkipTags {
		if a.HasTag(tag) {
			logFor(ctx).Info().Str("tag", tag).Msg("skipping an alert tagged as infrastructure")
			return nil
		}
	}
	key := "alert:" + strings.ToLower(repo.String()) + ":" + a.IncidentKey()
	unlock, err := h.Ledger.Lock(ctx, key, 30*time.Second, time.Minute)
	if err != nil {
		return err
	}
	defer unlock()

	switch {
	case slices.Contains(cfg.Alerts.StartOn, a.Transition):
		return h.startIncident(ctx, gh, repo, inst, key, a, cfg)
	case a.Transition == alerts.Recovered:
		n, err := h.trackingIssue(ctx, gh, repo, key, cfg)
		if err != nil || n == 0 {
			return err
		}
		_, err = gh.CreateComment(ctx, repo, n, recoveredComment(a))
		return err
	default:
		logFor(ctx).Info().Msg("this transition starts no work (alerts.start_on)")
		return nil
	}
}

func (h *AlertReceived) startIncident(ctx context.Context, gh GitHub, repo Repo, inst int64, key string, a alerts.Alert, cfg RepoConfig) error {
	issue, err := h.trackingIssue(ctx, gh, repo, key, cfg)
	if err != nil {
		return err
	}
	// A new incident's issue is opened only if its run starts or attaches,
	// and only within the repository's daily cap on issues.
	reserved := false
	if issue == 0 {
		if reserved, err = h.reserveIssue(ctx, repo, cfg); !reserved {
			return err
		}
	}
	openIssue := func(ctx context.Context, run runs.Run, claim runs.Claim) (runs.Subject, error) {
		if issue == 0 && claim != runs.ClaimCooldown {
			reserved = false // spent even if the call fails: GitHub may have opened it
			n, err := h.openTrackingIssue(ctx, gh, repo, key, cfg, a)
			if err != nil {
				return runs.Subject{}, err
			}
			issue = n
			if _, err := h.Ledger.Update(ctx, run.ID, func(r *runs.Run) error { r.Issue = n; return nil }); err != nil {
				return runs.Subject{}, err
			}
		}
		if issue == 0 {
			return runs.Subject{}, nil
		}
		return runs.Subject{Repo: repo.String(), Issue: issue}, nil
	}
	delivery, _ := asynq.GetTaskID(ctx)
	entry, started, err := h.claimRun(ctx, runRequest{
		Run: runs.Run{Key: key, Kind: runs.KindAlert, InstallationID: inst, Repo: repo.String(), Issue: issue,
			AlertID: a.ID, Delivery: delivery},
		Subject: runs.Subject{Repo: repo.String(), Issue: issue}, OpenSubject: openIssue,
		Cooldown: alertCooldown, DailyLimit: cfg.DailyLimit, Connections: []string{"datadog"},
		Prompt: func() (string, error) {
			return prompts.Alert(prompts.AlertInput{Repo: repo.String(), Fired: a.FiredAt(), Data: alertData(a)})
		},
	})
	if reserved {
		if err := h.Ledger.ReleaseIssue(context.WithoutCancel(ctx), repo.String()); err != nil {
			logFor(ctx).Warn().Err(err).Msg("could not give back an unused issue of the daily cap")
		}
	}
	if err != nil || issue == 0 {
		if err == nil {
			logFor(ctx).Info().Str("claim", string(entry.Relation)).Str("note", entry.Note).Msg("no tracking issue for this alert: its run neither starts nor attaches")
		}
		return err
	}
	entry.Test = a.Title
	if !started && entry.RunID != "" && a.Transition != alerts.Triggered {
		// The same incident notified again: record it where people look.
		if _, err := gh.CreateComment(ctx, repo, issue, renotifiedComment(a)); err != nil {
			return err
		}
	}
	subject := runs.Subject{Repo: repo.String(), Issue: issue}
	return h.updateStatus(ctx, gh, subject, func(st *runs.Status) {
		st.Replace(runs.Status{InstallationID: inst, Job: string(runs.KindAlert), Entries: []runs.Entry{entry}})
	})
}

// trackingIssue finds the incident's issue (Redis, then the hidden marker
// in issue bodies); 0 when it has none.
func (h *AlertReceived) trackingIssue(ctx context.Context, gh GitHub, repo Repo, key string, cfg RepoConfig) (int, error) {
	n, found, err := h.Ledger.TrackingIssue(ctx, key)
	if err != nil || (found && n > 0) {
		return n, err
	}
	if n, err = gh.FindIssue(ctx, repo, cfg.Alerts.Label, incidentMarker(key)); err != nil || n == 0 {
		return 0, err
	}
	return n, h.Ledger.SetTrackingIssue(ctx, key, n)
}

// openTrackingIssue opens the incident's issue; the caller holds the
// incident's lock and has found none.
func (h *AlertReceived) openTrackingIssue(ctx context.Context, gh GitHub, repo Repo, key string, cfg RepoConfig, a alerts.Alert) (int, error) {
	n, err := gh.CreateIssue(ctx, repo, "Datadog alert: "+publish.Line(a.Title, 200), alertIssueBody(a, incidentMarker(key)), []string{cfg.Alerts.Label})
	if err != nil {
		return 0, err
	}
	return n, h.Ledger.SetTrackingIssue(context.WithoutCancel(ctx), key, n)
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

func incidentMarker(key string) string { return "<!-- pitcrew:" + key + " -->" }

func (h *AlertReceived) repoFor(a alerts.Alert) (Repo, error) {
	if r := a.Tag("pitcrew_repo"); r != "" {
		return ParseRepo(r)
	}
	service := a.Tag("service")
	if m := serviceInTitle.FindStringSubmatch(a.Title); service == "" && m != nil {
		service = m[1] // the default body has no tags, but its title names the group
	}
	if r, ok := h.ServiceRepos[service]; ok {
		return ParseRepo(r)
	}
	return Repo{}, errNoRepo
}

var serviceInTitle = regexp.MustCompile(`service:([A-Za-z0-9_.-]+)`)

func alertIssueBody(a alerts.Alert, marker string) string {
	var b strings.Builder
	b.WriteString("Datadog reported this alert; pitcrew sent an agent to find and fix its cause. Its progress and answer are in the comment below.\n\n")
	if a.Link != "" {
		fmt.Fprintf(&b, "- Monitor: %s\n", safeURL(a.Link))
	}
	for _, f := range [][2]string{{"Transition", a.Transition}, {"Priority", a.Priority}, {"Scope", a.Scope}, {"Tags", strings.Join(a.Tags, ", ")}, {"Alert id", a.ID}} {
		if f[1] != "" {
			fmt.Fprintf(&b, "- %s: %s\n", f[0], publish.Text(f[1], 300))
		}
	}
	return b.String() + "\n" + marker + "\n"
}

// alertData is what of the alert the agent sees, inside the prompt's fence.
func alertData(a alerts.Alert) map[string]any {
	return map[string]any{"alert_id": a.ID, "transition": a.Transition, "title": a.Title, "message": a.Message,
		"tags": a.Tags, "scope": a.Scope, "priority": a.Priority, "date": a.Date, "link": a.Link, "event_type": a.EventType}
}
