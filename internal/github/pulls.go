package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	gogithub "github.com/google/go-github/v66/github"
)

// The GitHub calls of the migration job: a merge's files, and comments on
// commits pushed without a pull request.

func (g *restGitHub) ReviewComments(ctx context.Context, repo Repo, number int, reviewID int64) ([]ReviewComment, error) {
	cs, _, err := g.c.PullRequests.ListReviewComments(ctx, repo.Owner, repo.Name, number, reviewID, &gogithub.ListOptions{PerPage: 100})
	if err != nil {
		return nil, fmt.Errorf("listing the comments of review %d on #%d: %w", reviewID, number, err)
	}
	out := make([]ReviewComment, 0, len(cs))
	for _, c := range cs {
		out = append(out, ReviewComment{ID: c.GetID(), Path: c.GetPath(), Line: c.GetLine(), Body: c.GetBody()})
	}
	return out, nil
}

func (g *restGitHub) ReactToReviewComment(ctx context.Context, repo Repo, commentID int64, content string) error {
	if _, _, err := g.c.Reactions.CreatePullRequestCommentReaction(ctx, repo.Owner, repo.Name, commentID, content); err != nil {
		return fmt.Errorf("reacting to review comment %d on %s: %w", commentID, repo, err)
	}
	return nil
}

func (g *restGitHub) ChangedFiles(ctx context.Context, repo Repo, number int) ([]ChangedFile, error) {
	var out []ChangedFile
	opts := &gogithub.ListOptions{PerPage: 100}
	for {
		files, resp, err := g.c.PullRequests.ListFiles(ctx, repo.Owner, repo.Name, number, opts)
		if err != nil {
			return nil, fmt.Errorf("listing the files of %s#%d: %w", repo, number, err)
		}
		for _, f := range files {
			out = append(out, ChangedFile{Path: f.GetFilename(), Status: f.GetStatus()})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

func (g *restGitHub) MergedPullFor(ctx context.Context, repo Repo, sha string) (int, error) {
	prs, _, err := g.c.PullRequests.ListPullRequestsWithCommit(ctx, repo.Owner, repo.Name, sha, &gogithub.ListOptions{PerPage: 100})
	if err != nil {
		return 0, fmt.Errorf("listing pull requests of %s: %w", sha, err)
	}
	for _, pr := range prs {
		if pr.MergedAt != nil {
			return pr.GetNumber(), nil
		}
	}
	return 0, nil
}

func (g *restGitHub) CreateCommitComment(ctx context.Context, repo Repo, sha, body string) (int64, error) {
	c, _, err := g.c.Repositories.CreateComment(ctx, repo.Owner, repo.Name, sha, &gogithub.RepositoryComment{Body: &body})
	if err != nil {
		return 0, fmt.Errorf("commenting on %s: %w", sha, err)
	}
	return c.GetID(), nil
}

func (g *restGitHub) EditCommitComment(ctx context.Context, repo Repo, id int64, body string) error {
	_, _, err := g.c.Repositories.UpdateComment(ctx, repo.Owner, repo.Name, id, &gogithub.RepositoryComment{Body: &body})
	if isStatus(err, http.StatusNotFound) {
		return ErrCommentGone
	}
	if err != nil {
		return fmt.Errorf("editing commit comment %d: %w", id, err)
	}
	return nil
}

func (g *restGitHub) FindCommitComment(ctx context.Context, repo Repo, sha, marker string) (int64, error) {
	cs, _, err := g.c.Repositories.ListCommitComments(ctx, repo.Owner, repo.Name, sha, &gogithub.ListOptions{PerPage: 100})
	if err != nil {
		return 0, fmt.Errorf("listing comments of %s: %w", sha, err)
	}
	for _, c := range cs {
		if c.GetUser().GetType() == "Bot" && strings.Contains(c.GetBody(), marker) {
			return c.GetID(), nil
		}
	}
	return 0, nil
}

func (g *restGitHub) PullRequest(ctx context.Context, repo Repo, number int) (PullRequest, error) {
	pr, _, err := g.c.PullRequests.Get(ctx, repo.Owner, repo.Name, number)
	if isStatus(err, http.StatusNotFound) {
		return PullRequest{}, ErrPullGone
	}
	if err != nil {
		return PullRequest{}, fmt.Errorf("reading %s#%d: %w", repo, number, err)
	}
	out := PullRequest{Number: pr.GetNumber(), State: pr.GetState(), Merged: pr.GetMerged(), MergedAt: pr.GetMergedAt().Time,
		HeadSHA: pr.GetHead().GetSHA(), HeadRepo: pr.GetHead().GetRepo().GetFullName(), BaseSHA: pr.GetBase().GetSHA(), Author: pr.GetUser().GetLogin()}
	if pr.ChangedFiles != nil && pr.Additions != nil && pr.Deletions != nil {
		out.Size = &PullSize{Files: pr.GetChangedFiles(), Additions: pr.GetAdditions(), Deletions: pr.GetDeletions()}
	}
	return out, nil
}

func (g *restGitHub) PullDiff(ctx context.Context, repo Repo, number int) (string, error) {
	diff, _, err := g.c.PullRequests.GetRaw(ctx, repo.Owner, repo.Name, number, gogithub.RawOptions{Type: gogithub.Diff})
	switch {
	case isStatus(err, http.StatusNotFound):
		return "", ErrPullGone
	case isStatus(err, http.StatusNotAcceptable), isStatus(err, http.StatusUnprocessableEntity):
		return "", ErrDiffTooLarge // "the diff exceeded the maximum number of files/lines"
	case err != nil:
		return "", fmt.Errorf("reading the diff of %s#%d: %w", repo, number, err)
	}
	return diff, nil
}

// MaxFileAt bounds the files FileAt reads: a test module, not a fixture.
const MaxFileAt = 1 << 20

func (g *restGitHub) FileAt(ctx context.Context, repo Repo, path, ref string) (string, error) {
	f, _, _, err := g.c.Repositories.GetContents(ctx, repo.Owner, repo.Name, path, &gogithub.RepositoryContentGetOptions{Ref: ref})
	switch {
	case isStatus(err, http.StatusNotFound):
		return "", ErrFileGone
	case errors.Is(err, gogithub.ErrPathForbidden):
		return "", ErrPathRefused
	case err != nil:
		return "", fmt.Errorf("reading %s of %s at %s: %w", path, repo, ref, err)
	case f == nil:
		return "", ErrFileGone // a directory
	case f.GetSize() > MaxFileAt:
		return "", ErrFileTooLarge
	}
	content, err := f.GetContent()
	if err != nil {
		return "", fmt.Errorf("decoding %s of %s at %s: %w", path, repo, ref, err)
	}
	return content, nil
}
