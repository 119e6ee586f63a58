package runs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/internal/metrics"
	"github.com/pitcrew/pitcrew/internal/weburl"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/sandbox"
)

// abandonedAfter is how long a run may stay queued before another signal
// takes it over (its own task retried for longer than that, or gave up).
const abandonedAfter = 15 * time.Minute

// Request is a signal asking for a run of any job.
type Request struct {
	Run        Run     // Key, Kind, InstallationID, Repo, Origin, About and the job's Data
	Subject    Subject // where the signal's answer is shown
	Cooldown   time.Duration
	DailyLimit int
	// Input is what the job's prompt is rendered from (prompts.Render),
	// only when this signal starts the run.
	Input any
	// OpenSubject, when set, makes the subject once the claim is known not
	// to be limited: a tracking issue is opened only for work that starts
	// or attaches. A zero subject leaves the run unsubscribed and unstarted.
	// Without OpenSubject, a zero Subject starts a run no subject shows
	// (one shown where another run is).
	OpenSubject func(ctx context.Context, run Run, claim Claim) (Subject, error)
	// LastAttempt says the signal's task will not be retried: a sandbox
	// that cannot be reached then fails the run instead of the task.
	LastAttempt bool
	// Seen, when set, is the signal's sighting of the test, recorded with
	// the claim (Ledger.ClaimSeen); the entry carries its count.
	Seen *Seen
}

// priorFixed is a prompt input that can name the merged fix the trouble
// came back after (prompts.FlakyInput).
type priorFixed interface {
	WithPriorFix(url string, mergedAt time.Time) any
}

// Sandbox starts agent sessions.
type Sandbox interface {
	Start(ctx context.Context, idempotencyKey, prompt, repoURL string, connections []string) (sandbox.Session, error)
}

// Starter claims runs and starts their sessions: one session per run,
// however many signals, replicas and retries ask for it.
type Starter struct {
	Ledger  *Ledger
	Sandbox Sandbox
	Jobs    func(Kind) Job // the job of a kind: its prompt and connections
	Metrics *metrics.Metrics
	// SafeURL keeps the session link only if it is safe to show.
	SafeURL func(string) string
	Now     func() time.Time // default time.Now
}

func (s *Starter) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Start finds or records the run for the request's key, within the
// repository's daily limit, subscribes the subject to it and, if this
// signal owns it, starts its session. started is the run as this signal
// left it (started, or failed to start), with the subjects that showed it
// then (Ledger.SubjectsOf); nil when the signal started nothing.
func (s *Starter) Start(ctx context.Context, req Request) (entry Entry, started *Run, err error) {
	kind, job := string(req.Run.Kind), s.Jobs(req.Run.Kind)
	entry = Entry{Cooldown: req.Cooldown}
	// A subject known now is subscribed by the claim itself; one an
	// OpenSubject makes is subscribed once made.
	subscriber := req.Subject
	if req.OpenSubject != nil {
		subscriber = Subject{}
	}
	run, claim, sighting, err := s.Ledger.ClaimSeen(ctx, req.Run, req.Cooldown, req.DailyLimit, subscriber, req.Seen)
	if err != nil {
		return entry, nil, err
	}
	entry.Sightings = sighting.Count
	entry.Relation = claim
	if claim != ClaimLimited && run.InstallationID != req.Run.InstallationID {
		// Only the installation that owns a run may see or steer it.
		zerolog.Ctx(ctx).Warn().Str("run_id", run.ID).Msg("a signal from another installation named this run; ignored")
		entry.Relation, entry.Note = ClaimLimited, "not started: the run for this belongs to another installation"
		return entry, nil, nil
	}
	if claim == ClaimLimited {
		s.Metrics.Runs.WithLabelValues(kind, string(claim)).Inc()
		entry.Note = fmt.Sprintf("not started: the daily limit of %d runs for this repository is reached", req.DailyLimit)
		return entry, nil, nil
	}
	// The signal that started a run stays its owner: a retried task, or the
	// label added again to the same issue, is not "attached to another run".
	// A run left queued by a task that gave up is taken over by the next
	// signal; the run's idempotency key keeps that to one session.
	owner := run.Delivery == req.Run.Delivery || (req.Subject.Issue != 0 && run.Repo == req.Run.Repo && run.Origin == req.Subject.Issue)
	abandoned := run.State == Queued && s.now().Sub(run.CreatedAt) > abandonedAfter
	if claim == ClaimAttached && (owner || abandoned) {
		entry.Relation = ClaimNew
	} else {
		s.Metrics.Runs.WithLabelValues(kind, string(claim)).Inc()
	}
	entry.RunID = run.ID
	log := zerolog.Ctx(ctx).With().Str("run_id", run.ID).Str("idempotency_key", run.Key).Str("claim", string(entry.Relation)).Logger()
	log.Info().Msg("claimed run")
	if req.OpenSubject != nil {
		if req.Subject, err = req.OpenSubject(ctx, run, entry.Relation); err != nil || req.Subject == (Subject{}) {
			return entry, nil, err
		}
	}
	if subscriber == (Subject{}) && req.Subject != (Subject{}) {
		if err := s.Ledger.Subscribe(ctx, run.ID, req.Subject); err != nil {
			return entry, nil, err
		}
	}
	if run.State != Queued || entry.Relation != ClaimNew {
		return entry, nil, nil
	}

	input := req.Input
	if p, ok := input.(priorFixed); ok && run.PriorFix != nil {
		input = p.WithPriorFix(run.PriorFix.URL, run.PriorFix.MergedAt)
	}
	prompt, err := prompts.Render(job.Prompt, input)
	if err != nil {
		failed, err := s.fail(ctx, run, "pitcrew could not write the agent's instructions")
		return entry, failed, err
	}
	// A status lock taken ahead by an earlier start (another test of the
	// same signal) is not held through this one (see WithLocksAhead).
	ReleaseLocksAhead(ctx)
	ses, err := s.Sandbox.Start(ctx, run.ID, prompt, weburl.Repo(run.Repo), job.Connections)
	// What follows must be recorded even if the task's time is up.
	ctx = context.WithoutCancel(ctx)
	if err != nil {
		if !sandbox.IsPermanent(err) && !req.LastAttempt {
			return entry, nil, s.wait(ctx, run, err)
		}
		log.Error().Err(err).Msg("could not start the sandbox session")
		why := "the sandbox could not be reached after several attempts"
		var perm *sandbox.PermanentError
		if errors.As(err, &perm) {
			why = fmt.Sprintf("the sandbox refused to start it (HTTP %d)", perm.Status)
		}
		failed, err := s.fail(ctx, run, why)
		return entry, failed, err
	}
	// The subject shows the run next: its status lock rides with the write.
	run, err = s.Ledger.UpdateShowing(ctx, run, func(r *Run) error {
		r.State, r.SessionID, r.ExecutionID, r.SessionURL = Started, ses.ID, ses.ExecutionID, s.SafeURL(ses.SessionURL)
		r.Waiting = ""
		return nil
	}, req.Subject)
	if errors.As(err, new(ErrTransition)) {
		return entry, nil, nil // another worker moved it on; it updates the subjects
	}
	if err != nil {
		return entry, nil, err // the retry starts again with the same key: same session
	}
	s.Metrics.Runs.WithLabelValues(kind, "started").Inc()
	log.Info().Str("session_id", ses.ID).Msg("started sandbox session")
	return entry, &run, nil
}

// ErrSandboxWaiting is a start the sandbox did not answer, to be tried
// again: the run stays queued, its Waiting says why, and the caller may
// show that before it returns the error for its task's retry.
var ErrSandboxWaiting = errors.New("the sandbox did not start the session; trying again")

// wait records on a queued run why its session did not start yet.
func (s *Starter) wait(ctx context.Context, run Run, cause error) error {
	why := sandbox.Describe(cause) + " at " + s.now().UTC().Format("15:04") + " UTC"
	_, err := s.Ledger.Update(ctx, run, func(r *Run) error {
		if r.State != Queued {
			return errNotQueued
		}
		r.Waiting = why
		return nil
	})
	if err != nil && !errors.Is(err, errNotQueued) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrSandboxWaiting, cause)
}

// fail records that a queued run could not start, and returns it failed.
// A run another worker has started meanwhile is left alone (nil, nil).
func (s *Starter) fail(ctx context.Context, run Run, why string) (*Run, error) {
	failed, err := s.Ledger.Update(ctx, run, func(r *Run) error {
		if r.State != Queued {
			return errNotQueued
		}
		r.State, r.Error = Failed, why
		return nil
	})
	if errors.Is(err, errNotQueued) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s.Metrics.Runs.WithLabelValues(string(run.Kind), "failed").Inc()
	return &failed, nil
}

var errNotQueued = errors.New("run is no longer queued")
