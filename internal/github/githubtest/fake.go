// Package githubtest is a struct fake of github.Client for table tests of
// the handlers' rules: no HTTP, just what a repository holds and every
// write recorded in order. The end-to-end tests use internal/testenv's
// HTTP fake instead, which checks each call against GitHub's OpenAPI
// description.
package githubtest

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

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

	// Pulls are the pull requests the fake knows, and their diffs.
	Pulls map[int]github.PullRequest
	Diffs map[int]string
	// DiffErrs are what PullDiff answers instead of a diff.
	DiffErrs map[int]error
	// Files are the files each pull request changed.
	Files map[int][]github.ChangedFile
	// ReviewNotes are the inline comments of each review, by review id.
	ReviewNotes map[int64][]github.ReviewComment
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

// Permission implements github.Issues.
func (f *Fake) Permission(_ context.Context, _ github.Repo, user string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p, ok := f.Permissions[user]; ok {
		return p, nil
	}
	return "read", nil
}

// CreateComment implements github.Issues.
func (f *Fake) CreateComment(_ context.Context, _ github.Repo, issue int, body string) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.write("CreateComment #%d", issue)
	f.Comments = append(f.Comments, Comment{ID: id, Issue: issue, Body: body})
	return id, nil
}

// EditComment implements github.Issues.
func (f *Fake) EditComment(_ context.Context, _ github.Repo, id int64, body string) error {
	return f.edit(id, body, "EditComment")
}

func (f *Fake) edit(id int64, body, call string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.Comments {
		if f.Comments[i].ID == id {
			f.write("%s %d", call, id)
			f.Comments[i].Body = body
			return nil
		}
	}
	return github.ErrCommentGone
}

// FindComment implements github.Issues.
func (f *Fake) FindComment(_ context.Context, _ github.Repo, issue int, marker string) (int64, error) {
	return f.find(func(c Comment) bool { return c.Issue == issue && strings.Contains(c.Body, marker) }), nil
}

func (f *Fake) find(match func(Comment) bool) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.Comments {
		if match(c) {
			return c.ID
		}
	}
	return 0
}

// CreateLabel implements github.Issues: created is false for a label the
// repository has (GitHub answers 422, names compared case-insensitively).
func (f *Fake) CreateLabel(_ context.Context, _ github.Repo, name, _, _ string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.labels[strings.ToLower(name)] {
		return false, nil
	}
	if f.labels == nil {
		f.labels = map[string]bool{}
	}
	f.labels[strings.ToLower(name)] = true
	f.write("CreateLabel %s", name)
	return true, nil
}

// CreateIssue implements github.Issues.
func (f *Fake) CreateIssue(_ context.Context, _ github.Repo, title, body string, labels []string) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 100 + len(f.Issues)
	f.write("CreateIssue #%d", n)
	f.Issues = append(f.Issues, Issue{Number: n, Title: title, Body: body, Labels: labels})
	return n, nil
}

// FindIssue implements github.Issues.
func (f *Fake) FindIssue(_ context.Context, _ github.Repo, label, marker, _ string) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, is := range f.Issues {
		if strings.Contains(is.Body, marker) && slices.ContainsFunc(is.Labels, func(l string) bool { return strings.EqualFold(l, label) }) {
			return is.Number, nil
		}
	}
	return 0, nil
}

// EditIssueBody implements github.Issues.
func (f *Fake) EditIssueBody(_ context.Context, _ github.Repo, number int, body string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.Issues {
		if f.Issues[i].Number == number {
			f.write("EditIssueBody #%d", number)
			f.Issues[i].Body = body
			return nil
		}
	}
	return fmt.Errorf("githubtest: no issue #%d: %w", number, github.ErrIssueGone)
}

// ReviewComments implements github.Pulls from ReviewNotes.
func (f *Fake) ReviewComments(_ context.Context, _ github.Repo, _ int, reviewID int64) ([]github.ReviewComment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ReviewNotes[reviewID], nil
}

// ChangedFiles implements github.Pulls from Files.
func (f *Fake) ChangedFiles(_ context.Context, _ github.Repo, number int) ([]github.ChangedFile, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.Files[number], nil
}

// PullRequest implements github.Pulls from Pulls.
func (f *Fake) PullRequest(_ context.Context, _ github.Repo, number int) (github.PullRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	pr, ok := f.Pulls[number]
	if !ok {
		return github.PullRequest{}, github.ErrPullGone
	}
	return pr, nil
}

// PullDiff implements github.Pulls from Diffs.
func (f *Fake) PullDiff(_ context.Context, _ github.Repo, number int) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.DiffErrs[number]; err != nil {
		return "", err
	}
	d, ok := f.Diffs[number]
	if !ok {
		return "", github.ErrPullGone
	}
	return d, nil
}

// MergedPullFor implements github.Pulls.
func (f *Fake) MergedPullFor(context.Context, github.Repo, string) (int, error) { return 0, nil }

// CreateCommitComment implements github.Pulls.
func (f *Fake) CreateCommitComment(_ context.Context, _ github.Repo, sha, body string) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.write("CreateCommitComment %.7s", sha)
	f.Comments = append(f.Comments, Comment{ID: id, Commit: sha, Body: body})
	return id, nil
}

// EditCommitComment implements github.Pulls.
func (f *Fake) EditCommitComment(_ context.Context, _ github.Repo, id int64, body string) error {
	return f.edit(id, body, "EditCommitComment")
}

// FindCommitComment implements github.Pulls.
func (f *Fake) FindCommitComment(_ context.Context, _ github.Repo, sha, marker string) (int64, error) {
	return f.find(func(c Comment) bool { return c.Commit == sha && strings.Contains(c.Body, marker) }), nil
}

// CommitOnBranch implements github.Pulls: every commit is on every branch.
func (f *Fake) CommitOnBranch(context.Context, github.Repo, string, string) (bool, error) {
	return true, nil
}

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

// ReactToComment implements github.Issues.
func (f *Fake) ReactToComment(_ context.Context, _ github.Repo, id int64, content string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.write("React %d %s", id, content)
	return nil
}

// ReactToReviewComment implements github.Pulls.
func (f *Fake) ReactToReviewComment(_ context.Context, _ github.Repo, id int64, content string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.write("ReactReview %d %s", id, content)
	return nil
}

// WritesSoFar is a copy of Writes.
func (f *Fake) WritesSoFar() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.Writes...)
}
