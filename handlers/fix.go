package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/pitcrew/pitcrew/exunit"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/sandbox"
)

// abandonedAfter is how long a run may stay queued before another signal
// takes it over (its own task retried for longer than that, or gave up).
const abandonedAfter = 15 * time.Minute

// runRequest is a signal asking for a run of any job.
type runRequest struct {
	Run        runs.Run     // Key, Kind, InstallationID, Repo, Origin, About and the job's Data
	Subject    runs.Subject // where the signal's answer is shown
	Cooldown   time.Duration
	DailyLimit int
	// Input is what the job's prompt is rendered from (prompts.Render),
	// only when this signal starts the run.
	Input any
	// OpenSubject, when set, makes the subject once the claim is known not
	// to be limited: a tracking issue is opened only for work that starts
	// or attaches. A zero subject leaves the run unsubscribed and unstarted.
	OpenSubject func(ctx context.Context, run runs.Run, claim runs.Claim) (runs.Subject, error)
}

// claimRun finds or records the run for the request's key, within the
// repository's daily limit, subscribes the subject to it and, if this
// signal owns it, starts its session; started reports whether it did.
func (b *Base) claimRun(ctx context.Context, req runRequest) (entry runs.Entry, started bool, err error) {
	kind, job := string(req.Run.Kind), jobOf(req.Run.Kind)
	entry = runs.Entry{Cooldown: req.Cooldown}
	run, claim, err := b.Ledger.Claim(ctx, req.Run, req.Cooldown, req.DailyLimit)
	if err != nil {
		return entry, false, err
	}
	entry.Relation = claim
	if claim != runs.ClaimLimited && run.InstallationID != req.Run.InstallationID {
		// Only the installation that owns a run may see or steer it.
		logFor(ctx).Warn().Str("run_id", run.ID).Msg("a signal from another installation named this run; ignored")
		entry.Relation, entry.Note = runs.ClaimLimited, "not started: the run for this belongs to another installation"
		return entry, false, nil
	}
	if claim == runs.ClaimLimited {
		b.Metrics.Runs.WithLabelValues(kind, string(claim)).Inc()
		entry.Note = fmt.Sprintf("not started: the daily limit of %d runs for this repository is reached", req.DailyLimit)
		return entry, false, nil
	}
	// The signal that started a run stays its owner: a retried task, or the
	// label added again to the same issue, is not "attached to another run".
	// A run left queued by a task that gave up is taken over by the next
	// signal; the run's idempotency key keeps that to one session.
	owner := run.Delivery == req.Run.Delivery || (req.Subject.Issue != 0 && run.Repo == req.Run.Repo && run.Origin == req.Subject.Issue)
	abandoned := run.State == runs.Queued && b.now().Sub(run.CreatedAt) > abandonedAfter
	if claim == runs.ClaimAttached && (owner || abandoned) {
		entry.Relation = runs.ClaimNew
	} else {
		b.Metrics.Runs.WithLabelValues(kind, string(claim)).Inc()
	}
	entry.RunID = run.ID
	log := logFor(ctx).With().Str("run_id", run.ID).Str("idempotency_key", run.Key).Str("claim", string(entry.Relation)).Logger()
	log.Info().Msg("claimed run")
	if req.OpenSubject != nil {
		if req.Subject, err = req.OpenSubject(ctx, run, entry.Relation); err != nil || req.Subject == (runs.Subject{}) {
			return entry, false, err
		}
	}
	if err := b.Ledger.Subscribe(ctx, run.ID, req.Subject); err != nil {
		return entry, false, err
	}
	if run.State != runs.Queued || entry.Relation != runs.ClaimNew {
		return entry, false, nil
	}

	prompt, err := prompts.Render(job.Prompt, req.Input)
	if err != nil {
		return entry, false, b.failRun(ctx, run, "pitcrew could not write the agent's instructions")
	}
	ses, err := b.Sandbox.Start(ctx, run.ID, prompt, "https://github.com/"+run.Repo, job.Connections)
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
		return entry, true, b.failRun(ctx, run, why)
	}
	if _, err := b.Ledger.Move(ctx, run, runs.Started, func(r *runs.Run) {
		r.SessionID, r.ExecutionID, r.SessionURL = ses.ID, ses.ExecutionID, safeURL(ses.SessionURL)
	}); err != nil && !errors.As(err, new(runs.ErrTransition)) {
		return entry, false, err // the retry starts again with the same key: same session
	}
	b.Metrics.Runs.WithLabelValues(kind, "started").Inc()
	log.Info().Str("session_id", ses.ID).Msg("started sandbox session")
	return entry, true, nil
}

// fixRequest is one flaky test a signal (a label, a rerun that passed)
// asks pitcrew to fix.
type fixRequest struct {
	InstallationID int64
	Delivery       string
	Subject        runs.Subject // where the signal's answer is shown
	Ref            exunit.TestRef
	Config         repoconfig.Config
}

// claimFix claims the run for one flaky test (see claimRun).
func (b *Base) claimFix(ctx context.Context, req fixRequest) (runs.Entry, bool, error) {
	repo, flaky := req.Subject.Repo, flakyConfig.Of(req.Config)
	entry, started, err := b.claimRun(ctx, runRequest{
		Run: runs.Run{Key: FlakyKey(repo, req.Ref), Kind: runs.KindFlaky, InstallationID: req.InstallationID,
			Repo: repo, Origin: req.Subject.Issue, About: req.Ref.String(), Delivery: req.Delivery},
		Subject: req.Subject, Cooldown: flaky.Cooldown, DailyLimit: req.Config.DailyLimit,
		Input: prompts.FlakyInput{Repo: repo, Issue: req.Subject.Issue, Test: req.Ref, VerifyRuns: flaky.VerifyRuns},
	})
	entry.About = req.Ref.String()
	return entry, started, err
}

// failRun records that a queued run could not start. A run another worker
// has started meanwhile is left alone.
func (b *Base) failRun(ctx context.Context, run runs.Run, why string) error {
	_, err := b.Ledger.Update(ctx, run, func(r *runs.Run) error {
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
		b.Metrics.Runs.WithLabelValues(string(run.Kind), "failed").Inc()
	}
	return err
}

var errNotQueued = errors.New("run is no longer queued")

// safeURL keeps only http(s) links with nothing Markdown could read as
// more than a link (no space of any kind, so no @mention after a tab; no
// brackets, quotes or backticks), so a sandbox answer or an alert cannot
// place a javascript: or other link, or a mention, in a comment.
func safeURL(u string) string {
	if (strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://")) && !strings.ContainsAny(u, "()<>[]`\"'") &&
		!strings.ContainsFunc(u, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return u
	}
	return ""
}
