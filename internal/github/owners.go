package github

import (
	"context"
	"fmt"

	gogithub "github.com/google/go-github/v66/github"
)

// Owners are the GitHub calls that name and ask a test file's owners: who
// last changed it, and a review asked of them.
type Owners interface {
	// LastCommitter is the login of whoever made the last commit to path
	// on ref (its author's name when GitHub links no account); "" when no
	// commit touched it.
	LastCommitter(ctx context.Context, repo Repo, path, ref string) (string, error)
	// RequestReviewers asks users and teams (their slugs) to review a pull
	// request.
	RequestReviewers(ctx context.Context, repo Repo, number int, users, teams []string) error
}

func (g *restGitHub) LastCommitter(ctx context.Context, repo Repo, path, ref string) (string, error) {
	commits, _, err := g.c.Repositories.ListCommits(ctx, repo.Owner, repo.Name, &gogithub.CommitsListOptions{SHA: ref, Path: path, ListOptions: gogithub.ListOptions{PerPage: 1}})
	if err != nil {
		return "", fmt.Errorf("listing the commits of %s: %w", path, err)
	}
	if len(commits) == 0 {
		return "", nil
	}
	if login := commits[0].GetAuthor().GetLogin(); login != "" {
		return login, nil
	}
	return commits[0].GetCommit().GetAuthor().GetName(), nil
}

func (g *restGitHub) RequestReviewers(ctx context.Context, repo Repo, number int, users, teams []string) error {
	_, _, err := g.c.PullRequests.RequestReviewers(ctx, repo.Owner, repo.Name, number, gogithub.ReviewersRequest{Reviewers: users, TeamReviewers: teams})
	if err != nil {
		return fmt.Errorf("requesting reviews on #%d: %w", number, err)
	}
	return nil
}
