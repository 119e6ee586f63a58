package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	gogithub "github.com/google/go-github/v66/github"
	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/hook"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/dashboard"
)

// DashboardTick acts on an edit of a flaky-tests dashboard: each box ticked
// by someone with write access starts a fix run of its test; the body is
// then rewritten from the ledger, which unticks the boxes and shows the runs.
type DashboardTick struct{ work.Env }

// Handles implements githubapp.EventHandler.
func (h *DashboardTick) Handles() []string { return []string{"issues"} }

// ParseDashboardEdit reads an issues event; ok is false unless a person
// (not a bot) edited the body of an issue carrying the dashboard label, of
// an installation.
func ParseDashboardEdit(payload []byte) (ev dashboard.Edit, ok bool, err error) {
	var raw gogithub.IssuesEvent
	if err := json.Unmarshal(payload, &raw); err != nil {
		return dashboard.Edit{}, false, fmt.Errorf("decoding issues event: %w", err)
	}
	is, sender := raw.GetIssue(), raw.GetSender()
	if raw.GetAction() != "edited" || raw.GetChanges().GetBody() == nil || is == nil || is.IsPullRequest() || is.GetNumber() <= 0 ||
		raw.GetInstallation().GetID() <= 0 || sender.GetLogin() == "" || sender.GetType() == "Bot" || strings.HasSuffix(sender.GetLogin(), "[bot]") ||
		!slices.ContainsFunc(is.Labels, func(l *gogithub.Label) bool { return l.GetName() == publish.DashboardLabel }) {
		return dashboard.Edit{}, false, nil
	}
	repo, err := github.ParseRepo(raw.GetRepo().GetFullName())
	if err != nil {
		return dashboard.Edit{}, false, err
	}
	// Only the boxes this edit ticked: one still ticked from an earlier
	// edit (the rewrite comes a window later) asked already.
	before := publish.Ticks(raw.GetChanges().GetBody().GetFrom())
	var ticks []string
	for _, id := range publish.Ticks(is.GetBody()) {
		if !slices.Contains(before, id) {
			ticks = append(ticks, id)
		}
	}
	return dashboard.Edit{InstallationID: raw.GetInstallation().GetID(), Repo: repo, Issue: is.GetNumber(), Editor: sender.GetLogin(),
		Ticks: ticks}, true, nil
}

// issuesShape is what the intake reads of an issues body for Ignored:
// ParseDashboardEdit's type, and the values it decides by.
var issuesShape = hook.MustShape(reflect.TypeFor[gogithub.IssuesEvent](), "action", "changes.body", "issue", "issue.pull_request",
	"issue.number", "issue.labels", "installation.id", "sender.login", "sender.type")

// dashboardEditIgnored is ParseDashboardEdit's err == nil && !ok, from the
// intake's reading of the body: once the edit is a person's, of an issue's
// body, only the labels are decoded.
func dashboardEditIgnored(v *hook.View) bool {
	if !v.Fits() {
		return false
	}
	login := hook.Text(v.Last("sender.login"))
	return string(hook.Text(v.Last("action"))) != "edited" || v.Last("changes.body") == nil || v.Last("issue") == nil ||
		v.Last("issue.pull_request") != nil || hook.Int(v.Last("issue.number")) <= 0 || hook.Int(v.Last("installation.id")) <= 0 ||
		len(login) == 0 || string(hook.Text(v.Last("sender.type"))) == "Bot" || bytes.HasSuffix(login, []byte("[bot]")) || !dashboardLabelled(v)
}

// dashboardLabelled reports whether the issue carries the dashboard label.
func dashboardLabelled(v *hook.View) bool {
	var labels []*gogithub.Label
	for raw := range v.All("issue.labels") {
		if json.Unmarshal(raw, &labels) != nil {
			return false
		}
	}
	return slices.ContainsFunc(labels, func(l *gogithub.Label) bool { return l.GetName() == publish.DashboardLabel })
}

// Handle implements githubapp.EventHandler.
func (h *DashboardTick) Handle(ctx context.Context, _, deliveryID string, payload []byte) error {
	ev, ok, err := ParseDashboardEdit(payload)
	if err != nil {
		return queue.Permanent(err)
	}
	if !ok {
		return nil
	}
	repo := ev.Repo.String()
	ctx = zerolog.Ctx(ctx).With().Str("repo", repo).Int("issue", ev.Issue).Logger().WithContext(ctx)
	d, err := h.Ledger.Dashboard(ctx, repo)
	if err != nil {
		return err
	}
	if d.Issue != ev.Issue {
		zerolog.Ctx(ctx).Info().Int("dashboard", d.Issue).Msg("ignoring an edit of an issue labelled as a dashboard that is not this repository's dashboard")
		return nil
	}
	note := ""
	if len(ev.Ticks) > 0 {
		if note, err = dashboard.StartTicked(ctx, &h.Env, ev, deliveryID); err != nil {
			return err
		}
	}
	// The body is no longer pitcrew's: the refresh rewrites it, unticked.
	if err := h.Ledger.DashboardEdited(ctx, repo, note); err != nil {
		return err
	}
	// The edit's only effect is the rewrite: without it, a retry.
	return h.ScheduleDashboard(ctx, repo, ev.InstallationID)
}
