package follow

import (
	"context"
	"fmt"

	"github.com/pitcrew/pitcrew/commands"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
)

// Review is a review a person with a say in the repository submitted on
// a pull request.
type Review struct {
	Repo     github.Repo
	Number   int
	ID       int64
	Reviewer string
	Body     string
}

// SendReview sends a review of a followed pull request to the run that
// opened it, when the review or one of its inline comments has a /pitcrew
// line: the review's text and each inline comment with its file and line,
// as a reviewer's data. Once per review, from people with write access,
// within followups.max_per_run. show is as for Send.
func SendReview(ctx context.Context, b *work.Env, gh github.Client, ev Review, show bool) error {
	runID, err := b.Ledger.PullRun(ctx, ev.Repo.String(), ev.Number)
	if err != nil || runID == "" {
		return err
	}
	notes, err := gh.ReviewComments(ctx, ev.Repo, ev.Number, ev.ID)
	unread := unreadable(ctx, err)
	if err != nil && unread == "" {
		return err
	}
	_, asks := commands.First(ev.Body)
	if unread != "" && !asks {
		// A command in an inline comment cannot be seen: say so, once.
		return b.Once(ctx, ev.Repo, fmt.Sprintf("review:%d", ev.ID), func() error {
			return work.Reply(ctx, gh, ev.Repo, ev.Number, fmt.Sprintf("pitcrew could not read the inline comments of the review by %s (%s), so a `/pitcrew` line in one of them did not reach the run. Write it in a comment on this pull request instead.",
				publish.Code(ev.Reviewer, 100), unread))
		})
	}
	var ack int64 // the inline comment with the command, acknowledged with eyes (GitHub has no reactions on a review itself)
	for _, n := range notes {
		if _, found := commands.First(n.Body); found && !asks && ack == 0 {
			ack = n.ID
		}
	}
	if !asks && ack == 0 {
		return nil
	}
	source := fmt.Sprintf("review:%d", ev.ID)
	return b.Once(ctx, ev.Repo, source, func() error {
		answer, err := askReview(ctx, b, gh, ev, runID, source, notes, ack, show)
		if err != nil || answer == "" {
			return err
		}
		return work.Reply(ctx, gh, ev.Repo, ev.Number, answer)
	})
}

// askReview checks the reviewer may ask, then sends the follow-up; it
// says why when it sends nothing.
func askReview(ctx context.Context, b *work.Env, gh github.Client, ev Review, runID, source string, notes []github.ReviewComment, ack int64, show bool) (string, error) {
	perm, err := gh.Permission(ctx, ev.Repo, ev.Reviewer)
	if err != nil {
		return "", err
	}
	if !work.MayCommand(perm) {
		return "", b.Refuse(ctx, gh, ev.Repo, ev.Number, ev.Reviewer, perm)
	}
	if ack != 0 {
		if err := gh.ReactToReviewComment(ctx, ev.Repo, ack, "eyes"); err != nil {
			return "", err
		}
	}
	in := prompts.ReviewInput{PR: ev.Number, Reviewer: ev.Reviewer, Body: ev.Body}
	for _, n := range notes {
		in.Comments = append(in.Comments, prompts.ReviewComment{Path: n.Path, Line: n.Line, Body: n.Body})
	}
	f := runs.FollowUp{Reason: "the review by " + publish.Code(ev.Reviewer, 100), Source: source}
	return Send(ctx, b, gh, ev.Repo, runID, f, "review", in, show)
}
