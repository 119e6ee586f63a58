package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pitcrew/pitcrew/exunit"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/sandbox"
)

// abandonedAfter is how long a run may stay queued before another signal
// takes it over (its own task retried for longer than that, or gave up).
const abandonedAfter = 15 * time.Minute

// fixRequest is one flaky test a signal (a label, a rerun that passed)
// asks pitcrew to fix.
type fixRequest struct {
	InstallationID int64
	Delivery       string
	Subject        runs.Subject // where the signal's answer is shown
	Ref            exunit.TestRef
	Config         RepoConfig
}

// claimFix finds or records the run for one test, within the repository's
// daily limit, subscribes the subject to it and, if this signal owns it,
// starts its session; started reports whether it did.
func (b *Base) claimFix(ctx context.Context, req fixRequest) (entry runs.Entry, started bool, err error) {
	repo := req.Subject.Repo
	key := FlakyKey(repo, req.Ref)
	entry = runs.Entry{Test: req.Ref.String(), Cooldown: req.Config.Flaky.Cooldown}
	run, claim, err := b.Ledger.Claim(ctx, runs.Run{
		Key: key, Kind: runs.KindFlaky, InstallationID: req.InstallationID,
		Repo: repo, Issue: req.Subject.Issue, Test: req.Ref.String(), Delivery: req.Delivery,
	}, req.Config.Flaky.Cooldown, req.Config.DailyLimit)
	if err != nil {
		return entry, false, err
	}
	entry.Relation = claim
	if claim == runs.ClaimLimited {
		b.Metrics.Runs.WithLabelValues(string(runs.KindFlaky), string(claim)).Inc()
		entry.Note = fmt.Sprintf("not started: the daily limit of %d runs for this repository is reached", req.Config.DailyLimit)
		return entry, false, nil
	}
	// The signal that started a run stays its owner: a retried task, or the
	// label added again to the same issue, is not "attached to another run".
	// A run left queued by a task that gave up is taken over by the next
	// signal; the run's idempotency key keeps that to one session.
	owner := run.Delivery == req.Delivery || (req.Subject.Issue != 0 && run.Repo == repo && run.Issue == req.Subject.Issue)
	abandoned := run.State == runs.Queued && b.now().Sub(run.CreatedAt) > abandonedAfter
	if claim == runs.ClaimAttached && (owner || abandoned) {
		entry.Relation = runs.ClaimNew
	} else {
		b.Metrics.Runs.WithLabelValues(string(runs.KindFlaky), string(claim)).Inc()
	}
	entry.RunID = run.ID
	log := logFor(ctx).With().Str("run_id", run.ID).Str("idempotency_key", key).Str("claim", string(entry.Relation)).Logger()
	log.Info().Msg("claimed run")
	if err := b.Ledger.Subscribe(ctx, run.ID, req.Subject); err != nil {
		return entry, false, err
	}
	if run.State != runs.Queued || entry.Relation != runs.ClaimNew {
		return entry, false, nil
	}

	prompt, err := prompts.Flaky(prompts.FlakyInput{Repo: repo, Issue: req.Subject.Issue, Test: req.Ref, VerifyRuns: req.Config.Flaky.VerifyRuns})
	if err != nil {
		return entry, false, b.failRun(ctx, run.ID, "pitcrew could not write the agent's instructions")
	}
	ses, err := b.Sandbox.Start(ctx, run.ID, prompt, "https://github.com/"+repo, nil)
	// What follows must be recorded even if the task's time is up.
	ctx = context.WithoutCancel(ctx)
	if err != nil {
		if !sandbox.IsPermanent(err) && !lastAttempt(ctx) {
			return entry, false, err
		}
		log.Error().Err(err).Msg("could not start the sandbox session")
		why := "the sandbox could not be reached after several attempts"
		var perm *sandbox.PermanentError
		if errors.As(err, &perm) {
			why = fmt.Sprintf("the sandbox refused to start it (HTTP %d)", perm.Status)
		}
		return entry, true, b.failRun(ctx, run.ID, why)
	}
	if _, err := b.Ledger.Move(ctx, run.ID, runs.Started, func(r *runs.Run) {
		r.SessionID, r.ExecutionID, r.SessionURL = ses.ID, ses.ExecutionID, safeURL(ses.SessionURL)
	}); err != nil && !errors.As(err, new(runs.ErrTransition)) {
		return entry, false, err // the retry starts again with the same key: same session
	}
	b.Metrics.Runs.WithLabelValues(string(runs.KindFlaky), "started").Inc()
	log.Info().Str("session_id", ses.ID).Msg("started sandbox session")
	return entry, true, b.schedulePoll(ctx, ses.ID, 1)
}

// failRun records that a queued run could not start. A run another worker
// has started meanwhile is left alone.
func (b *Base) failRun(ctx context.Context, id, why string) error {
	_, err := b.Ledger.Update(ctx, id, func(r *runs.Run) error {
		if r.State != runs.Queued {
			return errNotQueued
		}
		r.State, r.Error = runs.Failed, why
		return nil
	})
	if errors.Is(err, errNotQueued) {
		return nil
	}
	if err == nil {
		b.Metrics.Runs.WithLabelValues(string(runs.KindFlaky), "failed").Inc()
	}
	return err
}

var errNotQueued = errors.New("run is no longer queued")

// safeURL keeps only http(s) links, so a sandbox answer cannot place a
// javascript: or other link in a comment.
func safeURL(u string) string {
	if (strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://")) && !strings.ContainsAny(u, " ()<>[]\n") {
		return u
	}
	return ""
}
