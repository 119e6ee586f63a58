package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	gogithub "github.com/google/go-github/v66/github"
	"github.com/palantir/go-githubapp/appconfig"
	"github.com/palantir/go-githubapp/githubapp"

	"github.com/pitcrew/pitcrew/internal/repoconfig"
)

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

func (c *restClients) Installation(id int64) (Client, error) {
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
	c        *gogithub.Client
	loader   *appconfig.Loader
	download *http.Client
}

func (g *restGitHub) LoadConfig(ctx context.Context, repo Repo) (appconfig.Config, error) {
	return g.loader.LoadConfig(ctx, g.c, repo.Owner, repo.Name, "")
}

func (g *restGitHub) DefaultBranch(ctx context.Context, repo Repo) (string, error) {
	r, _, err := g.c.Repositories.Get(ctx, repo.Owner, repo.Name)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", repo, err)
	}
	return r.GetDefaultBranch(), nil
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
	c, _, err := g.c.Issues.CreateComment(ctx, repo.Owner, repo.Name, issue, &gogithub.IssueComment{Body: &body})
	if err != nil {
		return 0, fmt.Errorf("commenting on %s#%d: %w", repo, issue, err)
	}
	return c.GetID(), nil
}

func (g *restGitHub) EditComment(ctx context.Context, repo Repo, id int64, body string) error {
	_, _, err := g.c.Issues.EditComment(ctx, repo.Owner, repo.Name, id, &gogithub.IssueComment{Body: &body})
	if isStatus(err, http.StatusNotFound) {
		return ErrCommentGone
	}
	if err != nil {
		return fmt.Errorf("editing comment %d on %s: %w", id, repo, err)
	}
	return nil
}

func (g *restGitHub) ReactToComment(ctx context.Context, repo Repo, commentID int64, content string) error {
	if _, _, err := g.c.Reactions.CreateIssueCommentReaction(ctx, repo.Owner, repo.Name, commentID, content); err != nil {
		return fmt.Errorf("reacting to comment %d on %s: %w", commentID, repo, err)
	}
	return nil
}

func (g *restGitHub) FindComment(ctx context.Context, repo Repo, issue int, marker string) (int64, error) {
	opts := &gogithub.IssueListCommentsOptions{ListOptions: gogithub.ListOptions{PerPage: 100}}
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
	_, _, err := g.c.Issues.CreateLabel(ctx, repo.Owner, repo.Name, &gogithub.Label{Name: &name, Color: &color, Description: &description})
	if isStatus(err, http.StatusUnprocessableEntity) {
		return false, nil // already_exists
	}
	if err != nil {
		return false, fmt.Errorf("creating label %q in %s: %w", name, repo, err)
	}
	return true, nil
}

func isStatus(err error, code int) bool {
	var e *gogithub.ErrorResponse
	return errors.As(err, &e) && e.Response != nil && e.Response.StatusCode == code
}

func (g *restGitHub) CreateIssue(ctx context.Context, repo Repo, title, body string, labels []string) (int, error) {
	is, _, err := g.c.Issues.Create(ctx, repo.Owner, repo.Name, &gogithub.IssueRequest{Title: &title, Body: &body, Labels: &labels})
	if err != nil {
		return 0, fmt.Errorf("opening an issue in %s: %w", repo, err)
	}
	return is.GetNumber(), nil
}

func (g *restGitHub) EditIssueBody(ctx context.Context, repo Repo, number int, body string) error {
	is, _, err := g.c.Issues.Edit(ctx, repo.Owner, repo.Name, number, &gogithub.IssueRequest{Body: &body})
	if isStatus(err, http.StatusNotFound) || isStatus(err, http.StatusGone) {
		return fmt.Errorf("editing %s#%d: %w", repo, number, ErrIssueGone)
	}
	if err != nil {
		return fmt.Errorf("editing %s#%d: %w", repo, number, err)
	}
	// A transferred issue answers 301, which the HTTP client follows as a
	// GET of its new place: nothing was edited.
	if u := is.GetRepositoryURL(); is.GetNumber() != number || u != "" && !strings.HasSuffix(strings.ToLower(u), "/repos/"+strings.ToLower(repo.String())) {
		return fmt.Errorf("editing %s#%d: the issue moved: %w", repo, number, ErrIssueGone)
	}
	return nil
}

func (g *restGitHub) FindIssue(ctx context.Context, repo Repo, label, marker, author string) (int, error) {
	opts := &gogithub.IssueListByRepoOptions{Labels: []string{label}, State: "all", ListOptions: gogithub.ListOptions{PerPage: 100}}
	issues, _, err := g.c.Issues.ListByRepo(ctx, repo.Owner, repo.Name, opts)
	if err != nil {
		return 0, fmt.Errorf("listing %s issues of %s: %w", label, repo, err)
	}
	for _, is := range issues {
		// Only the app's own issues: anyone who can label, or another app,
		// could write the marker.
		u := is.GetUser()
		if u.GetType() == "Bot" && (author == "" || strings.EqualFold(u.GetLogin(), author)) && strings.Contains(is.GetBody(), marker) {
			return is.GetNumber(), nil
		}
	}
	return 0, nil
}
