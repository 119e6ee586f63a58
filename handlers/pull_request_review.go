package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	gogithub "github.com/google/go-github/v66/github"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/follow"
)

// PullRequestReview records reviews of a pull request an agent opened:
// each reviewer's latest approval or request for changes.
type PullRequestReview struct{ work.Env }

// Handles implements githubapp.EventHandler.
func (h *PullRequestReview) Handles() []string { return []string{"pull_request_review"} }

// Review is a review someone submitted or dismissed.
type Review struct {
	InstallationID int64
	Repo           github.Repo
	Number         int
	ID             int64
	Reviewer       string
	State          string // approved, changes_requested, commented, dismissed
	Body           string
	At             time.Time
}

// ParseReview reads a pull_request_review event; ok is false unless a
// person submitted or dismissed a review, for an installation.
func ParseReview(payload []byte) (ev Review, ok bool, err error) {
	var raw gogithub.PullRequestReviewEvent
	if err := json.Unmarshal(payload, &raw); err != nil {
		return Review{}, false, fmt.Errorf("decoding pull_request_review event: %w", err)
	}
	r, user := raw.GetReview(), raw.GetReview().GetUser()
	state := strings.ToLower(r.GetState())
	if raw.GetAction() == "dismissed" {
		state = "dismissed"
	}
	if (raw.GetAction() != "submitted" && raw.GetAction() != "dismissed") || raw.GetInstallation().GetID() <= 0 || raw.GetPullRequest().GetNumber() <= 0 ||
		user.GetLogin() == "" || user.GetType() == "Bot" || !maintainer[r.GetAuthorAssociation()] {
		return Review{}, false, nil
	}
	repo, err := github.ParseRepo(raw.GetRepo().GetFullName())
	if err != nil {
		return Review{}, false, err
	}
	return Review{InstallationID: raw.GetInstallation().GetID(), Repo: repo, Number: raw.GetPullRequest().GetNumber(), ID: r.GetID(), Reviewer: user.GetLogin(), State: state,
		Body: r.GetBody(), At: r.GetSubmittedAt().Time}, true, nil
}

// maintainer are the associations whose reviews count: a passer-by's
// approval on a public repository says nothing.
var maintainer = map[string]bool{"OWNER": true, "MEMBER": true, "COLLABORATOR": true}

// Handle implements githubapp.EventHandler: an approval or a request for
// changes is shown on the followed pull request's run; a review that asks
// pitcrew for more (a /pitcrew line) is a follow-up to that run. A review
// of a pull request no run opened costs no API call.
func (h *PullRequestReview) Handle(ctx context.Context, _, _ string, payload []byte) error {
	ev, ok, err := ParseReview(payload)
	if err != nil {
		return queue.Permanent(err)
	}
	if !ok {
		return nil
	}
	gh, err := h.Clients.Installation(ev.InstallationID)
	if err != nil {
		return err
	}
	if ev.State == "commented" || ev.State == "changes_requested" {
		// The follow-up first, unshown when a verdict follows: the
		// verdict's edit shows both.
		if err := follow.SendReview(ctx, &h.Env, gh, follow.Review{Repo: ev.Repo, Number: ev.Number, ID: ev.ID, Reviewer: ev.Reviewer, Body: ev.Body}, ev.State == "commented"); err != nil {
			return err
		}
	}
	if ev.State == "commented" {
		return nil
	}
	return follow.Update(ctx, &h.Env, gh, ev.Repo, ev.Number, follow.News{Apply: func(p *runs.Pull) { p.AddReview(ev.Reviewer, ev.State, ev.At) }})
}
