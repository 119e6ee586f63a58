package github

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	gogithub "github.com/google/go-github/v66/github"
)

// The GitHub calls of the CI signals: workflow jobs and their logs, check
// runs.

func (g *restGitHub) Jobs(ctx context.Context, repo Repo, runID int64, attempt int) ([]CIJob, error) {
	var out []CIJob
	opts := &gogithub.ListOptions{PerPage: 100}
	for {
		jobs, resp, err := g.c.Actions.ListWorkflowJobsAttempt(ctx, repo.Owner, repo.Name, runID, int64(attempt), opts)
		if err != nil {
			return nil, fmt.Errorf("listing jobs of run %d attempt %d: %w", runID, attempt, err)
		}
		for _, j := range jobs.Jobs {
			out = append(out, CIJob{ID: j.GetID(), Name: j.GetName(), Conclusion: j.GetConclusion()})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

func (g *restGitHub) SuiteCheckRuns(ctx context.Context, repo Repo, suiteID int64) ([]CIJob, error) {
	var out []CIJob
	opts := &gogithub.ListCheckRunsOptions{ListOptions: gogithub.ListOptions{PerPage: 100}}
	for {
		res, resp, err := g.c.Checks.ListCheckRunsCheckSuite(ctx, repo.Owner, repo.Name, suiteID, opts)
		if err != nil {
			return nil, fmt.Errorf("listing the check runs of suite %d: %w", suiteID, err)
		}
		for _, c := range res.CheckRuns {
			out = append(out, CIJob{ID: c.GetID(), Name: c.GetName(), Conclusion: c.GetConclusion(), Annotations: c.GetOutput().GetAnnotationsCount()})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

func (g *restGitHub) CheckRunAnnotations(ctx context.Context, repo Repo, checkRunID int64) ([]Annotation, error) {
	list, _, err := g.c.Checks.ListCheckRunAnnotations(ctx, repo.Owner, repo.Name, checkRunID, &gogithub.ListOptions{PerPage: 100})
	if err != nil {
		return nil, fmt.Errorf("listing the annotations of check run %d: %w", checkRunID, err)
	}
	out := make([]Annotation, 0, len(list))
	for _, a := range list {
		out = append(out, Annotation{Path: a.GetPath(), Line: a.GetStartLine(), Level: a.GetAnnotationLevel(), Message: a.GetMessage()})
	}
	return out, nil
}

func (g *restGitHub) JobLog(ctx context.Context, repo Repo, jobID int64) (io.ReadCloser, error) {
	u, _, err := g.c.Actions.GetWorkflowJobLogs(ctx, repo.Owner, repo.Name, jobID, 0)
	if err != nil {
		return nil, fmt.Errorf("locating the log of job %d: %w", jobID, err)
	}
	return g.fetch(ctx, u.String(), fmt.Sprintf("the log of job %d", jobID))
}

// fetch downloads what GitHub redirected to (a pre-signed URL: no GitHub
// credential is sent); what names it in errors.
func (g *restGitHub) fetch(ctx context.Context, u, what string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := g.download.Do(req)
	if err != nil {
		return nil, fmt.Errorf("downloading %s: %w", what, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("downloading %s: %s", what, resp.Status)
	}
	return resp.Body, nil
}

func (g *restGitHub) ChecksNamed(ctx context.Context, repo Repo, ref, name string) ([]CICheck, error) {
	all := "all"
	res, _, err := g.c.Checks.ListCheckRunsForRef(ctx, repo.Owner, repo.Name, ref, &gogithub.ListCheckRunsOptions{
		CheckName: &name, Filter: &all, ListOptions: gogithub.ListOptions{PerPage: 100},
	})
	if err != nil {
		return nil, fmt.Errorf("listing check runs %q on %s: %w", name, ref, err)
	}
	var out []CICheck
	for _, c := range res.CheckRuns {
		if c.GetStatus() == "completed" {
			o := c.GetOutput()
			out = append(out, CICheck{ID: c.GetID(), Conclusion: c.GetConclusion(), Text: o.GetSummary() + "\n" + o.GetText()})
		}
	}
	return out, nil
}

func (g *restGitHub) CreateCheckRun(ctx context.Context, repo Repo, sha string, out CheckOutput) (int64, error) {
	completed, conclusion := "completed", out.Conclusion
	if conclusion == "" {
		conclusion = "neutral"
	}
	opts := gogithub.CreateCheckRunOptions{
		Name: out.Name, HeadSHA: sha, ExternalID: &out.ExternalID, Status: &completed, Conclusion: &conclusion,
		CompletedAt: &gogithub.Timestamp{Time: time.Now()},
		Output:      checkRunOutput(out),
	}
	if out.DetailsURL != "" {
		opts.DetailsURL = &out.DetailsURL
	}
	c, _, err := g.c.Checks.CreateCheckRun(ctx, repo.Owner, repo.Name, opts)
	if err != nil {
		return 0, fmt.Errorf("creating check run on %s: %w", sha, err)
	}
	return c.GetID(), nil
}

func (g *restGitHub) UpdateCheckRun(ctx context.Context, repo Repo, id int64, out CheckOutput) error {
	opts := gogithub.UpdateCheckRunOptions{Name: out.Name, Output: checkRunOutput(out)}
	if out.Conclusion != "" {
		opts.Conclusion = &out.Conclusion
	}
	_, _, err := g.c.Checks.UpdateCheckRun(ctx, repo.Owner, repo.Name, id, opts)
	if err != nil {
		return fmt.Errorf("updating check run %d: %w", id, err)
	}
	return nil
}

func (g *restGitHub) FindCheckRun(ctx context.Context, repo Repo, sha, name, externalID string) (int64, error) {
	res, _, err := g.c.Checks.ListCheckRunsForRef(ctx, repo.Owner, repo.Name, sha, &gogithub.ListCheckRunsOptions{
		CheckName: &name, ListOptions: gogithub.ListOptions{PerPage: 100},
	})
	if err != nil {
		return 0, fmt.Errorf("listing check runs on %s: %w", sha, err)
	}
	for _, c := range res.CheckRuns {
		if c.GetExternalID() == externalID {
			return c.GetID(), nil
		}
	}
	return 0, nil
}

func (g *restGitHub) CommitOnBranch(ctx context.Context, repo Repo, branch, sha string) (bool, error) {
	cmp, resp, err := g.c.Repositories.CompareCommits(ctx, repo.Owner, repo.Name, branch, sha, &gogithub.ListOptions{PerPage: 1})
	if resp != nil && (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusUnprocessableEntity) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("comparing %s with branch %q: %w", sha, branch, err)
	}
	// "behind" or "identical": the branch already holds every commit up to sha.
	return cmp.GetStatus() == "behind" || cmp.GetStatus() == "identical", nil
}

// checkRunOutput is a check run's output with its annotations, each on one
// line of its file (GitHub's fields; at most 50 are sent).
func checkRunOutput(out CheckOutput) *gogithub.CheckRunOutput {
	o := &gogithub.CheckRunOutput{Title: &out.Title, Summary: &out.Summary}
	for i, a := range out.Annotations {
		if i == 50 {
			break
		}
		line, level := a.Line, a.Level
		if line < 1 {
			line = 1
		}
		o.Annotations = append(o.Annotations, &gogithub.CheckRunAnnotation{Path: gogithub.String(a.Path), StartLine: gogithub.Int(line), EndLine: gogithub.Int(line),
			AnnotationLevel: gogithub.String(level), Message: gogithub.String(a.Message), Title: gogithub.String(a.Title)})
	}
	return o
}

func (g *restGitHub) HeadSuites(ctx context.Context, repo Repo, sha string) (map[string]string, error) {
	res, _, err := g.c.Checks.ListCheckSuitesForRef(ctx, repo.Owner, repo.Name, sha, &gogithub.ListCheckSuiteOptions{ListOptions: gogithub.ListOptions{PerPage: 100}})
	if err != nil {
		return nil, fmt.Errorf("listing the check suites of %s: %w", sha, err)
	}
	out := map[string]string{}
	for _, s := range res.CheckSuites {
		// GitHub makes a suite for every app with checks access on each
		// push; one that never ran a check run says nothing.
		if s.GetLatestCheckRunsCount() > 0 {
			out[SuiteKey(s.GetApp().GetSlug(), s.GetID())] = s.GetConclusion()
		}
	}
	return out, nil
}

// SuiteKey names a check suite by its app and id: one app (GitHub Actions)
// runs one suite per workflow.
func SuiteKey(app string, id int64) string { return fmt.Sprintf("%s/%d", app, id) }
