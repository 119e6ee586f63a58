// Package github is how pitcrew reaches GitHub: the narrow interfaces the
// handlers use, split by resource (issues, pulls, actions, checks), their
// go-github implementation and the retry transport under it. Nothing else
// in pitcrew imports go-github.
package github

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	gogithub "github.com/google/go-github/v66/github"
	"github.com/palantir/go-githubapp/appconfig"
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

// ValidSHA reports whether s is a full commit id as GitHub writes it: 40
// lower-case hex digits.
func ValidSHA(s string) bool {
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

// Client is the part of GitHub's REST API pitcrew uses, as one
// installation sees it, split by resource so that a handler can declare
// only the part it needs. Keeping it narrow keeps the handlers' needs (and
// the API calls each trigger costs) visible in one place.
type Client interface {
	Config
	Issues
	Pulls
	Actions
	Checks
	Workflows
	Owners
}

// Config reads a repository's pitcrew configuration file.
type Config interface {
	// LoadConfig reads the raw .github/pitcrew.yml of repo, falling back to
	// the owner's .github repository; an empty Content means no file.
	LoadConfig(ctx context.Context, repo Repo) (appconfig.Config, error)
	// DefaultBranch is the name of repo's default branch, the ref
	// LoadConfig reads (its Source leaves the ref empty).
	DefaultBranch(ctx context.Context, repo Repo) (string, error)
}

// Issues are issues, their comments and labels, and who may act on them.
type Issues interface {
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
	// FindIssue returns the number of an issue opened by author (the app's
	// bot user; "" for any bot) that carries label and whose body contains
	// marker, or 0.
	FindIssue(ctx context.Context, repo Repo, label, marker, author string) (int, error)
	// EditIssueBody replaces an issue's body; ErrIssueGone when the issue
	// was deleted.
	EditIssueBody(ctx context.Context, repo Repo, number int, body string) error
	// ReactToComment puts a reaction (GitHub's content names: "eyes", "+1",
	// ...) on a comment of an issue or pull request; reacting twice is one
	// reaction.
	ReactToComment(ctx context.Context, repo Repo, commentID int64, content string) error
}

// Pulls are pull requests, commits and their comments.
type Pulls interface {
	// PullRequest reads a pull request; ErrPullGone when it does not exist.
	PullRequest(ctx context.Context, repo Repo, number int) (PullRequest, error)
	// PullDiff reads a pull request's unified diff; ErrDiffTooLarge when
	// GitHub will not produce it (over its own bounds).
	PullDiff(ctx context.Context, repo Repo, number int) (string, error)
	// FileAt reads a file as it is at ref (a pull request's head);
	// ErrFileGone when it is not there, ErrFileTooLarge past MaxFileAt.
	FileAt(ctx context.Context, repo Repo, path, ref string) (string, error)
	// TestModules reads the repository's test modules (*_test.exs) at ref
	// from its tarball, bounded (ReadTestModules); ErrTarballCut with what
	// was read when the repository is larger.
	TestModules(ctx context.Context, repo Repo, ref string) (map[string]string, error)
	// ChangedFiles lists the files a pull request changed (all pages).
	ChangedFiles(ctx context.Context, repo Repo, number int) ([]ChangedFile, error)
	// ReviewComments lists a review's inline comments (the first 100).
	ReviewComments(ctx context.Context, repo Repo, number int, reviewID int64) ([]ReviewComment, error)
	// ReactToReviewComment puts a reaction on an inline comment of a review.
	ReactToReviewComment(ctx context.Context, repo Repo, commentID int64, content string) error
	// MergedPullFor returns the number of a merged pull request that
	// contains commit, or 0.
	MergedPullFor(ctx context.Context, repo Repo, sha string) (int, error)
	// CreateCommitComment comments on a commit; EditCommitComment returns
	// ErrCommentGone when the comment was deleted; FindCommitComment returns
	// the id of the app's comment containing marker, or 0.
	CreateCommitComment(ctx context.Context, repo Repo, sha, body string) (int64, error)
	EditCommitComment(ctx context.Context, repo Repo, id int64, body string) error
	FindCommitComment(ctx context.Context, repo Repo, sha, marker string) (int64, error)
	// CommitOnBranch reports whether sha is on the repository's branch (its
	// head or an ancestor of it); false when either does not exist there.
	CommitOnBranch(ctx context.Context, repo Repo, branch, sha string) (bool, error)
}

// ReviewComment is an inline comment of a review: where, and what it says.
type ReviewComment struct {
	ID   int64
	Path string
	Line int // in the new file; 0 for a comment on the whole file
	Body string
}

// Actions are GitHub Actions workflow runs: their jobs and logs.
type Actions interface {
	// Jobs lists the jobs of one attempt of a workflow run.
	Jobs(ctx context.Context, repo Repo, runID int64, attempt int) ([]CIJob, error)
	// JobLog opens a job's log, following GitHub's redirect to the
	// short-lived download URL.
	JobLog(ctx context.Context, repo Repo, jobID int64) (io.ReadCloser, error)
}

// Checks are check suites and check runs: the CI's and pitcrew's own.
type Checks interface {
	// SuiteCheckRuns lists the latest check runs of a check suite (for a
	// workflow run: one per job, its id the job's), with how many
	// annotations each carries.
	SuiteCheckRuns(ctx context.Context, repo Repo, suiteID int64) ([]CIJob, error)
	// CheckRunAnnotations lists a check run's first 100 annotations.
	CheckRunAnnotations(ctx context.Context, repo Repo, checkRunID int64) ([]Annotation, error)
	// ChecksNamed lists the completed check runs named name on ref, from
	// every attempt (filter=all).
	ChecksNamed(ctx context.Context, repo Repo, ref, name string) ([]CICheck, error)
	// HeadSuites lists the check suites on a commit that ran check runs,
	// by SuiteKey: each one's conclusion, "" while it runs.
	HeadSuites(ctx context.Context, repo Repo, sha string) (map[string]string, error)
	// CreateCheckRun creates a completed check run on a commit.
	CreateCheckRun(ctx context.Context, repo Repo, sha string, out CheckOutput) (int64, error)
	// UpdateCheckRun replaces a check run's output.
	UpdateCheckRun(ctx context.Context, repo Repo, id int64, out CheckOutput) error
	// FindCheckRun returns the id of the app's check run named name on sha
	// whose external id is externalID, or 0.
	FindCheckRun(ctx context.Context, repo Repo, sha, name, externalID string) (int64, error)
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
	Title   string // pitcrew's own annotations only
}

// CICheck is a CI's check run with the text it reported.
type CICheck struct {
	ID         int64
	Conclusion string
	Text       string // output summary and text, as the log of the run
}

// CheckOutput is what pitcrew's check run shows. Conclusion is neutral
// unless set (pitcrew's checks inform; they never fail a merge).
type CheckOutput struct {
	Name, ExternalID, Title, Summary, DetailsURL string
	Conclusion                                   string
	Annotations                                  []Annotation // at most 50 (GitHub's limit per request)
}

// PullRequest is a pull request as pitcrew follows it.
type PullRequest struct {
	Number   int
	State    string // open or closed
	Merged   bool
	MergedAt time.Time
	HeadSHA  string
	HeadRepo string // owner/name the head branch is in (a fork's for a fork)
	BaseSHA  string // the base branch's commit the head is compared with
	Author   string // the login of who opened it
	// Size is what GitHub counts of the change (files, added and deleted
	// lines), which its diff must hold; nil when GitHub did not say.
	Size *PullSize
}

// PullSize is a pull request's change as GitHub counts it.
type PullSize struct{ Files, Additions, Deletions int }

// ErrPathRefused is a path FileAt does not ask GitHub for: go-github
// refuses one holding "..", which git allows in a file's name.
var ErrPathRefused = errors.New("the path holds '..', which pitcrew's GitHub client does not ask for")

// StatusOf is the HTTP status of GitHub's answer err carries, 0 when it
// carries none (no answer: a timeout, a refused connection).
func StatusOf(err error) int {
	var e *gogithub.ErrorResponse
	if errors.As(err, &e) && e.Response != nil {
		return e.Response.StatusCode
	}
	var limited *gogithub.RateLimitError
	if errors.As(err, &limited) && limited.Response != nil {
		return limited.Response.StatusCode
	}
	var abuse *gogithub.AbuseRateLimitError
	if errors.As(err, &abuse) && abuse.Response != nil {
		return abuse.Response.StatusCode
	}
	return 0
}

// Describe is what went wrong in a GitHub call, for a reader: its status.
func Describe(err error) string {
	if status := StatusOf(err); status != 0 {
		return fmt.Sprintf("it answered %d", status)
	}
	return "no answer"
}

// ErrPullGone means the pull request does not exist (any more).
var ErrPullGone = errors.New("the pull request does not exist")

// ErrDiffTooLarge means GitHub refused to produce a pull request's diff.
var ErrDiffTooLarge = errors.New("the pull request's diff is too large for GitHub to produce")

// ErrFileGone is a file FileAt did not find at the ref; ErrFileTooLarge
// one larger than MaxFileAt.
var (
	ErrFileGone     = errors.New("the file is not there")
	ErrFileTooLarge = errors.New("the file is larger than pitcrew reads")
)

// ErrIssueGone means an issue was deleted (or moved where the app cannot
// see it).
var ErrIssueGone = errors.New("issue no longer exists")

// ErrCommentGone means a status comment was deleted by someone.
var ErrCommentGone = errors.New("comment no longer exists")

// Clients hands out the GitHub API for an installation.
type Clients interface {
	Installation(id int64) (Client, error)
	// InstallationFor finds the app's installation on a repository; 0 when
	// the app is not installed there.
	InstallationFor(ctx context.Context, repo Repo) (int64, error)
}
