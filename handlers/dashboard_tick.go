package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	gogithub "github.com/google/go-github/v66/github"

	"github.com/pitcrew/pitcrew/exunit"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
)

// DashboardTick acts on an edit of a flaky-tests dashboard: each box ticked
// by someone with write access starts a fix run of its test; the body is
// then rewritten from the ledger, which unticks the boxes and shows the runs.
type DashboardTick struct{ Base }

// Handles implements githubapp.EventHandler.
func (h *DashboardTick) Handles() []string { return []string{"issues"} }

// DashboardEdit is a person's edit of the body of an issue labelled as a
// dashboard.
type DashboardEdit struct {
	InstallationID int64
	Repo           github.Repo
	Issue          int
	Editor         string
	// Ticks are the ids of the boxes the edit ticked (publish.Ticks of the
	// new body, less those of the old); the rest of the body is never read.
	Ticks []string
}

// ParseDashboardEdit reads an issues event; ok is false unless a person
// (not a bot) edited the body of an issue carrying the dashboard label, of
// an installation.
func ParseDashboardEdit(payload []byte) (ev DashboardEdit, ok bool, err error) {
	var raw gogithub.IssuesEvent
	if err := json.Unmarshal(payload, &raw); err != nil {
		return DashboardEdit{}, false, fmt.Errorf("decoding issues event: %w", err)
	}
	is, sender := raw.GetIssue(), raw.GetSender()
	if raw.GetAction() != "edited" || raw.GetChanges().GetBody() == nil || is == nil || is.IsPullRequest() || is.GetNumber() <= 0 ||
		raw.GetInstallation().GetID() <= 0 || sender.GetLogin() == "" || sender.GetType() == "Bot" || strings.HasSuffix(sender.GetLogin(), "[bot]") ||
		!slices.ContainsFunc(is.Labels, func(l *gogithub.Label) bool { return l.GetName() == publish.DashboardLabel }) {
		return DashboardEdit{}, false, nil
	}
	repo, err := github.ParseRepo(raw.GetRepo().GetFullName())
	if err != nil {
		return DashboardEdit{}, false, err
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
	return DashboardEdit{InstallationID: raw.GetInstallation().GetID(), Repo: repo, Issue: is.GetNumber(), Editor: sender.GetLogin(),
		Ticks: ticks}, true, nil
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
	ctx = logFor(ctx).With().Str("repo", repo).Int("issue", ev.Issue).Logger().WithContext(ctx)
	d, err := h.Ledger.Dashboard(ctx, repo)
	if err != nil {
		return err
	}
	if d.Issue != ev.Issue {
		logFor(ctx).Info().Int("dashboard", d.Issue).Msg("ignoring an edit of an issue labelled as a dashboard that is not this repository's dashboard")
		return nil
	}
	note := ""
	if len(ev.Ticks) > 0 {
		if note, err = h.startTicked(ctx, ev, deliveryID); err != nil {
			return err
		}
	}
	// The body is no longer pitcrew's: the refresh rewrites it, unticked.
	if err := h.Ledger.DashboardEdited(ctx, repo, note); err != nil {
		return err
	}
	// The edit's only effect is the rewrite: without it, a retry.
	return h.scheduleDashboard(ctx, repo, ev.InstallationID)
}

// startTicked starts a fix run for each ticked test pitcrew knows, when its
// editor has write access, and says what to note on the dashboard ("" for
// nothing to note: the runs show in their rows).
func (h *DashboardTick) startTicked(ctx context.Context, ev DashboardEdit, delivery string) (string, error) {
	gh, err := h.Clients.Installation(ev.InstallationID)
	if err != nil {
		return "", err
	}
	perm, err := gh.Permission(ctx, ev.Repo, ev.Editor)
	if err != nil {
		return "", err
	}
	if perm != "admin" && perm != "write" {
		logFor(ctx).Info().Str("editor", ev.Editor).Str("permission", perm).Msg("a dashboard box ticked without write permission")
		return fmt.Sprintf("A box ticked by %s was unticked: only people with write access to this repository can start a fix from here (%s has %s access).",
			publish.Code(ev.Editor, 100), publish.Code(ev.Editor, 100), publish.Text(perm, 20)), nil
	}
	cfg, refusal, err := h.commandConfig(ctx, gh, ev.Repo)
	if refusal != "" || err != nil {
		return refusal, err
	}
	if !dashboardOn(cfg) {
		return "", nil // flaky.dashboard is off: the issue is left as it is
	}
	tests, _, err := h.Ledger.FlakyTests(ctx, ev.Repo.String(), maxDashboardTests)
	if err != nil {
		return "", err
	}
	var limited []string
	for _, t := range tests {
		if !slices.Contains(ev.Ticks, publish.TickID(t.Key)) || (t.Run != nil && t.Run.State.Live()) {
			continue // a tick for a test pitcrew does not list, or one being fixed
		}
		entry, err := h.startFromDashboard(ctx, ev, t, cfg, delivery)
		if err != nil {
			return "", err
		}
		if entry.Relation == runs.ClaimLimited {
			limited = append(limited, entry.Note)
		}
	}
	if len(limited) > 0 {
		return "Not every ticked test was started: " + publish.Text(limited[0], 200) + ".", nil
	}
	return "", nil
}

// startFromDashboard claims a fix run of a ticked test without the
// cooldown (a person asked), within the daily limit. No subject shows it:
// its row of the dashboard does.
func (h *DashboardTick) startFromDashboard(ctx context.Context, ev DashboardEdit, t runs.FlakyTest, cfg repoconfig.Config, delivery string) (runs.Entry, error) {
	ref, err := exunit.ParseTestRef(t.Test())
	if err != nil {
		logFor(ctx).Warn().Err(err).Str("key", t.Key).Msg("a dashboard test whose key names no test")
		return runs.Entry{}, nil
	}
	repo := ev.Repo.String()
	entry, _, err := h.Runs.Start(ctx, runs.Request{
		Run: runs.Run{Key: t.Key, Kind: runs.KindFlaky, InstallationID: ev.InstallationID, Repo: repo, Origin: ev.Issue,
			About: ref.String(), Delivery: delivery},
		DailyLimit:  cfg.DailyLimit,
		Input:       prompts.FlakyInput{Repo: repo, Test: ref, VerifyRuns: flakyConfig.Of(cfg).VerifyRuns},
		LastAttempt: queue.LastAttempt(ctx),
	})
	return entry, err
}
