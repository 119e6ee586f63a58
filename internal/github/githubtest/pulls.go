package githubtest

import (
	"context"
	"strings"

	"github.com/pitcrew/pitcrew/internal/github"
)

// Pull requests, commits and their comments (github.Pulls).

// ReviewComments implements github.Pulls from ReviewNotes and ReviewErrs.
func (f *Fake) ReviewComments(_ context.Context, _ github.Repo, _ int, reviewID int64) ([]github.ReviewComment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.ReviewErrs[reviewID]; err != nil {
		return nil, err
	}
	return f.ReviewNotes[reviewID], nil
}

// ChangedFiles implements github.Pulls from Files.
func (f *Fake) ChangedFiles(_ context.Context, _ github.Repo, number int) ([]github.ChangedFile, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.Files[number], nil
}

// PullRequest implements github.Pulls from Pulls: unless a pull request
// there says otherwise, its head is in the repository asked for (NoRepo
// for none) and its size is its diff's (DiffSize).
func (f *Fake) PullRequest(_ context.Context, repo github.Repo, number int) (github.PullRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	pr, ok := f.Pulls[number]
	if !ok {
		return github.PullRequest{}, github.ErrPullGone
	}
	switch pr.HeadRepo {
	case "":
		pr.HeadRepo = repo.String()
	case NoRepo:
		pr.HeadRepo = ""
	}
	if pr.Size == nil {
		files, additions, deletions := DiffSize(f.Diffs[number])
		pr.Size = &github.PullSize{Files: files, Additions: additions, Deletions: deletions}
	}
	return pr, nil
}

// NoRepo is a PullRequest.HeadRepo for a head whose repository is gone.
const NoRepo = "(deleted)"

// DiffSize counts a unified diff as GitHub counts a pull request's
// change: files (one "diff --git" header each), added and deleted lines.
func DiffSize(diff string) (files, additions, deletions int) {
	inHunk := false
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			files++
			inHunk = false
		case strings.HasPrefix(l, "@@ "):
			inHunk = true
		case inHunk && strings.HasPrefix(l, "+"):
			additions++
		case inHunk && strings.HasPrefix(l, "-"):
			deletions++
		}
	}
	return files, additions, deletions
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

// ReactToReviewComment implements github.Pulls.
func (f *Fake) ReactToReviewComment(_ context.Context, _ github.Repo, id int64, content string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.write("ReactReview %d %s", id, content)
	return nil
}

// TestModules implements github.Pulls from Tests.
func (f *Fake) TestModules(context.Context, github.Repo, string) (map[string]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]string{}
	for p, c := range f.Tests {
		out[p] = c
	}
	return out, nil
}

// FileAt implements github.Pulls from HeadFiles (whatever the ref).
func (f *Fake) FileAt(_ context.Context, _ github.Repo, path, _ string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	content, ok := f.HeadFiles[path]
	if !ok {
		return "", github.ErrFileGone
	}
	return content, nil
}
