package runs

import (
	"bytes"
	"context"
	"errors"
	"strings"

	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/internal/metrics"
	"github.com/pitcrew/pitcrew/internal/weburl"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/sandbox"
)

// SessionReader reads sessions and downloads their artifacts.
type SessionReader interface {
	Get(ctx context.Context, id string) (sandbox.Session, error)
	Download(ctx context.Context, artifactURL string) ([]byte, error)
}

// Finisher records the outcome a session reports: read from the sandbox
// API (a callback is only a hint), the answer's result block parsed, the
// job's artifact kept as the run's report.
type Finisher struct {
	Ledger  *Ledger
	Sandbox SessionReader
	Jobs    func(Kind) Job // the job of a kind: its artifact
	// Follows, when set, is the pull request an ended run's caller follows
	// next (0: none): its lock is tried with the outcome's write.
	Follows func(Run) int
	Metrics *metrics.Metrics
	// Text and SafeURL make what the sandbox says safe to show, before it
	// is stored.
	Text    func(s string, max int) string
	SafeURL func(string) string
}

// Record moves a started run to the state its session reports; a session
// still running leaves it as it is. The write that records the outcome
// also marks the run Published, as its caller shows it next, and keeps
// the caller's task (RecordedBy, taskID): that task shows it again if it
// runs again. recorded says this call wrote the outcome.
func (f *Finisher) Record(ctx context.Context, run Run, taskID string) (_ Run, recorded bool, err error) {
	ses, err := f.Sandbox.Get(ctx, run.SessionID)
	var to State
	var change func(*Run)
	switch {
	case sandbox.IsPermanent(err):
		to, change = Failed, func(r *Run) {
			r.Error = "the sandbox could not report on the session (" + f.Text(err.Error(), 200) + ")"
		}
	case err != nil:
		return run, false, err
	case ses.Status == sandbox.StatusFailed && len(run.FollowUps) > 0:
		// A follow-up's turn failed: the run keeps what it had answered.
		to, change = run.FollowUps[len(run.FollowUps)-1].From, func(r *Run) {
			r.FollowUps[len(r.FollowUps)-1].Error = f.failureReason(ses.Result)
		}
	case ses.Status == sandbox.StatusFailed:
		to, change = Failed, func(r *Run) { r.Error, r.Answer = f.failureReason(ses.Result), prompts.KeepAnswer(ses.Result) }
	case ses.Status == sandbox.StatusCompleted && f.Jobs(run.Kind).Artifact != "":
		to = Completed
		stored, err := f.storeReport(ctx, run.ID, ses, f.Jobs(run.Kind).Artifact)
		if err != nil && !sandbox.IsPermanent(err) {
			return run, false, err
		}
		if derr := f.storeData(ctx, run.ID, ses, f.Jobs(run.Kind).Data); derr != nil && !sandbox.IsPermanent(derr) {
			return run, false, derr
		}
		change = func(r *Run) {
			if len(r.FollowUps) > 0 {
				// A follow-up's turn (open the change as a pull request)
				// keeps the first turn's report unless it made a new one.
				r.Answer, r.AnswerPRs = prompts.KeepAnswer(ses.Result), openedPull(ses.Result, *r)
				r.Report = r.Report || stored
				return
			}
			r.Report = stored
			if !stored {
				r.Answer = prompts.KeepAnswer(ses.Result)
			}
			if err != nil {
				r.Error = "its report could not be downloaded from the sandbox"
			}
		}
	case ses.Status == sandbox.StatusCompleted:
		measured, err := f.readRunLog(ctx, ses, f.Jobs(run.Kind).RunLog)
		if err != nil {
			return run, false, err
		}
		res, perr := prompts.ParseResult(ses.Result)
		to = Completed
		if perr == nil && res.Outcome == prompts.OutcomeNotReproduced {
			to = NotReproduced
		}
		change = func(r *Run) {
			r.Answer, r.Measured = prompts.KeepAnswer(ses.Result), measured
			if perr != nil {
				// Agents do not always end with the block: keep what the
				// text says, the pull requests it links and the answer.
				r.Error = "its answer had no readable result block (" + f.Text(perr.Error(), 200) + ")"
				r.AnswerPRs = prompts.PullRequestLinks(ses.Result, r.Repo)
				return
			}
			if res.PRURL != "" && !strings.HasPrefix(strings.ToLower(res.PRURL), strings.ToLower(weburl.PullPrefix(r.Repo))) {
				res.PRURL = ""
				r.Error = "the agent reported a pull request outside this repository"
			}
			r.Result = &res
		}
	default:
		zerolog.Ctx(ctx).Info().Str("status", ses.Status).Msg("session has not ended yet")
		return run, false, nil
	}
	if url := f.SafeURL(ses.SessionURL); url != "" {
		inner := change
		change = func(r *Run) { inner(r); r.SessionURL = url }
	}
	// What the session said is the outcome of the turn read: not of a
	// follow-up sent since (the run was started again meanwhile).
	turn := len(run.FollowUps)
	moved, err := f.Ledger.update(ctx, run, func(r *Run) error {
		if len(r.FollowUps) != turn || r.State != Started {
			return errAnotherTurn
		}
		r.State, r.Published, r.RecordedBy = to, true, taskID
		change(r)
		return nil
	}, writeAhead{follow: f.Follows})
	var te ErrTransition
	if errors.As(err, &te) || errors.Is(err, errAnotherTurn) {
		// Another worker recorded it first, or a follow-up started another turn.
		got, err := f.Ledger.Get(ctx, run.ID)
		return got, false, err
	}
	if err != nil {
		return run, false, err
	}
	f.Metrics.Runs.WithLabelValues(string(run.Kind), string(to)).Inc()
	zerolog.Ctx(ctx).Info().Str("state", string(to)).Msg("run ended")
	return moved, true, nil
}

// openedPull is the pull request a follow-up's answer opened: the last it
// links to that is not the one the run started from (which an answer about
// it names too).
func openedPull(answer string, r Run) []string {
	links := prompts.PullRequestLinks(answer, r.Repo)
	for i := len(links) - 1; i >= 0; i-- {
		if weburl.PullNumber(links[i], r.Repo) != r.Origin {
			return links[i : i+1]
		}
	}
	return nil
}

var errAnotherTurn = errors.New("runs: the session was read for an earlier turn, or its outcome recorded already")

func (f *Finisher) failureReason(result string) string {
	if strings.TrimSpace(result) == "" {
		return "the sandbox gave no reason"
	}
	return f.Text(result, 300)
}

// storeReport downloads the session's artifact of that name, found through
// the session read (never a URL from a callback), and keeps it in the
// ledger as the run's report. stored is false when the session left none.
func (f *Finisher) storeReport(ctx context.Context, runID string, ses sandbox.Session, artifact string) (stored bool, err error) {
	for _, a := range ses.Artifacts {
		if a.Name != artifact {
			continue
		}
		report, err := f.Sandbox.Download(ctx, a.URL)
		if errors.Is(err, sandbox.ErrArtifactCut) {
			report, err = append(report, "\n\n(pitcrew: the report is longer than it reads, and is cut here.)\n"...), nil
		}
		if err != nil {
			return false, err
		}
		return true, f.Ledger.SaveReport(ctx, runID, report)
	}
	return false, nil
}

// storeData downloads the session's machine-readable artifact of that
// name, if the job keeps one and the session left it, and keeps it beside
// the report. One cut short is not kept: its reader would find it
// malformed, and says it is missing instead.
func (f *Finisher) storeData(ctx context.Context, runID string, ses sandbox.Session, name string) error {
	if name == "" {
		return nil
	}
	for _, a := range ses.Artifacts {
		if a.Name != name {
			continue
		}
		data, err := f.Sandbox.Download(ctx, a.URL)
		if errors.Is(err, sandbox.ErrArtifactCut) {
			zerolog.Ctx(ctx).Warn().Str("artifact", name).Msg("the run's data artifact is larger than pitcrew reads; not kept")
			return nil
		}
		if err != nil {
			return err
		}
		return f.Ledger.SaveData(ctx, runID, data)
	}
	return nil
}

// readRunLog downloads and counts the session's run log (found through the
// session read, like any artifact); nil when the job keeps none or the
// session left none. Only a download that may work on a retry is an error.
func (f *Finisher) readRunLog(ctx context.Context, ses sandbox.Session, name string) (*evidence.Measured, error) {
	if name == "" {
		return nil, nil
	}
	for _, a := range ses.Artifacts {
		if a.Name != name {
			continue
		}
		log, err := f.Sandbox.Download(ctx, a.URL)
		cut := errors.Is(err, sandbox.ErrArtifactCut)
		if cut {
			err = nil // counted up to the cut, and said so (Measured.Truncated)
		}
		if sandbox.IsPermanent(err) {
			zerolog.Ctx(ctx).Warn().Err(err).Msg("the run's evidence log could not be downloaded")
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		m, err := evidence.ParseRunLog(bytes.NewReader(log))
		if err != nil {
			return nil, nil
		}
		m.Truncated = m.Truncated || cut
		return &m, nil
	}
	return nil, nil
}
