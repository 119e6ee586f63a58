package handlers

import (
	"context"
	"fmt"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/runs"
)

// openPR sends the profiling session of a merged pull request's slow-query
// report a follow-up (/pitcrew open-pr): open the migration and the query
// change it measured as a pull request, which pitcrew then follows. It
// answers only when it sends nothing.
func (b *Base) openPR(ctx context.Context, gh github.Client, ev Comment) (string, error) {
	st, err := b.Ledger.Status(ctx, runs.Subject{Repo: ev.Repo.String(), Issue: ev.Issue})
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
	f := runs.FollowUp{Reason: "`/pitcrew open-pr` by " + publish.Code(ev.Author, 100), Source: fmt.Sprintf("comment:%d", ev.ID)}
	return b.followUp(ctx, gh, ev.Repo, report.ID, f, "open-pr", prompts.OpenPRInput{PR: ev.Issue, Files: publish.MigrationOf(*report).Files}, true)
}
