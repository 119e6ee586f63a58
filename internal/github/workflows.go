package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	gogithub "github.com/google/go-github/v66/github"
)

// Workflows starts a repository's own workflow and finds its runs: the
// verification of a fix in the team's CI (flaky.verify: ci).
type Workflows interface {
	// DispatchWorkflow starts the workflow file (its name under
	// .github/workflows) on ref with inputs. ErrWorkflowMissing when the
	// repository has no such workflow on ref; ErrWorkflowRefused, with
	// GitHub's words, when it has one that will not take the dispatch (no
	// workflow_dispatch trigger, other inputs, disabled).
	DispatchWorkflow(ctx context.Context, repo Repo, file, ref string, inputs map[string]any) error
	// WorkflowRuns lists the runs of the workflow file created at or after
	// since, newest first (the first 100).
	WorkflowRuns(ctx context.Context, repo Repo, file string, since time.Time) ([]WorkflowRun, error)
	// RerunFailedJobs re-runs the failed jobs of a workflow run (and the
	// jobs that depend on them), as a new attempt.
	RerunFailedJobs(ctx context.Context, repo Repo, runID int64) error
}

// WorkflowRun is one run of a workflow: its title (the run-name the
// workflow gives it), where it stands and, once completed, its conclusion.
type WorkflowRun struct {
	ID         int64
	Attempt    int
	Title      string
	Status     string // queued, in_progress, completed, ...
	Conclusion string // success, failure, cancelled, ... once completed
	URL        string
	// HeadBranch is the branch it ran on, Event what started it.
	HeadBranch, Event string
}

// ErrWorkflowMissing is a workflow the repository does not have;
// ErrWorkflowRefused one that GitHub would not start.
var (
	ErrWorkflowMissing = errors.New("the repository has no such workflow")
	ErrWorkflowRefused = errors.New("GitHub refused to start the workflow")
)

func (g *restGitHub) DispatchWorkflow(ctx context.Context, repo Repo, file, ref string, inputs map[string]any) error {
	_, err := g.c.Actions.CreateWorkflowDispatchEventByFileName(ctx, repo.Owner, repo.Name, file, gogithub.CreateWorkflowDispatchEventRequest{Ref: ref, Inputs: inputs})
	var e *gogithub.ErrorResponse
	switch {
	case err == nil:
		return nil
	case StatusOf(err) == http.StatusNotFound:
		return fmt.Errorf("dispatching %s: %w", file, ErrWorkflowMissing)
	case StatusOf(err) == http.StatusUnprocessableEntity && errors.As(err, &e):
		return fmt.Errorf("dispatching %s: %w: %s", file, ErrWorkflowRefused, e.Message)
	}
	return fmt.Errorf("dispatching %s: %w", file, err)
}

func (g *restGitHub) WorkflowRuns(ctx context.Context, repo Repo, file string, since time.Time) ([]WorkflowRun, error) {
	list, _, err := g.c.Actions.ListWorkflowRunsByFileName(ctx, repo.Owner, repo.Name, file, &gogithub.ListWorkflowRunsOptions{
		Event: "workflow_dispatch", Created: ">=" + since.UTC().Format(time.RFC3339), ListOptions: gogithub.ListOptions{PerPage: 100},
	})
	if err != nil {
		return nil, fmt.Errorf("listing the runs of %s: %w", file, err)
	}
	out := make([]WorkflowRun, 0, len(list.WorkflowRuns))
	for _, r := range list.WorkflowRuns {
		out = append(out, WorkflowRun{ID: r.GetID(), Attempt: r.GetRunAttempt(), Title: r.GetDisplayTitle(), Status: r.GetStatus(), Conclusion: r.GetConclusion(), URL: r.GetHTMLURL(),
			HeadBranch: r.GetHeadBranch(), Event: r.GetEvent()})
	}
	return out, nil
}

func (g *restGitHub) RerunFailedJobs(ctx context.Context, repo Repo, runID int64) error {
	if _, err := g.c.Actions.RerunFailedJobsByID(ctx, repo.Owner, repo.Name, runID); err != nil {
		return fmt.Errorf("re-running the failed jobs of run %d: %w", runID, err)
	}
	return nil
}
