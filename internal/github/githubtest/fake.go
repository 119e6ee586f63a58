// Package githubtest is a struct fake of github.Client for table tests of
// the handlers' rules: no HTTP, just what a repository holds and every
// write recorded in order. The end-to-end tests use internal/testenv's
// HTTP fake instead, which checks each call against GitHub's OpenAPI
// description.
package githubtest

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	gogithub "github.com/google/go-github/v66/github"
	"github.com/palantir/go-githubapp/appconfig"

	"github.com/pitcrew/pitcrew/internal/github"
)

// Comment is a comment the fake holds, on an issue or a commit.
type Comment struct {
	ID     int64
	Issue  int    // 0 on a commit
	Commit string // "" on an issue
	Body   string
}

// Issue is an issue the fake opened.
type Issue struct {
	Number      int
	Title, Body string
	Labels      []string
}

// Fake is one installation's view of GitHub. Set the fields a test needs
// before use; read the writes after. Methods are safe for concurrent use.
type Fake struct {
	mu sync.Mutex

	// Config is the content of .github/pitcrew.yml; "" means no file.
	Config string
	// Permissions by login; a login not listed has "read".
	Permissions map[string]string
	// Installation is what InstallationFor answers for every repository.
	Installation int64

	// What the CI did: jobs by workflow run and attempt, their logs, the
	// check suite of each run, and annotations by job (check run) id.
	jobs        map[[2]int64][]github.CIJob
	logs        map[int64]string
	suites      map[int64]int64
	annotations map[int64][]github.Annotation

	labels map[string]bool

	// Workflows are the workflow files the repository has; Dispatches the
	// starts asked of them; Runs what WorkflowRuns lists.
	Workflows  map[string]bool
	Dispatches []Dispatch
	Runs       []github.WorkflowRun
	// Committers are the last committers by path; ReviewRequests the
	// reviews asked.
	Committers     map[string]string
	ReviewRequests []ReviewRequest
	// Reruns are the workflow runs whose failed jobs were re-run.
	Reruns []int64

	// Pulls are the pull requests the fake knows, and their diffs.
	Pulls map[int]github.PullRequest
	Diffs map[int]string
	// HeadFiles are the repository's files at a pull request's head, by path.
	HeadFiles map[string]string
	// Tests are the repository's test modules, by path (TestModules).
	Tests map[string]string
	// DiffErrs are what PullDiff answers instead of a diff.
	DiffErrs map[int]error
	// Files are the files each pull request changed.
	Files map[int][]github.ChangedFile
	// ReviewNotes are the inline comments of each review, by review id;
	// ReviewErrs what reading them answers instead.
	ReviewNotes map[int64][]github.ReviewComment
	ReviewErrs  map[int64]error
	// Suites are the check suites on every head: app slug → conclusion.
	Suites map[string]string

	Comments []Comment
	Issues   []Issue
	Checks   []github.CheckOutput
	// checkRuns are the ids of the check runs created, by head, name and
	// external id, for FindCheckRun.
	checkRuns map[[3]string]int64
	// Writes lists every call that changes GitHub, as "CreateComment #12".
	Writes []string
	// AfterWrite, when set, is called with each write once it is recorded
	// (with the fake locked): a test's way to fail what comes next.
	AfterWrite func(call string)

	next int64
}

var _ github.Client = (*Fake)(nil)

func (f *Fake) write(format string, args ...any) int64 {
	f.next++
	f.Writes = append(f.Writes, fmt.Sprintf(format, args...))
	if f.AfterWrite != nil {
		f.AfterWrite(f.Writes[len(f.Writes)-1])
	}
	return f.next
}

// Clients hands out the fake for every installation.
func (f *Fake) Clients() github.Clients { return clients{f} }

type clients struct{ f *Fake }

func (c clients) Installation(int64) (github.Client, error) { return c.f, nil }
func (c clients) InstallationFor(context.Context, github.Repo) (int64, error) {
	return c.f.Installation, nil
}

// LoadConfig implements github.Config.
func (f *Fake) LoadConfig(_ context.Context, repo github.Repo) (appconfig.Config, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Config == "" {
		return appconfig.Config{}, nil
	}
	return appconfig.Config{Content: []byte(f.Config), Source: repo.String() + "@main", Path: ".github/pitcrew.yml"}, nil
}

// DefaultBranch implements github.Config: "main".
func (f *Fake) DefaultBranch(context.Context, github.Repo) (string, error) { return "main", nil }

// WritesSoFar is a copy of Writes.
func (f *Fake) WritesSoFar() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.Writes...)
}

// Answered is the error go-github returns when GitHub answers status.
func Answered(status int) error {
	return &gogithub.ErrorResponse{Response: &http.Response{StatusCode: status, Request: &http.Request{Method: http.MethodGet}}, Message: http.StatusText(status)}
}
