package flaky

import (
	"context"

	"github.com/pitcrew/pitcrew/exunit"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
)

// Request is one flaky test a signal (a label, a rerun that passed) asks
// pitcrew to fix.
type Request struct {
	InstallationID int64
	Delivery       string
	Subject        runs.Subject // where the signal's answer is shown
	Ref            exunit.TestRef
	Config         repoconfig.Config
	Seen           *runs.Seen // the signal's sighting of the test, recorded with the claim
}

// Claim claims the run for one flaky test (see runs.Starter.Start).
func Claim(ctx context.Context, b *work.Env, req Request) (runs.Entry, *runs.Run, error) {
	repo, flaky := req.Subject.Repo, Of(req.Config)
	entry, started, err := b.Runs.Start(ctx, runs.Request{
		Run: runs.Run{Key: Key(repo, req.Ref), Kind: runs.KindFlaky, InstallationID: req.InstallationID,
			Repo: repo, Origin: req.Subject.Issue, About: req.Ref.String(), Delivery: req.Delivery},
		Subject: req.Subject, Cooldown: flaky.Cooldown, DailyLimit: req.Config.DailyLimit,
		Input:       prompts.FlakyInput{Repo: repo, Issue: req.Subject.Issue, Test: req.Ref, VerifyRuns: flaky.VerifyRuns},
		LastAttempt: queue.LastAttempt(ctx), Seen: req.Seen,
	})
	entry.About = req.Ref.String()
	return entry, started, err
}
