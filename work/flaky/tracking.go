package flaky

import (
	"context"
	"fmt"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
)

// trackIssue opens, or updates, the one issue that holds the history of a
// test seen flaking in CI (flaky.track_issues). It is opened with the flaky
// label, so pitcrew's own label event attaches it to the test's run like
// any other report of the test.
func trackIssue(ctx context.Context, b *work.Env, gh github.Client, repo github.Repo, e runs.Entry, cfg repoconfig.Config, commit string) error {
	key := keyOf(repo.String(), e.About)
	body := TrackingBody(e, commit)
	n, exists, err := b.Ledger.TrackingIssue(ctx, key)
	switch {
	case err != nil:
		return err
	case exists && n > 0:
		return gh.EditIssueBody(ctx, repo, n, body)
	case exists:
		return nil // being opened by another worker
	}
	// A new issue only for a test whose fix starts or attaches, within the
	// repository's daily cap on issues.
	reserved := false
	if e.Relation == runs.ClaimNew || e.Relation == runs.ClaimAttached {
		if reserved, err = b.ReserveIssue(ctx, repo, cfg); err != nil {
			return err
		}
	}
	if !reserved {
		return b.Ledger.DropTrackingClaim(ctx, key)
	}
	n, err = gh.CreateIssue(ctx, repo, "Flaky test: "+e.About, body, []string{Of(cfg).Label})
	if err != nil {
		// The issue may exist even so (a timeout after GitHub made it): keep
		// the claim until it expires rather than risk opening a second one.
		return err
	}
	return b.Ledger.SetTrackingIssue(context.WithoutCancel(ctx), key, n)
}

// TrackingBody is the body of a test's tracking issue: what was seen, and where
// the fix run shows.
func TrackingBody(e runs.Entry, commit string) string {
	b := fmt.Sprintf("pitcrew saw this test fail in CI and pass on re-run.\n\n- Test: `%s`", e.About)
	if e.Name != "" {
		b += fmt.Sprintf("\n- Name: %s (%s)", publish.Text(e.Name, 200), publish.Code(e.Module, 200))
	}
	b += fmt.Sprintf("\n- Seen flaking: %d %s, most recently on %s", e.Sightings, publish.Plural(int(e.Sightings), "time", "times"), commit)
	if e.Seed != nil {
		b += fmt.Sprintf(" with seed `%d`", *e.Seed)
	}
	if owners := publish.OwnersMentioned(e.Owners); owners != "" {
		b += "\n- " + owners
	}
	return b + "\n\nThe fix run's progress is in pitcrew's comment below and in the `" + publish.CheckRunName + "` check run of each commit.\n"
}
