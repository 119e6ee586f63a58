package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
)

// DashboardScheduler asks for a refresh of a repository's flaky-tests
// dashboard. The wiring coalesces the requests of a few seconds into one
// refresh, so a burst of signals makes one edit, not one per signal.
type DashboardScheduler interface {
	ScheduleDashboard(ctx context.Context, repo string, inst int64) error
}

// dashboardChanged asks for a refresh of repo's dashboard. The signal's
// own work is done by then: a refresh that cannot be scheduled is logged,
// and the next signal, or the periodic refresh, schedules one. (An edit of
// the dashboard itself has nothing else to do: DashboardTick retries.)
func (b *Base) dashboardChanged(ctx context.Context, repo string, inst int64) {
	if err := b.scheduleDashboard(ctx, repo, inst); err != nil {
		logFor(ctx).Warn().Err(err).Msg("could not schedule the dashboard's refresh; the next signal will")
	}
}

func (b *Base) scheduleDashboard(ctx context.Context, repo string, inst int64) error {
	if b.Dashboards == nil {
		return nil
	}
	return b.Dashboards.ScheduleDashboard(ctx, repo, inst)
}

// runShown refreshes the dashboard of a flaky run's repository whenever
// the run's subjects are shown again (it started, ended, its pull request
// moved).
func (b *Base) runShown(ctx context.Context, run runs.Run) {
	if j, ok := jobByKind(run.Kind); ok && j.Dashboard {
		b.dashboardChanged(ctx, run.Repo, run.InstallationID)
	}
}

// maxDashboardTests bounds the tests a dashboard reads; the renderer then
// bounds the body by its length.
const maxDashboardTests = 200

// noteShown is how long a dashboard shows a note.
const noteShown = 24 * time.Hour

func dashboardOn(c repoconfig.Config) bool {
	f := flakyConfig.Of(c)
	return f.Enabled && f.Dashboard
}

// RefreshDashboard rewrites repo's dashboard issue from the ledger, under
// the dashboard's lock, opening it at the first test seen flaking. A body
// the same as the one last written is not written again.
func (b *Base) RefreshDashboard(ctx context.Context, repoName string, inst int64) error {
	repo, err := github.ParseRepo(repoName)
	if err != nil {
		return queue.Permanent(err)
	}
	ctx = logFor(ctx).With().Str("repo", repo.String()).Logger().WithContext(ctx)
	gh, err := b.Clients.Installation(inst)
	if err != nil {
		return err
	}
	if _, on, err := b.jobConfig(ctx, gh, repo, dashboardOn); !on {
		return err
	}
	unlock, err := b.Ledger.Lock(ctx, runs.DashboardLock(repo.String()), time.Minute, 2*time.Minute)
	if err != nil {
		return err
	}
	defer unlock()
	tests, total, err := b.Ledger.FlakyTests(ctx, repo.String(), maxDashboardTests)
	if err != nil {
		return err
	}
	d, err := b.Ledger.Dashboard(ctx, repo.String())
	if err != nil {
		return err
	}
	if d.Issue == 0 && total == 0 {
		return nil
	}
	note := d.Note
	expired := note != "" && b.now().Sub(d.NoteAt) > noteShown
	if expired {
		note = ""
	}
	body := publish.RenderDashboard(publish.DashboardView{Repo: repo.String(), Tests: tests, Total: total, Note: note})
	sum := sha256.Sum256([]byte(body))
	digest := hex.EncodeToString(sum[:16])
	if d.Issue != 0 && d.Digest == digest {
		logFor(ctx).Debug().Int("issue", d.Issue).Msg("the dashboard is up to date")
		return nil
	}
	if d.Issue == 0 {
		if d.Issue, err = gh.FindIssue(ctx, repo, publish.DashboardLabel, publish.DashboardMarker, b.botLogin()); err != nil {
			return err
		}
	}
	if d.Issue != 0 {
		err = gh.EditIssueBody(ctx, repo, d.Issue, body)
		if errors.Is(err, github.ErrIssueGone) {
			logFor(ctx).Warn().Int("issue", d.Issue).Msg("the dashboard issue was deleted; opening a new one")
			d.Issue = 0
		} else if err != nil {
			return err
		}
	}
	if d.Issue == 0 {
		// A create that times out after GitHub made the issue is found by
		// its marker on the retry, not opened twice.
		if d.Issue, err = gh.CreateIssue(ctx, repo, publish.DashboardTitle, body, []string{publish.DashboardLabel}); err != nil {
			return err
		}
	}
	d.Digest, d.Installation = digest, inst
	logFor(ctx).Info().Int("issue", d.Issue).Int("tests", total).Msg("dashboard written")
	return b.Ledger.SaveDashboard(context.WithoutCancel(ctx), repo.String(), d, expired)
}
