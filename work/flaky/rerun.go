package flaky

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
)

// RunFailed is a workflow run attempt that failed, on a commit that may be
// the repository's own.
type RunFailed struct {
	InstallationID int64
	Repo           github.Repo
	RunID          int64
	Attempt        int
	HeadSHA        string
	Workflow       string
	URL            string
}

// maxFailedJobs bounds the failed jobs whose logs one run costs.
const maxFailedJobs = 20

// RerunKnown re-runs, once per attempt, the failed jobs of a workflow run
// that only known flaky tests in quarantine failed, within the
// repository's daily number, counts each as a sighting, and says so in the
// "pitcrew / known flakes" check run on the head; a run where known flakes
// failed beside anything else is not re-run, and the check run says why. A
// run with no known flaky test in it writes nothing.
func RerunKnown(ctx context.Context, b *work.Env, gh github.Client, ev RunFailed, cfg repoconfig.Config) error {
	f := Of(cfg)
	if !f.RerunKnown {
		return nil
	}
	jobs, err := gh.Jobs(ctx, ev.Repo, ev.RunID, ev.Attempt)
	if err != nil {
		return err
	}
	logs := NewJobLogs(gh, ev.Repo)
	var failed []FailedJob
	for _, j := range jobs {
		if j.Conclusion != "failure" {
			continue
		}
		if len(failed) == maxFailedJobs {
			return nil // too large a failure to call a flake
		}
		rep, err := logs.Report(ctx, j.ID)
		if err != nil {
			return err
		}
		failed = append(failed, FailedJob{Name: j.Name, Report: rep})
	}
	known, err := knownTests(ctx, b, ev.Repo.String(), failed)
	if err != nil || len(known) == 0 {
		return err
	}
	q := DecideQuarantine(ev.Repo.String(), failed, known, b.Time(), f.QuarantineDays)
	if len(q.Known) == 0 {
		return nil
	}
	// Once per attempt, across replicas and redeliveries (the re-run makes
	// a new attempt, decided on its own); what was decided is kept, so a
	// retry writes the check run a failure kept from GitHub.
	once := fmt.Sprintf("rerun:%s:%d/%d", strings.ToLower(ev.Repo.String()), ev.RunID, ev.Attempt)
	if kept, hit, err := b.Ledger.Cached(ctx, once); err != nil {
		return err
	} else if hit && json.Unmarshal(kept, &q) == nil {
		return knownFlakesCheck(ctx, gh, ev, q)
	}
	if first, err := b.Ledger.FirstTime(ctx, once, 7*24*time.Hour); err != nil || !first {
		return err // another delivery decides it
	}
	if q.Rerun {
		if ok, err := b.Ledger.ReserveRerun(ctx, ev.Repo.String(), f.RerunDailyLimit); err != nil {
			return err
		} else if !ok {
			q.Rerun, q.Why = false, []string{fmt.Sprintf("the daily number of %d re-runs for this repository is reached (`flaky.rerun_daily_limit`)", f.RerunDailyLimit)}
		}
	}
	if q.Rerun {
		if err := gh.RerunFailedJobs(ctx, ev.Repo, ev.RunID); err != nil {
			zerolog.Ctx(ctx).Warn().Err(err).Msg("GitHub did not re-run the failed jobs")
			q.Rerun, q.Why = false, []string{"GitHub did not re-run the failed jobs (" + github.Describe(err) + ")"}
		} else if err := countReruns(ctx, b, ev, q.Known); err != nil {
			return err
		}
	}
	enc, _ := json.Marshal(q)
	if err := b.Ledger.Cache(ctx, once, enc, 7*24*time.Hour); err != nil {
		return err
	}
	return knownFlakesCheck(ctx, gh, ev, q)
}

// knownFlakesCheck writes the attempt's "pitcrew / known flakes" check run,
// once: found again by its external id.
func knownFlakesCheck(ctx context.Context, gh github.Client, ev RunFailed, q Quarantine) error {
	out := publish.KnownFlakesCheck(ev.Workflow, q.Rerun, q.Known, q.Why)
	out.ExternalID, out.DetailsURL = fmt.Sprintf("workflow_run:%d/%d", ev.RunID, ev.Attempt), ev.URL
	if id, err := gh.FindCheckRun(ctx, ev.Repo, ev.HeadSHA, out.Name, out.ExternalID); err != nil || id != 0 {
		return err
	}
	_, err := gh.CreateCheckRun(ctx, ev.Repo, ev.HeadSHA, out)
	return err
}

// knownTests are the tests pitcrew knows as flaky among the failed jobs'
// failures, by key.
func knownTests(ctx context.Context, b *work.Env, repo string, jobs []FailedJob) (map[string]runs.FlakyTest, error) {
	var keys []string
	for _, j := range jobs {
		for _, f := range j.Report.Failures {
			if ref, ok := f.Ref(); ok {
				keys = append(keys, Key(repo, ref))
			}
		}
	}
	tests, err := b.Ledger.KnownFlaky(ctx, repo, keys)
	out := map[string]runs.FlakyTest{}
	for _, t := range tests {
		out[t.Key] = t
	}
	return out, err
}

// countReruns counts the re-run as a sighting of each known flaky test.
func countReruns(ctx context.Context, b *work.Env, ev RunFailed, known []publish.KnownFlake) error {
	for i, k := range known {
		s, err := b.Ledger.RecordSighting(ctx, ev.Repo.String(), runs.Seen{Key: keyOf(ev.Repo.String(), k.Test),
			Occurrence: fmt.Sprintf("workflow_run:%d/%d", ev.RunID, ev.Attempt), Commit: ev.HeadSHA, Where: ev.URL})
		if err != nil {
			return err
		}
		known[i].Seen = s.Count
	}
	b.DashboardChanged(ctx, ev.Repo.String(), ev.InstallationID)
	return nil
}
