// Package dashboard keeps each repository's flaky-tests dashboard: one
// issue, rewritten from the ledger (the tests seen flaking, their runs),
// whose boxes a person ticks to start a fix.
package dashboard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/flaky"
)

// maxTests bounds the tests a dashboard reads; the renderer then
// bounds the body by its length.
const maxTests = 200

// noteShown is how long a dashboard shows a note.
const noteShown = 24 * time.Hour

// On reports whether the repository keeps a dashboard.
func On(c repoconfig.Config) bool {
	f := flaky.Of(c)
	return f.Enabled && f.Dashboard
}

// Refresh rewrites repo's dashboard issue from the ledger, under
// the dashboard's lock, opening it at the first test seen flaking. A body
// the same as the one last written is not written again.
func Refresh(ctx context.Context, b *work.Env, repoName string, inst int64) error {
	repo, err := github.ParseRepo(repoName)
	if err != nil {
		return queue.Permanent(err)
	}
	ctx = zerolog.Ctx(ctx).With().Str("repo", repo.String()).Logger().WithContext(ctx)
	gh, err := b.Clients.Installation(inst)
	if err != nil {
		return err
	}
	cfg, on, err := b.JobConfig(ctx, gh, repo, On)
	if !on {
		return err
	}
	unlock, err := b.Ledger.Lock(ctx, runs.DashboardLock(repo.String()), time.Minute, 2*time.Minute)
	if err != nil {
		return err
	}
	defer unlock()
	tests, total, err := b.Ledger.FlakyTests(ctx, repo.String(), maxTests)
	if err != nil {
		return err
	}
	predicted, err := b.Ledger.PredictedTests(ctx, repo.String())
	if err != nil {
		return err
	}
	d, err := b.Ledger.Dashboard(ctx, repo.String())
	if err != nil {
		return err
	}
	if d.Issue == 0 && total == 0 {
		return nil // predictions alone open no dashboard
	}
	note := d.Note
	expired := note != "" && b.Time().Sub(d.NoteAt) > noteShown
	if expired {
		note = ""
	}
	body := publish.RenderDashboard(publish.DashboardView{Repo: repo.String(), Tests: tests, Total: total, Note: note, Predicted: predicted,
		Owners: owners(ctx, b, gh, repo, tests), OutOfQuarantine: outOfQuarantine(tests, cfg, b.Time())})
	sum := sha256.Sum256([]byte(body))
	digest := hex.EncodeToString(sum[:16])
	if d.Issue != 0 && d.Digest == digest {
		zerolog.Ctx(ctx).Debug().Int("issue", d.Issue).Msg("the dashboard is up to date")
		return nil
	}
	if d.Issue == 0 {
		if d.Issue, err = gh.FindIssue(ctx, repo, publish.DashboardLabel, publish.DashboardMarker, b.BotLogin()); err != nil {
			return err
		}
	}
	if d.Issue != 0 {
		err = gh.EditIssueBody(ctx, repo, d.Issue, body)
		if errors.Is(err, github.ErrIssueGone) {
			zerolog.Ctx(ctx).Warn().Int("issue", d.Issue).Msg("the dashboard issue was deleted; opening a new one")
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
	zerolog.Ctx(ctx).Info().Int("issue", d.Issue).Int("tests", total).Msg("dashboard written")
	return b.Ledger.SaveDashboard(context.WithoutCancel(ctx), repo.String(), d, expired)
}

// maxOwnedFiles bounds the test files whose owners one refresh names: the
// most recently seen first (CODEOWNERS is read once; a file it does not
// cover costs a call for its last committer, cached).
const maxOwnedFiles = 20

// owners names the owners of the listed tests' files; a file GitHub did
// not answer for is left unnamed.
func owners(ctx context.Context, b *work.Env, gh github.Client, repo github.Repo, tests []runs.FlakyTest) map[string]runs.Owners {
	out, tried := map[string]runs.Owners{}, map[string]bool{}
	for _, t := range tests {
		path, _, _ := strings.Cut(t.Test(), ":")
		if tried[path] {
			continue
		}
		if len(tried) == maxOwnedFiles {
			break
		}
		tried[path] = true
		o, err := flaky.OwnersOf(ctx, b, gh, repo, path)
		if err != nil {
			// GitHub did not answer: the next refresh tries again, rather
			// than every file now.
			zerolog.Ctx(ctx).Warn().Err(err).Str("path", path).Msg("could not read a test file's owners; the dashboard does not name them")
			break
		}
		out[path] = o
	}
	return out
}

// outOfQuarantine are the listed tests whose quarantine expired before
// their fix merged (none when known flakes are not re-run).
func outOfQuarantine(tests []runs.FlakyTest, cfg repoconfig.Config, now time.Time) map[string]time.Time {
	f := flaky.Of(cfg)
	if !f.RerunKnown {
		return nil
	}
	out := map[string]time.Time{}
	for _, t := range tests {
		if end, expired := flaky.QuarantineExpired(t, now, f.QuarantineDays); expired {
			out[t.Key] = end
		}
	}
	return out
}
