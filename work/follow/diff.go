package follow

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/queue"
)

// checkDiff reviews a pull request's diff with the job's rules, reading
// the changed Elixir files whole at the base and the head so that the
// rules read them as code (evidence.FileReads: at most 16 reads, one call
// each). A diff GitHub will not give, or gives in part (fewer files or
// lines than the pull request counts), is said so on the review, never
// read as clean.
func checkDiff(ctx context.Context, gh github.Client, cache siblingCache, repo github.Repo, pr github.PullRequest, job evidence.Job) (evidence.Review, error) {
	diff, err := gh.PullDiff(ctx, repo, pr.Number)
	switch {
	case errors.Is(err, github.ErrDiffTooLarge):
		return evidence.Review{}.Unread("not checked: GitHub will not produce a diff this large"), nil
	case errors.Is(err, github.ErrPullGone):
		// It answered for the pull request a moment ago.
		return evidence.Review{}.Unread("not checked: GitHub answered 404 for the diff"), nil
	}
	if why := unreadable(ctx, err); why != "" {
		return evidence.Review{}.Unread("not checked: " + why + " for the diff"), nil
	}
	if err != nil {
		return evidence.Review{}, err
	}
	d, err := evidence.ParseDiff(strings.NewReader(diff))
	if errors.Is(err, evidence.ErrNotADiff) {
		d, err = evidence.Diff{}, nil // a pull request without changes, if GitHub counts none
	}
	if err != nil {
		return evidence.Review{}, err
	}
	base, head := map[string]string{}, map[string]string{}
	for _, f := range evidence.FileReads(d, job) {
		ref, into := pr.HeadSHA, head
		if f.Base {
			ref, into = pr.BaseSHA, base
		}
		content, err := gh.FileAt(ctx, repo, f.Path, ref)
		if errors.Is(err, github.ErrFileGone) || errors.Is(err, github.ErrFileTooLarge) || errors.Is(err, github.ErrPathRefused) || unreadable(ctx, err) != "" {
			continue // the review then reads what the hunks show of it
		}
		if err != nil {
			return evidence.Review{}, err
		}
		into[f.Path] = content
	}
	review := evidence.CheckFiles(d, job, base, head)
	if why := missing(d, pr.Size); why != "" && review.NotChecked == "" {
		review = review.Unread(why)
	}
	scanSiblings(ctx, gh, cache, repo, pr, d, base, &review) // a nil cache: no scan
	return review, nil
}

// missing says how a parsed diff falls short of the change GitHub
// counts for the pull request ("" when it holds all of it, or GitHub
// counted nothing).
func missing(d evidence.Diff, size *github.PullSize) string {
	if size == nil {
		return "not read whole: GitHub did not count the pull request's changes to compare the diff with"
	}
	if d.FilesSeen == size.Files && d.Added == size.Additions && d.Deleted == size.Deletions {
		return ""
	}
	return fmt.Sprintf("not read whole: the diff GitHub sent holds %d %s (+%d −%d); the pull request counts %d (+%d −%d)",
		d.FilesSeen, publish.Plural(d.FilesSeen, "file", "files"), d.Added, d.Deleted, size.Files, size.Additions, size.Deletions)
}

// unreadable says why err is an answer retrying will not change (a
// permanent refusal, or a transient one on the task's last try), as a
// reader is told it: "GitHub answered 403"; "" for any other error.
func unreadable(ctx context.Context, err error) string {
	if err == nil {
		return ""
	}
	status := github.StatusOf(err)
	switch {
	case github.WillNotChange(err):
		return fmt.Sprintf("GitHub answered %d", status)
	case !queue.LastAttempt(ctx):
		return ""
	case status != 0:
		return fmt.Sprintf("GitHub answered %d on every try", status)
	}
	return "GitHub did not answer on any try"
}
