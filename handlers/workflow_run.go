package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	gogithub "github.com/google/go-github/v66/github"
	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/exunit"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/flaky"
	"github.com/pitcrew/pitcrew/work/follow"
)

// maxRetriedJobs bounds the green jobs whose annotations (and then log)
// are read for in-job retries in one workflow run.
const maxRetriedJobs = 20

// maxEarlierAttempts is how many failed attempts before the passing one
// pitcrew reads.
const maxEarlierAttempts = 3

// WorkflowRun turns a GitHub Actions run that passed after its tests
// failed into flaky-test fixes: a re-run that passed (the failed attempts'
// job logs, each failure counted only when the passing attempt ran the
// test and passed it), or a job that retried its own tests and passed
// (mix test || mix test --failed). It reports in a check run.
type WorkflowRun struct{ work.Env }

// Handles implements githubapp.EventHandler.
func (h *WorkflowRun) Handles() []string { return []string{"workflow_run"} }

// RerunPassed is a workflow run attempt that passed: after earlier
// attempts failed when Attempt > 1.
type RerunPassed struct {
	InstallationID int64
	Repo           github.Repo
	RunID          int64
	Attempt        int
	CheckSuiteID   int64
	HeadSHA        string
	Workflow       string
	URL            string
	Origin         flaky.CommitOrigin
}

// ParseRerunPassed reads a workflow_run event; ok is false unless it is a
// completed, successful attempt, for an installation, on a commit that may
// be the repository's own (see flaky.CommitOrigin).
func ParseRerunPassed(payload []byte) (ev RerunPassed, ok bool, err error) {
	var raw gogithub.WorkflowRunEvent
	if err := json.Unmarshal(payload, &raw); err != nil {
		return RerunPassed{}, false, fmt.Errorf("decoding workflow_run event: %w", err)
	}
	run := raw.GetWorkflowRun()
	if run == nil || IsVerifyWorkflow(run) {
		return RerunPassed{}, false, nil // a verification's failures are measured, not flakes
	}
	origin := flaky.CommitOrigin{RepoID: raw.GetRepo().GetID(), RepoFullName: raw.GetRepo().GetFullName(), HeadRepo: run.GetHeadRepository().GetFullName(),
		HeadBranch: run.GetHeadBranch(), PullHeadRepoIDs: pullHeadRepoIDs(run.PullRequests)}
	if raw.GetAction() != "completed" || run.GetConclusion() != "success" || run.GetRunAttempt() < 1 || origin.Ownership() == flaky.NotOurs ||
		raw.GetInstallation().GetID() <= 0 || run.GetID() <= 0 || !github.ValidSHA(run.GetHeadSHA()) {
		return RerunPassed{}, false, nil
	}
	repo, err := github.ParseRepo(raw.GetRepo().GetFullName())
	if err != nil {
		return RerunPassed{}, false, err
	}
	return RerunPassed{InstallationID: raw.GetInstallation().GetID(), Repo: repo, RunID: run.GetID(), Attempt: run.GetRunAttempt(),
		CheckSuiteID: run.GetCheckSuiteID(), HeadSHA: run.GetHeadSHA(), Workflow: run.GetName(), URL: publish.SafeURL(run.GetHTMLURL()), Origin: origin}, true, nil
}

// Handle implements githubapp.EventHandler.
func (h *WorkflowRun) Handle(ctx context.Context, _, deliveryID string, payload []byte) error {
	ev, ok, err := ParseRerunPassed(payload)
	if err != nil {
		return queue.Permanent(err)
	}
	if !ok {
		return nil
	}
	ctx = zerolog.Ctx(ctx).With().Str("repo", ev.Repo.String()).Int64("workflow_run", ev.RunID).Logger().WithContext(ctx)
	gh, err := h.Clients.Installation(ev.InstallationID)
	if err != nil {
		return err
	}
	if ev.Attempt < 2 && ev.CheckSuiteID <= 0 {
		// a first attempt can only hold in-job retries, found through its suite
		zerolog.Ctx(ctx).Debug().Msg("ignoring the run: it passed at its first attempt and names no check suite to find retries in a job through")
		return nil
	}
	cfg, proceed, err := h.JobConfig(ctx, gh, ev.Repo, flaky.Enabled)
	if !proceed {
		return err
	}
	read := flaky.NewJobLogs(gh, ev.Repo)
	var logs []flaky.CILog
	if flaky.Of(cfg).InJobRetries {
		if logs, err = inJobRetryLogs(ctx, gh, read, ev); err != nil {
			return err
		}
	}
	if ev.Attempt < 2 && len(logs) == 0 {
		zerolog.Ctx(ctx).Debug().Bool("in_job_retries", flaky.Of(cfg).InJobRetries).
			Msg("ignoring the run: it passed at its first attempt, and no job of it passed after its tests failed (flaky.in_job_retries)")
		return nil
	}
	// Only now, with something to act on: is the commit the repository's?
	if ours, err := flaky.IsOurs(ctx, gh, ev.Repo, ev.Origin, ev.HeadSHA); !ours {
		return err
	}
	if ev.Attempt >= 2 {
		earlier, err := rerunLogs(ctx, gh, read, ev)
		if err != nil {
			return err
		}
		logs = append(earlier, logs...)
	}
	subject := runs.Subject{Repo: ev.Repo.String(), Commit: ev.HeadSHA, Source: "workflow_run:" + strconv.FormatInt(ev.RunID, 10)}
	return flaky.ReportCI(ctx, &h.Env, gh, flaky.CISignal{InstallationID: ev.InstallationID, Delivery: deliveryID, Subject: subject, What: flaky.CIWhat("workflow", ev.Workflow), URL: ev.URL}, logs, cfg)
}

// rerunLogs reads the failed jobs of the attempts before the passing one.
// A failure is a candidate only when the passing attempt's job of the
// same name ran the test and passed it; the others are set aside with
// the reason.
func rerunLogs(ctx context.Context, gh github.Client, read *flaky.JobLogs, ev RerunPassed) ([]flaky.CILog, error) {
	passingJobs, err := gh.Jobs(ctx, ev.Repo, ev.RunID, ev.Attempt)
	if err != nil {
		return nil, err
	}
	var logs []flaky.CILog
	for attempt := ev.Attempt - 1; attempt >= 1 && attempt >= ev.Attempt-maxEarlierAttempts; attempt-- {
		jobs, err := gh.Jobs(ctx, ev.Repo, ev.RunID, attempt)
		if err != nil {
			return nil, err
		}
		for _, job := range jobs {
			if job.Conclusion != "failure" {
				continue
			}
			rep, err := read.Report(ctx, job.ID)
			if err != nil {
				return nil, err
			}
			l := flaky.CILog{Occurrence: fmt.Sprintf("workflow_run:%d/%d", ev.RunID, attempt), Job: job.Name, Report: rep}
			if len(rep.Flaky()) > 0 {
				var pass exunit.Report // empty when the passing attempt has no such successful job
				if i := slices.IndexFunc(passingJobs, func(j github.CIJob) bool { return j.Name == job.Name && j.Conclusion == "success" }); i >= 0 {
					if pass, err = read.Report(ctx, passingJobs[i].ID); err != nil {
						return nil, err
					}
				}
				l.Flakes, l.NotFlaky = flaky.PassedOnRetry(rep, pass)
			}
			logs = append(logs, l)
		}
	}
	return logs, nil
}

// inJobRetryLogs finds the jobs of the passing attempt that passed after
// their tests failed: a successful check run carrying an ExUnit failure
// annotation (setup-beam's problem matcher makes one per failure). Only
// their logs are read; a suite without such a check run costs one call.
func inJobRetryLogs(ctx context.Context, gh github.Client, read *flaky.JobLogs, ev RerunPassed) ([]flaky.CILog, error) {
	if ev.CheckSuiteID <= 0 {
		return nil, nil
	}
	checks, err := gh.SuiteCheckRuns(ctx, ev.Repo, ev.CheckSuiteID)
	if err != nil {
		return nil, err
	}
	var logs []flaky.CILog
	looked := 0
	for _, c := range checks {
		if c.Conclusion != "success" || c.Annotations == 0 || looked == maxRetriedJobs {
			continue
		}
		looked++
		annotations, err := gh.CheckRunAnnotations(ctx, ev.Repo, c.ID)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(annotations, isExUnitFailure) {
			continue
		}
		rep, err := read.Report(ctx, c.ID) // a workflow job's check run has the job's id
		if err != nil {
			return nil, err
		}
		if flakes := rep.RetriedFlakes(); len(flakes) > 0 {
			logs = append(logs, flaky.CILog{Occurrence: fmt.Sprintf("workflow_run:%d/%d/job:%d", ev.RunID, ev.Attempt, c.ID), Job: c.Name, Report: rep, Flakes: flakes})
		}
	}
	return logs, nil
}

// isExUnitFailure reports whether an annotation is one setup-beam's
// elixir-mixTestFailure matcher makes: a failure on a test file's line.
func isExUnitFailure(a github.Annotation) bool {
	_, err := exunit.ParseTestRef(a.Path + ":" + strconv.Itoa(a.Line))
	return a.Level == "failure" && err == nil
}

// KnownFlakes re-runs, once, the failed jobs of a workflow run that only
// known flaky tests failed (flaky.rerun_known), so that a known flake does
// not block a pull request, and says why in a check run otherwise.
type KnownFlakes struct{ work.Env }

// Handles implements githubapp.EventHandler.
func (h *KnownFlakes) Handles() []string { return []string{"workflow_run"} }

// ParseRunFailed reads a workflow_run event; ok is false unless it is a
// completed attempt that failed, for an installation, on a commit that may
// be the repository's own, of a workflow other than pitcrew's
// verification.
func ParseRunFailed(payload []byte) (ev flaky.RunFailed, origin flaky.CommitOrigin, ok bool, err error) {
	var raw gogithub.WorkflowRunEvent
	if err := json.Unmarshal(payload, &raw); err != nil {
		return ev, origin, false, fmt.Errorf("decoding workflow_run event: %w", err)
	}
	run := raw.GetWorkflowRun()
	if run == nil || IsVerifyWorkflow(run) {
		return ev, origin, false, nil
	}
	origin = flaky.CommitOrigin{RepoID: raw.GetRepo().GetID(), RepoFullName: raw.GetRepo().GetFullName(), HeadRepo: run.GetHeadRepository().GetFullName(),
		HeadBranch: run.GetHeadBranch(), PullHeadRepoIDs: pullHeadRepoIDs(run.PullRequests)}
	if raw.GetAction() != "completed" || run.GetConclusion() != "failure" || run.GetRunAttempt() < 1 || origin.Ownership() == flaky.NotOurs ||
		raw.GetInstallation().GetID() <= 0 || run.GetID() <= 0 || !github.ValidSHA(run.GetHeadSHA()) {
		return ev, origin, false, nil
	}
	repo, err := github.ParseRepo(raw.GetRepo().GetFullName())
	if err != nil {
		return ev, origin, false, err
	}
	return flaky.RunFailed{InstallationID: raw.GetInstallation().GetID(), Repo: repo, RunID: run.GetID(), Attempt: run.GetRunAttempt(),
		HeadSHA: run.GetHeadSHA(), Workflow: run.GetName(), URL: publish.SafeURL(run.GetHTMLURL())}, origin, true, nil
}

// Handle implements githubapp.EventHandler.
func (h *KnownFlakes) Handle(ctx context.Context, _, _ string, payload []byte) error {
	ev, origin, ok, err := ParseRunFailed(payload)
	if err != nil {
		return queue.Permanent(err)
	}
	if !ok {
		return nil
	}
	gh, err := h.Clients.Installation(ev.InstallationID)
	if err != nil {
		return err
	}
	cfg, proceed, err := h.JobConfig(ctx, gh, ev.Repo, func(c repoconfig.Config) bool { return flaky.Enabled(c) && flaky.Of(c).RerunKnown })
	if !proceed {
		return err
	}
	if ours, err := flaky.IsOurs(ctx, gh, ev.Repo, origin, ev.HeadSHA); !ours {
		return err
	}
	return flaky.RerunKnown(ctx, &h.Env, gh, ev, cfg)
}

// VerifyRun follows the runs of pitcrew's verification workflow
// (flaky.verify: ci): each one's start and end, for the verification its
// title names.
type VerifyRun struct{ work.Env }

// Handles implements githubapp.EventHandler.
func (h *VerifyRun) Handles() []string { return []string{"workflow_run"} }

// VerifyRunEvent is a workflow_run event of the verification workflow.
type VerifyRunEvent struct {
	InstallationID int64
	News           follow.CIRunNews
}

// ParseVerifyRun reads a workflow_run event; ok is false unless it is a
// run of .github/workflows/pitcrew-verify.yml, for an installation, whose
// title names a verification.
func ParseVerifyRun(payload []byte) (ev VerifyRunEvent, ok bool, err error) {
	var raw gogithub.WorkflowRunEvent
	if err := json.Unmarshal(payload, &raw); err != nil {
		return VerifyRunEvent{}, false, fmt.Errorf("decoding workflow_run event: %w", err)
	}
	run := raw.GetWorkflowRun()
	// pitcrew dispatches it on the default branch: a run of a copy on
	// another branch, or started otherwise, is not its.
	if !IsVerifyWorkflow(run) || run.GetEvent() != "workflow_dispatch" || run.GetHeadBranch() != raw.GetRepo().GetDefaultBranch() ||
		raw.GetInstallation().GetID() <= 0 || run.GetID() <= 0 {
		return VerifyRunEvent{}, false, nil
	}
	nonce, phase, ok := follow.ParseCITitle(run.GetDisplayTitle())
	if !ok {
		return VerifyRunEvent{}, false, nil
	}
	repo, err := github.ParseRepo(raw.GetRepo().GetFullName())
	if err != nil {
		return VerifyRunEvent{}, false, err
	}
	return VerifyRunEvent{InstallationID: raw.GetInstallation().GetID(), News: follow.CIRunNews{Repo: repo, Nonce: nonce, Phase: phase,
		Run: github.WorkflowRun{ID: run.GetID(), Attempt: run.GetRunAttempt(), Title: run.GetDisplayTitle(), Status: run.GetStatus(),
			Conclusion: run.GetConclusion(), URL: publish.SafeURL(run.GetHTMLURL())}}}, true, nil
}

// IsVerifyWorkflow reports whether run is one of pitcrew's verification
// workflow, whose failures are pitcrew's own measurement, not a flake.
func IsVerifyWorkflow(run *gogithub.WorkflowRun) bool {
	path, file := run.GetPath(), ".github/workflows/"+follow.CIWorkflowFile
	return path == file || strings.HasPrefix(path, file+"@")
}

// Handle implements githubapp.EventHandler.
func (h *VerifyRun) Handle(ctx context.Context, _, _ string, payload []byte) error {
	ev, ok, err := ParseVerifyRun(payload)
	if err != nil {
		return queue.Permanent(err)
	}
	if !ok {
		return nil
	}
	gh, err := h.Clients.Installation(ev.InstallationID)
	if err != nil {
		return err
	}
	return follow.CIRunSeen(ctx, &h.Env, gh, ev.News)
}
