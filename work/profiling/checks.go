package profiling

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
)

// maxSiteFiles bounds the files read to check the Ecto sites of one
// report: one contents call each.
const maxSiteFiles = 10

// Shown writes, once an ended profiling run's status comment is shown
// (a check run that cannot be written must not keep the report from the
// pull request), the "pitcrew / slow queries" check run on the commit it
// profiled, from its slow-queries.json as pitcrew checked it; after a
// /pitcrew open-pr turn, the same table on the head of the pull request it
// opened, which carries a fix the table measured.
func Shown(ctx context.Context, b *work.Env, gh github.Client, run runs.Run) error {
	head := run.About
	if len(run.FollowUps) > 0 {
		head = ""
		if run.PR != nil {
			head = run.PR.Head
		}
	}
	if run.State != runs.Completed || !github.ValidSHA(run.About) || !github.ValidSHA(head) {
		return nil // a failed run has its reason on the comment
	}
	repo, err := github.ParseRepo(run.Repo)
	if err != nil {
		return queue.Permanent(err)
	}
	review, err := Review(ctx, b, gh, repo, run)
	if err != nil {
		return err
	}
	out := publish.SlowQueriesCheck(review)
	out.ExternalID, out.DetailsURL = run.ID, publish.SafeURL(run.SessionURL)
	id, err := gh.FindCheckRun(ctx, repo, head, publish.SlowCheckName, run.ID)
	switch {
	case err != nil:
		return err
	case id != 0:
		return gh.UpdateCheckRun(ctx, repo, id, out)
	}
	_, err = gh.CreateCheckRun(ctx, repo, head, out)
	return err
}

// Review reads the run's slow-queries.json and checks it: each query's
// times against its plans, and its Ecto site at the commit profiled.
func Review(ctx context.Context, b *work.Env, gh github.Client, repo github.Repo, run runs.Run) (publish.SlowReview, error) {
	r := publish.SlowReview{Repo: run.Repo, Commit: run.About}
	data, ok, err := b.Ledger.Data(ctx, run.ID)
	if err != nil {
		return r, err
	}
	if !ok {
		r.Unread = "the run left no " + evidence.SlowQueriesName + " (or one larger than pitcrew reads)"
		return r, nil
	}
	if r.Report, err = evidence.ParseSlowQueries(data); err != nil {
		r.Unread = err.Error()
		return r, nil
	}
	if r.Report.AfterCommit != run.About {
		r.Problems = append(r.Problems, "the report says it measured commit "+publish.Code(r.Report.AfterCommit, 40)+", not the one profiled, "+publish.Code(run.About, 40))
	}
	for _, q := range r.Report.Queries {
		r.Checks = append(r.Checks, evidence.CheckSlowQuery(q))
	}
	r.Missing, err = missingSites(ctx, gh, repo, run.About, r.Report.Queries)
	return r, err
}

// missingSites says, per query, why its Ecto file and line were not found
// at commit: the file is not there, or is shorter. At most maxSiteFiles
// files are read; a site in another is said not checked.
func missingSites(ctx context.Context, gh github.Client, repo github.Repo, commit string, queries []evidence.SlowQuery) ([]string, error) {
	lines := map[string]int{} // by file: its line count, -1 when it is not there
	out := make([]string, len(queries))
	for i, q := range queries {
		file := q.Ecto.File
		if !evidence.ValidEctoFile(file) {
			out[i] = "its Ecto file " + publish.Code(file, 200) + " is not a path of an Elixir file in the repository"
			continue
		}
		n, read := lines[file]
		if !read && len(lines) == maxSiteFiles {
			out[i] = "its Ecto site was not checked: pitcrew reads at most " + strconv.Itoa(maxSiteFiles) + " files a report"
			continue
		}
		if !read {
			content, err := gh.FileAt(ctx, repo, file, commit)
			switch {
			case errors.Is(err, github.ErrFileGone):
				n = -1
			case errors.Is(err, github.ErrFileTooLarge):
				n = 1 << 30 // there, and too large to count: its line is taken as there
			case err != nil && ctx.Err() != nil:
				return nil, err
			case err != nil:
				// The check run is written all the same, saying what it
				// could not check.
				out[i] = "its Ecto site was not checked: GitHub did not give " + publish.Code(file, 200) + " (" + github.Describe(err) + ")"
				continue
			default:
				n = strings.Count(content, "\n") + 1
			}
			lines[file] = n
		}
		switch {
		case n < 0:
			out[i] = publish.Code(file, 200) + " does not exist at this commit"
		case q.Ecto.Line > n:
			out[i] = publish.Code(file, 200) + " has " + strconv.Itoa(n) + " lines at this commit, not " + strconv.Itoa(q.Ecto.Line)
		}
	}
	return out, nil
}
