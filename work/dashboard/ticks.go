package dashboard

import (
	"context"
	"fmt"
	"slices"

	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/exunit"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/flaky"
)

// Edit is a person's edit of the body of an issue labelled as a
// dashboard.
type Edit struct {
	InstallationID int64
	Repo           github.Repo
	Issue          int
	Editor         string
	// Ticks are the ids of the boxes the edit ticked (publish.Ticks of the
	// new body, less those of the old); the rest of the body is never read.
	Ticks []string
}

// StartTicked starts a fix run for each ticked test pitcrew knows, when its
// editor has write access, and says what to note on the dashboard ("" for
// nothing to note: the runs show in their rows).
func StartTicked(ctx context.Context, b *work.Env, ev Edit, delivery string) (string, error) {
	gh, err := b.Clients.Installation(ev.InstallationID)
	if err != nil {
		return "", err
	}
	perm, err := gh.Permission(ctx, ev.Repo, ev.Editor)
	if err != nil {
		return "", err
	}
	if !work.MayCommand(perm) {
		zerolog.Ctx(ctx).Info().Str("editor", ev.Editor).Str("permission", perm).Msg("a dashboard box ticked without write permission")
		return fmt.Sprintf("A box ticked by %s was unticked: only people with write access to this repository can start a fix from here (%s has %s access).",
			publish.Code(ev.Editor, 100), publish.Code(ev.Editor, 100), publish.Text(perm, 20)), nil
	}
	cfg, refusal, err := b.CommandConfig(ctx, gh, ev.Repo)
	if refusal != "" || err != nil {
		return refusal, err
	}
	if !On(cfg) {
		return "", nil // flaky.dashboard is off: the issue is left as it is
	}
	tests, _, err := b.Ledger.FlakyTests(ctx, ev.Repo.String(), maxTests)
	if err != nil {
		return "", err
	}
	predicted, err := b.Ledger.PredictedTests(ctx, ev.Repo.String())
	if err != nil {
		return "", err
	}
	for _, p := range predicted {
		if !slices.ContainsFunc(tests, func(t runs.FlakyTest) bool { return t.Key == p.Key }) {
			tests = append(tests, runs.FlakyTest{Key: p.Key, Run: p.Run}) // a predicted row, not seen yet
		}
	}
	var limited []string
	for _, t := range tests {
		if !slices.Contains(ev.Ticks, publish.TickID(t.Key)) || (t.Run != nil && t.Run.State.Live()) {
			continue // a tick for a test pitcrew does not list, or one being fixed
		}
		entry, err := startFromDashboard(ctx, b, ev, t, cfg, delivery)
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
func startFromDashboard(ctx context.Context, b *work.Env, ev Edit, t runs.FlakyTest, cfg repoconfig.Config, delivery string) (runs.Entry, error) {
	ref, err := exunit.ParseTestRef(t.Test())
	if err != nil {
		zerolog.Ctx(ctx).Warn().Err(err).Str("key", t.Key).Msg("a dashboard test whose key names no test")
		return runs.Entry{}, nil
	}
	repo := ev.Repo.String()
	entry, _, err := b.Runs.Start(ctx, runs.Request{
		Run: runs.Run{Key: t.Key, Kind: runs.KindFlaky, InstallationID: ev.InstallationID, Repo: repo, Origin: ev.Issue,
			About: ref.String(), Delivery: delivery},
		DailyLimit:  cfg.DailyLimit,
		Input:       prompts.FlakyInput{Repo: repo, Test: ref, VerifyRuns: flaky.Of(cfg).VerifyRuns},
		LastAttempt: queue.LastAttempt(ctx),
	})
	return entry, err
}
