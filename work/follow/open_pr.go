package follow

import (
	"context"
	"fmt"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
)

// OpenPR sends the profiling session of a merged pull request's slow-query
// report a follow-up (/pitcrew open-pr): open the migration and the query
// change it measured as a pull request, which pitcrew then follows. It
// answers only when it sends nothing.
func OpenPR(ctx context.Context, b *work.Env, gh github.Client, repo github.Repo, number int, author string, commentID int64) (string, error) {
	st, err := b.Ledger.Status(ctx, runs.Subject{Repo: repo.String(), Issue: number})
	if err != nil {
		return "", err
	}
	var report *runs.Run
	for _, e := range st.Entries {
		run, err := b.Ledger.Get(ctx, e.RunID)
		if err == nil && run.Kind == runs.KindMigration && run.Report && !publish.MigrationOf(run).BeforeMerge {
			report = &run
		}
	}
	if report == nil {
		return "Nothing was sent: pitcrew has no slow-query report of this merge to open a change from.", nil
	}
	f := runs.FollowUp{Reason: "`/pitcrew open-pr` by " + publish.Code(author, 100), Source: fmt.Sprintf("comment:%d", commentID)}
	return Send(ctx, b, gh, repo, report.ID, f, "open-pr", prompts.OpenPRInput{PR: number, Files: publish.MigrationOf(*report).Files}, true)
}
