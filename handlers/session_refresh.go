package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hibiken/asynq"

	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/sandbox"
)

// SessionRefresher reads a session from the sandbox API and, once it has
// ended, records the outcome and edits the status comment of every issue
// that shows the run.
type SessionRefresher struct{ Base }

// ProcessTask implements asynq.Handler for TaskSessionRefresh.
func (h *SessionRefresher) ProcessTask(ctx context.Context, t *asynq.Task) error {
	var task queue.Refresh
	if err := json.Unmarshal(t.Payload(), &task); err != nil {
		return permanent(err)
	}
	sessionID := task.SessionID
	run, err := h.Ledger.BySession(ctx, sessionID)
	if errors.Is(err, runs.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	log := logFor(ctx).With().Str("run_id", run.ID).Str("idempotency_key", run.Key).Str("session_id", sessionID).Str("repo", run.Repo).Logger()
	ctx = log.WithContext(ctx)
	if run.State == runs.Started {
		if run, err = h.recordOutcome(ctx, run); err != nil {
			return err
		}
		if !run.State.Terminal() {
			if !task.Reconcile || h.now().Sub(run.StartedAt) <= h.maxRunAge() {
				return nil
			}
			run, err = h.Ledger.Move(ctx, run, runs.Failed, func(r *runs.Run) {
				r.Error = fmt.Sprintf("the sandbox reported no outcome within %s", h.maxRunAge())
			})
			if err != nil {
				return err
			}
		}
	}
	if run.Published {
		return nil
	}
	return h.publishOutcome(ctx, run)
}

// recordOutcome moves a started run to the state the session reports.
func (h *SessionRefresher) recordOutcome(ctx context.Context, run runs.Run) (runs.Run, error) {
	ses, err := h.Sandbox.Get(ctx, run.SessionID)
	var to runs.State
	var change func(*runs.Run)
	switch {
	case sandbox.IsPermanent(err):
		to, change = runs.Failed, func(r *runs.Run) {
			r.Error = "the sandbox could not report on the session (" + publish.Text(err.Error(), 200) + ")"
		}
	case err != nil:
		return run, err
	case ses.Status == sandbox.StatusFailed:
		to, change = runs.Failed, func(r *runs.Run) { r.Error = failureReason(ses.Result) }
	case ses.Status == sandbox.StatusCompleted && jobOf(run.Kind).Artifact != "":
		to = runs.Completed
		stored, err := h.storeReport(ctx, run.ID, ses, jobOf(run.Kind).Artifact)
		if err != nil && !sandbox.IsPermanent(err) {
			return run, err
		}
		change = func(r *runs.Run) {
			r.Report = stored
			if err != nil {
				r.Error = "its report could not be downloaded from the sandbox"
			}
		}
	case ses.Status == sandbox.StatusCompleted:
		res, perr := prompts.ParseResult(ses.Result)
		to = runs.Completed
		if perr == nil && res.Outcome == prompts.OutcomeNotReproduced {
			to = runs.NotReproduced
		}
		change = func(r *runs.Run) {
			if perr != nil {
				r.Error = "its answer had no readable result (" + publish.Text(perr.Error(), 200) + ")"
				return
			}
			if res.PRURL != "" && !strings.HasPrefix(strings.ToLower(res.PRURL), "https://github.com/"+strings.ToLower(r.Repo)+"/pull/") {
				res.PRURL = ""
				r.Error = "the agent reported a pull request outside this repository"
			}
			r.Result = &res
		}
	default:
		logFor(ctx).Info().Str("status", ses.Status).Msg("session has not ended yet")
		return run, nil
	}
	if url := publish.SafeURL(ses.SessionURL); url != "" {
		inner := change
		change = func(r *runs.Run) { inner(r); r.SessionURL = url }
	}
	moved, err := h.Ledger.Move(ctx, run, to, change)
	var te runs.ErrTransition
	if errors.As(err, &te) {
		return h.Ledger.Get(ctx, run.ID) // another worker recorded it first
	}
	if err != nil {
		return run, err
	}
	h.Metrics.Runs.WithLabelValues(string(run.Kind), string(to)).Inc()
	logFor(ctx).Info().Str("state", string(to)).Msg("run ended")
	return moved, nil
}

func (h *SessionRefresher) publishOutcome(ctx context.Context, run runs.Run) error {
	gh, err := h.Clients.Installation(run.InstallationID)
	if err != nil {
		return err
	}
	if err := h.Publish.Subjects(ctx, gh, run.ID, runs.Subject{}); err != nil {
		return err
	}
	_, err = h.Ledger.Update(ctx, run, func(r *runs.Run) error { r.Published = true; return nil })
	return err
}

func failureReason(result string) string {
	if strings.TrimSpace(result) == "" {
		return "the sandbox gave no reason"
	}
	return publish.Text(result, 300)
}

// storeReport downloads the session's artifact of that name, found through
// the session read (never a URL from a callback), and keeps it in the
// ledger as the run's report. stored is false when the session left none.
func (h *SessionRefresher) storeReport(ctx context.Context, runID string, ses sandbox.Session, artifact string) (stored bool, err error) {
	for _, a := range ses.Artifacts {
		if a.Name != artifact {
			continue
		}
		report, err := h.Sandbox.Download(ctx, a.URL)
		if err != nil {
			return false, err
		}
		return true, h.Ledger.SaveReport(ctx, runID, report)
	}
	return false, nil
}
