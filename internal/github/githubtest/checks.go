package githubtest

import (
	"context"
	"io"
	"maps"
	"strings"
	"time"

	"github.com/pitcrew/pitcrew/internal/github"
)

// What the CI did: workflow jobs and their logs (github.Actions), check
// suites and check runs (github.Checks), and the setters a test fills
// them with.

// SetJob records a job of one attempt of a workflow run, with its log.
func (f *Fake) SetJob(run int64, attempt int, id int64, name, conclusion, log string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.jobs == nil {
		f.jobs, f.logs = map[[2]int64][]github.CIJob{}, map[int64]string{}
	}
	k := [2]int64{run, int64(attempt)}
	f.jobs[k] = append(f.jobs[k], github.CIJob{ID: id, Name: name, Conclusion: conclusion})
	f.logs[id] = log
}

// SetSuite makes suite the check suite of a workflow run: its check runs
// are the run's latest jobs.
func (f *Fake) SetSuite(suite, run int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.suites == nil {
		f.suites = map[int64]int64{}
	}
	f.suites[suite] = run
}

// Annotate adds an annotation to a job's check run.
func (f *Fake) Annotate(job int64, a github.Annotation) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.annotations == nil {
		f.annotations = map[int64][]github.Annotation{}
	}
	f.annotations[job] = append(f.annotations[job], a)
}

// Jobs implements github.Actions.
func (f *Fake) Jobs(_ context.Context, _ github.Repo, run int64, attempt int) ([]github.CIJob, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]github.CIJob(nil), f.jobs[[2]int64{run, int64(attempt)}]...), nil
}

// JobLog implements github.Actions.
func (f *Fake) JobLog(_ context.Context, _ github.Repo, id int64) (io.ReadCloser, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return io.NopCloser(strings.NewReader(f.logs[id])), nil
}

// SuiteCheckRuns implements github.Checks: the latest attempt's jobs of
// the suite's workflow run, with their annotation counts.
func (f *Fake) SuiteCheckRuns(_ context.Context, _ github.Repo, suite int64) ([]github.CIJob, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	run, ok := f.suites[suite]
	if !ok {
		return nil, nil
	}
	latest := 0
	for k := range f.jobs {
		if k[0] == run && int(k[1]) > latest {
			latest = int(k[1])
		}
	}
	var out []github.CIJob
	for _, j := range f.jobs[[2]int64{run, int64(latest)}] {
		j.Annotations = len(f.annotations[j.ID])
		out = append(out, j)
	}
	return out, nil
}

// CheckRunAnnotations implements github.Checks.
func (f *Fake) CheckRunAnnotations(_ context.Context, _ github.Repo, id int64) ([]github.Annotation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]github.Annotation(nil), f.annotations[id]...), nil
}

// ChecksNamed implements github.Checks.
func (f *Fake) ChecksNamed(context.Context, github.Repo, string, string) ([]github.CICheck, error) {
	return nil, nil
}

// HeadSuites implements github.Checks from Suites.
func (f *Fake) HeadSuites(context.Context, github.Repo, string) (map[string]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.Suites), nil
}

// CreateCheckRun implements github.Checks.
func (f *Fake) CreateCheckRun(_ context.Context, _ github.Repo, sha string, out github.CheckOutput) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Checks = append(f.Checks, out)
	id := f.write("CreateCheckRun %.7s", sha)
	if f.checkRuns == nil {
		f.checkRuns = map[[3]string]int64{}
	}
	f.checkRuns[[3]string{sha, out.Name, out.ExternalID}] = id
	return id, nil
}

// UpdateCheckRun implements github.Checks.
func (f *Fake) UpdateCheckRun(_ context.Context, _ github.Repo, id int64, out github.CheckOutput) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Checks = append(f.Checks, out)
	f.write("UpdateCheckRun %d", id)
	return nil
}

// FindCheckRun implements github.Checks: the check run created on sha
// with that name and external id, 0 when none.
func (f *Fake) FindCheckRun(_ context.Context, _ github.Repo, sha, name, externalID string) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.checkRuns[[3]string{sha, name, externalID}], nil
}

// Dispatch is a workflow the fake was asked to start.
type Dispatch struct {
	File, Ref string
	Inputs    map[string]any
}

// DispatchWorkflow implements github.Workflows: a workflow is there when
// Workflows names it.
func (f *Fake) DispatchWorkflow(_ context.Context, _ github.Repo, file, ref string, inputs map[string]any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.Workflows[file] {
		return github.ErrWorkflowMissing
	}
	f.Dispatches = append(f.Dispatches, Dispatch{file, ref, inputs})
	return nil
}

// WorkflowRuns implements github.Workflows.
func (f *Fake) WorkflowRuns(context.Context, github.Repo, string, time.Time) ([]github.WorkflowRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]github.WorkflowRun(nil), f.Runs...), nil
}

// LastCommitter implements github.Owners: Committers by path.
func (f *Fake) LastCommitter(_ context.Context, _ github.Repo, path, _ string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.Committers[path], nil
}

// RequestReviewers implements github.Owners.
func (f *Fake) RequestReviewers(_ context.Context, _ github.Repo, number int, users, teams []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ReviewRequests = append(f.ReviewRequests, ReviewRequest{number, users, teams})
	return nil
}

// ReviewRequest is a review the fake was asked for.
type ReviewRequest struct {
	Number       int
	Users, Teams []string
}

// RerunFailedJobs implements github.Workflows.
func (f *Fake) RerunFailedJobs(_ context.Context, _ github.Repo, runID int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Reruns = append(f.Reruns, runID)
	return nil
}
