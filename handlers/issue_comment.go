package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	gogithub "github.com/google/go-github/v66/github"

	"github.com/pitcrew/pitcrew/commands"
	"github.com/pitcrew/pitcrew/hook"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/follow"
	"github.com/pitcrew/pitcrew/work/profiling"
)

// IssueComment acts on the /pitcrew commands people write in comments on
// issues and pull requests. A comment without one is people talking and
// costs nothing.
type IssueComment struct{ work.Env }

// Handles implements githubapp.EventHandler.
func (h *IssueComment) Handles() []string { return []string{"issue_comment"} }

// Comment is a comment a person wrote on an issue or a pull request.
type Comment struct {
	InstallationID int64
	Repo           github.Repo
	Issue          int  // the issue's or the pull request's number
	OnPull         bool // the comment is on a pull request
	ID             int64
	Author         string
	Association    string // the author's association with the repository: OWNER, MEMBER, COLLABORATOR, NONE, ...
	Body           string
}

// commentCommand reads a comment's command; act is false for a comment
// that is none (see ParseComment), holds none, or whose author the
// repository does not know: on a public repository, anyone, and answering
// each would let a crowd make pitcrew write.
func commentCommand(payload []byte) (ev Comment, cmd commands.Command, act bool, err error) {
	ev, ok, err := ParseComment(payload)
	if err != nil || !ok {
		return ev, cmd, false, err
	}
	cmd, ok = commands.First(ev.Body)
	return ev, cmd, ok && maintainer[ev.Association], nil
}

// ParseComment reads an issue_comment event; ok is false unless a person
// (not a bot) created a comment, for an installation. An edited comment is
// not read: a command edited in after the fact is not a new command.
func ParseComment(payload []byte) (ev Comment, ok bool, err error) {
	var raw gogithub.IssueCommentEvent
	if err := json.Unmarshal(payload, &raw); err != nil {
		return Comment{}, false, fmt.Errorf("decoding issue_comment event: %w", err)
	}
	c, user := raw.GetComment(), raw.GetComment().GetUser()
	if raw.GetAction() != "created" || raw.GetInstallation().GetID() <= 0 || raw.GetIssue().GetNumber() <= 0 || c.GetID() <= 0 ||
		user.GetLogin() == "" || user.GetType() == "Bot" || strings.HasSuffix(user.GetLogin(), "[bot]") {
		return Comment{}, false, nil
	}
	repo, err := github.ParseRepo(raw.GetRepo().GetFullName())
	if err != nil {
		return Comment{}, false, err
	}
	return Comment{InstallationID: raw.GetInstallation().GetID(), Repo: repo, Issue: raw.GetIssue().GetNumber(),
		OnPull: raw.GetIssue().IsPullRequest(), ID: c.GetID(), Author: user.GetLogin(), Association: c.GetAuthorAssociation(), Body: c.GetBody()}, true, nil
}

// commentShape is what the intake reads of an issue_comment body for
// Ignored: ParseComment's type, and the values commentCommand decides by.
var commentShape = hook.MustShape(reflect.TypeFor[gogithub.IssueCommentEvent](), "action", "installation.id", "issue.number",
	"comment.id", "comment.user.login", "comment.user.type", "comment.body", "comment.author_association", "repository.full_name")

// commentIgnored is commentCommand's err == nil && !act, from the intake's
// reading of the body.
func commentIgnored(v *hook.View) bool {
	if !v.Fits() {
		return false
	}
	login := hook.Text(v.Last("comment.user.login"))
	if string(hook.Text(v.Last("action"))) != "created" || hook.Int(v.Last("installation.id")) <= 0 || hook.Int(v.Last("issue.number")) <= 0 ||
		hook.Int(v.Last("comment.id")) <= 0 || len(login) == 0 || string(hook.Text(v.Last("comment.user.type"))) == "Bot" || bytes.HasSuffix(login, []byte("[bot]")) {
		return true
	}
	if _, err := github.ParseRepo(string(hook.Text(v.Last("repository.full_name")))); err != nil {
		return false
	}
	_, ok := commands.First(string(hook.Text(v.Last("comment.body"))))
	return !ok || !maintainer[string(hook.Text(v.Last("comment.author_association")))]
}

// Handle implements githubapp.EventHandler: one command per comment, acted
// on once, from people with write access only.
func (h *IssueComment) Handle(ctx context.Context, _, deliveryID string, payload []byte) error {
	ev, cmd, act, err := commentCommand(payload)
	if err != nil {
		return queue.Permanent(err)
	}
	if !act {
		return nil
	}
	gh, err := h.Clients.Installation(ev.InstallationID)
	if err != nil {
		return err
	}
	return h.Once(ctx, ev.Repo, fmt.Sprintf("comment:%d", ev.ID), func() error {
		perm, err := gh.Permission(ctx, ev.Repo, ev.Author)
		if err != nil {
			return err
		}
		if !work.MayCommand(perm) {
			return h.Refuse(ctx, gh, ev.Repo, ev.Issue, ev.Author, perm)
		}
		if err := gh.ReactToComment(ctx, ev.Repo, ev.ID, "eyes"); err != nil {
			return err
		}
		answer, err := h.act(ctx, gh, ev, cmd, deliveryID)
		if err != nil || answer == "" {
			return err
		}
		return work.Reply(ctx, gh, ev.Repo, ev.Issue, answer)
	})
}

// act does what cmd asks on the comment's issue or pull request, and says
// what to answer ("" when what it did shows elsewhere: the status comment).
func (h *IssueComment) act(ctx context.Context, gh github.Client, ev Comment, cmd commands.Command, delivery string) (string, error) {
	subject := runs.Subject{Repo: ev.Repo.String(), Issue: ev.Issue}
	switch cmd.Name {
	case commands.Retry:
		if again, err := follow.VerifyAgain(ctx, &h.Env, gh, subject, ev.OnPull); again || err != nil {
			return "", err // the status comment says the verification runs again
		}
		return h.Retry(ctx, gh, subject, ev.InstallationID, delivery)
	case commands.Profile:
		if !ev.OnPull {
			return "`/pitcrew profile` profiles an open pull request's migrations before it merges; write it on that pull request.", nil
		}
		return profiling.PullHead(ctx, &h.Env, gh, ev.InstallationID, ev.Repo, ev.Issue, delivery)
	case commands.OpenPR:
		if !ev.OnPull {
			return "`/pitcrew open-pr` opens the change a slow-query report measured; write it on the merged pull request that got the report.", nil
		}
		return follow.OpenPR(ctx, &h.Env, gh, ev.Repo, ev.Issue, ev.Author, ev.ID)
	case commands.Help:
		return helpText(""), nil
	}
	if ev.OnPull && cmd.Text != "" {
		// Any other text on a pull request an agent opened is for its run.
		runID, err := h.Ledger.PullRun(ctx, ev.Repo.String(), ev.Issue)
		if err != nil {
			return "", err
		}
		if runID != "" {
			return h.commentFollowUp(ctx, gh, ev, runID)
		}
	}
	return helpText(cmd.Text), nil
}

// commentFollowUp sends a comment on the agent's pull request to the run
// that opened it, as a reviewer's data.
func (h *IssueComment) commentFollowUp(ctx context.Context, gh github.Client, ev Comment, runID string) (string, error) {
	f := runs.FollowUp{Reason: "the comment by " + publish.Code(ev.Author, 100), Source: fmt.Sprintf("comment:%d", ev.ID)}
	return follow.Send(ctx, &h.Env, gh, ev.Repo, runID, f, "review", prompts.ReviewInput{PR: ev.Issue, Reviewer: ev.Author, Body: ev.Body}, true)
}

// helpText is the answer to /pitcrew help, and to a command pitcrew does
// not know (unknown, as written).
func helpText(unknown string) string {
	var b strings.Builder
	if unknown != "" {
		fmt.Fprintf(&b, "pitcrew does not know %s.\n\n", publish.Code("/pitcrew "+unknown, 100))
	}
	b.WriteString("pitcrew acts on a comment line that starts with `/pitcrew`, from people with write access, once per comment:\n\n" +
		"- `/pitcrew retry` on an issue pitcrew answers on (a flaky test, an alert's tracking issue, a merge's report): a new run, when none is live, within the daily limit.\n" +
		"- `/pitcrew profile` on an open pull request that adds migrations, from a branch of this repository (not a fork): the slow-query report of its head, before the change ships.\n" +
		"- `/pitcrew open-pr` on a merged pull request that got a slow-query report: the profiling session opens the migration and query change it measured as a pull request.\n" +
		"- On a pull request an agent opened, a review (changes requested, or comments) with a `/pitcrew` line goes to that agent's run, with its inline comments.\n" +
		"- `/pitcrew help`: this list.\n")
	return b.String()
}
