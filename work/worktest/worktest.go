// Package worktest builds what the tests of a work/ package need without
// the handlers: a work.Env on struct fakes (GitHub's, the sandbox's) and
// a private Redis database, with a small registry of the jobs, and runs
// in the ledger as a session would leave them.
package worktest

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/internal/github/githubtest"
	"github.com/pitcrew/pitcrew/internal/metrics"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/flaky"
	"github.com/pitcrew/pitcrew/work/follow"
	"github.com/pitcrew/pitcrew/work/incidents"
	"github.com/pitcrew/pitcrew/work/profiling"
)

// alertJob is an alert fix as the steps read it (its outside source's
// hook aside, which the handlers declare).
var alertJob = work.Job{Job: runs.Job{Kind: runs.KindAlert, Prompt: "alert", Render: publish.RenderAlert, Evidence: evidence.JobAlert, RunLog: evidence.RunLogName},
	Retry: incidents.Retry}

// Env is a work.Env on gh and sb, with the jobs GitHub events start
// (flaky, its verification, profiling), an alert fix and follow-ups
// registered.
func Env(t *testing.T, gh *githubtest.Fake, sb work.Sandbox) work.Env {
	t.Helper()
	jobs, err := work.NewRegistry([]repoconfig.Part{follow.FollowUps}, flaky.Job, follow.VerifyJob, profiling.Job, alertJob)
	if err != nil {
		t.Fatal(err)
	}
	e := work.NewEnv(work.Env{Clients: gh.Clients(), Ledger: runs.NewLedger(testenv.Redis(t)), Sandbox: sb, Jobs: jobs,
		Metrics: metrics.New(prometheus.NewRegistry()), AppSlug: "pitcrew"})
	e.Finish.Follows = func(run runs.Run) int { return follow.Next(jobs, run) }
	return e
}

// EndedRun is a run of kind on key, started from issue (its subject),
// whose session ses ended with what end sets.
func EndedRun(t *testing.T, b work.Env, kind runs.Kind, key string, issue int, ses string, end func(*runs.Run)) runs.Run {
	t.Helper()
	ctx := context.Background()
	run, _, err := b.Ledger.Claim(ctx, runs.Run{Key: key, Kind: kind, InstallationID: testenv.Installation, Repo: "hexpm/hexpm", Origin: issue, About: "test/a_test.exs:1"},
		time.Hour, 100, runs.Subject{Repo: "hexpm/hexpm", Issue: issue})
	if err == nil {
		run, err = b.Ledger.Move(ctx, run, runs.Started, func(r *runs.Run) { r.SessionID = ses })
	}
	if err == nil {
		run, err = b.Ledger.Move(ctx, run, runs.Completed, end)
	}
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// FixedIn ends a run with a fix in pull request url.
func FixedIn(url string) func(*runs.Run) {
	return func(r *runs.Run) { r.Result = &prompts.Result{Outcome: prompts.OutcomeFixed, PRURL: url} }
}
