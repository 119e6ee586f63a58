package handlers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"
	"github.com/palantir/go-githubapp/appconfig"
	"github.com/palantir/go-githubapp/githubapp"

	"github.com/pitcrew/pitcrew/internal/repoconfig"
)

// Repo names a repository.
type Repo struct{ Owner, Name string }

// String renders owner/name.
func (r Repo) String() string { return r.Owner + "/" + r.Name }

// ParseRepo splits owner/name.
func ParseRepo(full string) (Repo, error) {
	owner, name, ok := strings.Cut(full, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return Repo{}, fmt.Errorf("invalid repository name %q", full)
	}
	return Repo{owner, name}, nil
}

// GitHub is the part of GitHub's REST API the handlers use, as one
// installation sees it. Keeping it narrow keeps the handlers' needs (and
// the API calls each trigger costs) visible in one place.
type GitHub interface {
	// LoadConfig reads the raw .github/pitcrew.yml of repo, falling back to
	// the owner's .github repository; an empty Content means no file.
	LoadConfig(ctx context.Context, repo Repo) (appconfig.Config, error)
	// Permission is the user's permission on repo: admin, write, read or none.
	Permission(ctx context.Context, repo Repo, user string) (string, error)
	CreateComment(ctx context.Context, repo Repo, issue int, body string) (int64, error)
	// EditComment returns ErrCommentGone when the comment was deleted.
	EditComment(ctx context.Context, repo Repo, id int64, body string) error
	// FindComment returns the id of the first comment on the issue made by
	// the app that contains marker, or 0.
	FindComment(ctx context.Context, repo Repo, issue int, marker string) (int64, error)
	// CreateLabel creates a label; created is false if it already existed.
	CreateLabel(ctx context.Context, repo Repo, name, color, description string) (created bool, err error)

	// CreateIssue opens an issue with labels and returns its number.
	CreateIssue(ctx context.Context, repo Repo, title, body string, labels []string) (int, error)
	// FindIssue returns the number of an issue carrying label whose body
	// contains marker, or 0.
	FindIssue(ctx context.Context, repo Repo, label, marker string) (int, error)
	// EditIssueBody replaces an issue's body.
	EditIssueBody(ctx context.Context, repo Repo, number int, body string) error

	// ChangedFiles lists the files a pull request changed (all pages).
	ChangedFiles(ctx context.Context, repo Repo, number int) ([]ChangedFile, error)
	// MergedPullFor returns the number of a merged pull request that
	// contains commit, or 0.
	MergedPullFor(ctx context.Context, repo Repo, sha string) (int, error)
	// CreateCommitComment comments on a commit; EditCommitComment returns
	// ErrCommentGone when the comment was deleted; FindCommitComment returns
	// the id of the app's comment containing marker, or 0.
	CreateCommitComment(ctx context.Context, repo Repo, sha, body string) (int64, error)
	EditCommitComment(ctx context.Context, repo Repo, id int64, body string) error
	FindCommitComment(ctx context.Context, repo Repo, sha, marker string) (int64, error)

	// Jobs lists the jobs of one attempt of a workflow run.
	Jobs(ctx context.Context, repo Repo, runID int64, attempt int) ([]CIJob, error)
	// SuiteCheckRuns lists the latest check runs of a check suite (for a
	// workflow run: one per job, its id the job's), with how many
	// annotations each carries.
	SuiteCheckRuns(ctx context.Context, repo Repo, suiteID int64) ([]CIJob, error)
	// CheckRunAnnotations lists a check run's first 100 annotations.
	CheckRunAnnotations(ctx context.Context, repo Repo, checkRunID int64) ([]Annotation, error)
	// JobLog opens a job's log, following GitHub's redirect to the
	// short-lived download URL.
	JobLog(ctx context.Context, repo Repo, jobID int64) (io.ReadCloser, error)
	// ChecksNamed lists the completed check runs named name on ref, from
	// every attempt (filter=all).
	ChecksNamed(ctx context.Context, repo Repo, ref, name string) ([]CICheck, error)
	// CreateCheckRun creates a completed check run on a commit.
	CreateCheckRun(ctx context.Context, repo Repo, sha string, out CheckOutput) (int64, error)
	// UpdateCheckRun replaces a check run's output.
	UpdateCheckRun(ctx context.Context, repo Repo, id int64, out CheckOutput) error
	// FindCheckRun returns the id of the app's check run named name on sha
	// whose external id is externalID, or 0.
	FindCheckRun(ctx context.Context, repo Repo, sha, name, externalID string) (int64, error)
	// CommitOnBranch reports whether sha is on the repository's branch (its
	// head or an ancestor of it); false when either does not exist there.
	CommitOnBranch(ctx context.Context, repo Repo, branch, sha string) (bool, error)
}

// ChangedFile is a file a pull request or push touched.
type ChangedFile struct {
	Path   string
	Status string // added, modified, renamed, removed, ...
}

// CIJob is a CI job of a workflow run, or the check run GitHub keeps for it.
type CIJob struct {
	ID          int64
	Name        string
	Conclusion  string // success, failure, cancelled, ...
	Annotations int    // check runs only: how many annotations it carries
}

// Annotation is one annotation of a check run: what a problem matcher
// (or the CI) pointed at.
type Annotation struct {
	Path    string
	Line    int
	Level   string // notice, warning, failure
	Message string
}

// CICheck is a CI's check run with the text it reported.
type CICheck struct {
	ID         int64
	Conclusion string
	Text       string // output summary and text, as the log of the run
}

// CheckOutput is what pitcrew's check run shows.
type CheckOutput struct {
	Name, ExternalID, Title, Summary, DetailsURL string
}

// ErrCommentGone means a status comment was deleted by someone.
var ErrCommentGone = errors.New("comment no longer exists")

// Clients hands out the GitHub API for an installation.
type Clients interface {
	Installation(id int64) (GitHub, error)
	// InstallationFor finds the app's installation on a repository; 0 when
	// the app is not installed there.
	InstallationFor(ctx context.Context, repo Repo) (int64, error)
}

// NewClients returns Clients backed by go-githubapp's client creator
// (installation tokens through ghinstallation).
func NewClients(cc githubapp.ClientCreator) Clients {
	return &restClients{cc: cc, loader: appconfig.NewLoader([]string{repoconfig.Path}), download: &http.Client{Timeout: 2 * time.Minute}}
}

type restClients struct {
	cc       githubapp.ClientCreator
	loader   *appconfig.Loader
	download *http.Client // no GitHub credentials: log URLs are pre-signed
}

func (c *restClients) Installation(id int64) (GitHub, error) {
	client, err := c.cc.NewInstallationClient(id)
	if err != nil {
		return nil, fmt.Errorf("github client for installation %d: %w", id, err)
	}
	return &restGitHub{c: client, loader: c.loader, download: c.download}, nil
}

func (c *restClients) InstallationFor(ctx context.Context, repo Repo) (int64, error) {
	client, err := c.cc.NewAppClient()
	if err != nil {
		return 0, err
	}
	inst, _, err := client.Apps.FindRepositoryInstallation(ctx, repo.Owner, repo.Name)
	if isStatus(err, http.StatusNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("finding the installation on %s: %w", repo, err)
	}
	return inst.GetID(), nil
}

type restGitHub struct {
	c        *github.Client
	loader   *appconfig.Loader
	download *http.Client
}

func (g *restGitHub) LoadConfig(ctx context.Context, repo Repo) (appconfig.Config, error) {
	return g.loader.LoadConfig(ctx, g.c, repo.Owner, repo.Name, "")
}

func (g *restGitHub) Permission(ctx context.Context, repo Repo, user string) (string, error) {
	p, _, err := g.c.Repositories.GetPermissionLevel(ctx, repo.Owner, repo.Name, user)
	if isStatus(err, http.StatusNotFound) {
		return "none", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading %s's permission on %s: %w", user, repo, err)
	}
	return p.GetPermission(), nil
}

func (g *restGitHub) CreateComment(ctx context.Context, repo Repo, issue int, body string) (int64, error) {
	c, _, err := g.c.Issues.CreateComment(ctx, repo.Owner, repo.Name, issue, &github.IssueComment{Body: &body})
	if err != nil {
		return 0, fmt.Errorf("commenting on %s#%d: %w", repo, issue, err)
	}
	return c.GetID(), nil
}

func (g *restGitHub) EditComment(ctx context.Context, repo Repo, id int64, body string) error {
	_, _, err := g.c.Issues.EditComment(ctx, repo.Owner, repo.Name, id, &github.IssueComment{Body: &body})
	if isStatus(err, http.StatusNotFound) {
		return ErrCommentGone
	}
	if err != nil {
		return fmt.Errorf("editing comment %d on %s: %w", id, repo, err)
	}
	return nil
}

func (g *restGitHub) FindComment(ctx context.Context, repo Repo, issue int, marker string) (int64, error) {
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		cs, resp, err := g.c.Issues.ListComments(ctx, repo.Owner, repo.Name, issue, opts)
		if err != nil {
			return 0, fmt.Errorf("listing comments of %s#%d: %w", repo, issue, err)
		}
		for _, c := range cs {
			if c.GetUser().GetType() == "Bot" {
				if strings.Contains(c.GetBody(), marker) {
					return c.GetID(), nil
				}
			}
		}
		if resp.NextPage == 0 {
			return 0, nil
		}
		opts.Page = resp.NextPage
	}
}

func (g *restGitHub) CreateLabel(ctx context.Context, repo Repo, name, color, description string) (bool, error) {
	_, _, err := g.c.Issues.CreateLabel(ctx, repo.Owner, repo.Name, &github.Label{Name: &name, Color: &color, Description: &description})
	if isStatus(err, http.StatusUnprocessableEntity) {
		return false, nil // already_exists
	}
	if err != nil {
		return false, fmt.Errorf("creating label %q in %s: %w", name, repo, err)
	}
	return true, nil
}

func isStatus(err error, code int) bool {
	var e *github.ErrorResponse
	return errors.As(err, &e) && e.Response != nil && e.Response.StatusCode == code
}

func (g *restGitHub) CreateIssue(ctx context.Context, repo Repo, title, body string, labels []string) (int, error) {
	is, _, err := g.c.Issues.Create(ctx, repo.Owner, repo.Name, &github.IssueRequest{Title: &title, Body: &body, Labels: &labels})
	if err != nil {
		return 0, fmt.Errorf("opening an issue in %s: %w", repo, err)
	}
	return is.GetNumber(), nil
}

func (g *restGitHub) EditIssueBody(ctx context.Context, repo Repo, number int, body string) error {
	_, _, err := g.c.Issues.Edit(ctx, repo.Owner, repo.Name, number, &github.IssueRequest{Body: &body})
	if err != nil {
		return fmt.Errorf("editing %s#%d: %w", repo, number, err)
	}
	return nil
}

func (g *restGitHub) FindIssue(ctx context.Context, repo Repo, label, marker string) (int, error) {
	opts := &github.IssueListByRepoOptions{Labels: []string{label}, State: "all", ListOptions: github.ListOptions{PerPage: 100}}
	issues, _, err := g.c.Issues.ListByRepo(ctx, repo.Owner, repo.Name, opts)
	if err != nil {
		return 0, fmt.Errorf("listing %s issues of %s: %w", label, repo, err)
	}
	for _, is := range issues {
		if strings.Contains(is.GetBody(), marker) {
			return is.GetNumber(), nil
		}
	}
	return 0, nil
}
