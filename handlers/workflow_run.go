package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/google/go-github/v66/github"

	"github.com/pitcrew/pitcrew/exunit"
	"github.com/pitcrew/pitcrew/runs"
)

// maxLogBytes bounds one job log read; the parser streams it.
const maxLogBytes = 256 << 20

// maxEarlierAttempts is how many failed attempts before the passing one
// pitcrew reads.
const maxEarlierAttempts = 3

// WorkflowRun turns a GitHub Actions run that failed and then passed on
// re-run into flaky-test fixes: it reads the failed attempts' job logs and
// reports in a check run.
type WorkflowRun struct{ Base }

// Handles implements githubapp.EventHandler.
func (h *WorkflowRun) Handles() []string { return []string{"workflow_run"} }

// RerunPassed is a workflow run that passed on a later attempt.
type RerunPassed struct {
	InstallationID int64
	Repo           Repo
	RunID          int64
	Attempt        int
	HeadSHA        string
	Workflow       string
	URL            string
	Origin         CommitOrigin
}

// ParseRerunPassed reads a workflow_run event; ok is false unless it is a
// completed, successful attempt after the first, for an installation, on a
// commit that may be the repository's own (see CommitOrigin).
func ParseRerunPassed(payload []byte) (ev RerunPassed, ok bool, err error) {
	var raw github.WorkflowRunEvent
	if err := json.Unmarshal(payload, &raw); err != nil {
		return RerunPassed{}, false, fmt.Errorf("decoding workflow_run event: %w", err)
	}
	run := raw.GetWorkflowRun()
	origin := CommitOrigin{RepoID: raw.GetRepo().GetID(), RepoFullName: raw.GetRepo().GetFullName(), HeadRepo: run.GetHeadRepository().GetFullName(),
		HeadBranch: run.GetHeadBranch(), PullHeadRepoIDs: pullHeadRepoIDs(run.PullRequests)}
	if raw.GetAction() != "completed" || run.GetConclusion() != "success" || run.GetRunAttempt() < 2 || origin.Ownership() == NotOurs ||
		raw.GetInstallation().GetID() <= 0 || run.GetID() <= 0 || !validSHA(run.GetHeadSHA()) {
		return RerunPassed{}, false, nil
	}
	repo, err := ParseRepo(raw.GetRepo().GetFullName())
	if err != nil {
		return RerunPassed{}, false, err
	}
	return RerunPassed{InstallationID: raw.GetInstallation().GetID(), Repo: repo, RunID: run.GetID(), Attempt: run.GetRunAttempt(),
		HeadSHA: run.GetHeadSHA(), Workflow: run.GetName(), URL: safeURL(run.GetHTMLURL()), Origin: origin}, true, nil
}

// Handle implements githubapp.EventHandler.
func (h *WorkflowRun) Handle(ctx context.Context, _, deliveryID string, payload []byte) error {
	ev, ok, err := ParseRerunPassed(payload)
	if err != nil {
		return permanent(err)
	}
	if !ok {
		return nil
	}
	ctx = logFor(ctx).With().Str("repo", ev.Repo.String()).Int64("workflow_run", ev.RunID).Logger().WithContext(ctx)
	gh, err := h.Clients.Installation(ev.InstallationID)
	if err != nil {
		return err
	}
	if ours, err := commitIsOurs(ctx, gh, ev.Repo, ev.Origin, ev.HeadSHA); !ours {
		return err
	}
	cfg, proceed, err := h.jobConfig(ctx, gh, ev.Repo, flakyEnabled)
	if !proceed {
		return err
	}
	var logs []ciLog
	for attempt := ev.Attempt - 1; attempt >= 1 && attempt >= ev.Attempt-maxEarlierAttempts; attempt-- {
		jobs, err := gh.FailedJobs(ctx, ev.Repo, ev.RunID, attempt)
		if err != nil {
			return err
		}
		for _, job := range jobs {
			rep, err := h.readJobLog(ctx, gh, ev.Repo, job.ID)
			if err != nil {
				return err
			}
			logs = append(logs, ciLog{Occurrence: fmt.Sprintf("workflow_run:%d/%d", ev.RunID, attempt), Job: job.Name, Report: rep})
		}
	}
	subject := runs.Subject{Repo: ev.Repo.String(), Commit: ev.HeadSHA, Source: "workflow_run:" + strconv.FormatInt(ev.RunID, 10)}
	return h.reportCIFlakes(ctx, gh, ciSignal{InstallationID: ev.InstallationID, Delivery: deliveryID, Subject: subject, What: ciWhat("workflow", ev.Workflow)}, logs, cfg)
}

func (h *WorkflowRun) readJobLog(ctx context.Context, gh GitHub, repo Repo, jobID int64) (exunit.Report, error) {
	body, err := gh.JobLog(ctx, repo, jobID)
	if err != nil {
		return exunit.Report{}, err
	}
	defer body.Close()
	return exunit.ParseLog(io.LimitReader(body, maxLogBytes))
}

func validSHA(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
