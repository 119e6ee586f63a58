package flaky

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
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

// Bounds on what one failed run costs: the failed jobs whose logs are
// read, and the distinct failures looked up (past them, it is not a flake).
const (
	maxFailedJobs   = 20
	maxKnownLookups = 50
)

// rerunDecision is what was decided of one attempt, kept so that a retry
// or a redelivery finishes it instead of deciding again: Pending is a
// re-run decided, and reserved, whose GitHub call and sightings may not
// have been made.
type rerunDecision struct {
	Quarantine
	Pending bool `json:"pending,omitempty"`
}

// RerunKnown re-runs the failed jobs of a workflow run that only known
// flaky tests in quarantine failed, once per workflow run (an attempt
// pitcrew's re-run made is never re-run again: a flake that fails twice is
// not waited out), within the repository's daily number, counts each as a
// sighting, and says so in the "pitcrew / known flakes" check run on the
// head; a run where known flakes failed beside anything else is not
// re-run, and the check run says why. A run with no known flaky test in it
// writes nothing.
func RerunKnown(ctx context.Context, b *work.Env, gh github.Client, ev RunFailed, cfg repoconfig.Config) error {
	f := Of(cfg)
	if !f.RerunKnown {
		return nil
	}
	repo := strings.ToLower(ev.Repo.String())
	decided := fmt.Sprintf("rerun-decision:%s:%d/%d", repo, ev.RunID, ev.Attempt)
	var d rerunDecision
	if kept, hit, err := b.Ledger.Cached(ctx, decided); err != nil {
		return err
	} else if hit && json.Unmarshal(kept, &d) == nil {
		if d.Pending {
			// Finished by whoever decided it, unless that worker died: its
			// lock then runs out, and this retry takes it over.
			if first, err := b.Ledger.FirstTime(ctx, decided+":deciding", 5*time.Minute); err != nil || !first {
				return cmp.Or(err, errors.New("another delivery is finishing this attempt"))
			}
		}
		return finishRerun(ctx, b, gh, ev, decided, d)
	}
	if _, total, err := b.Ledger.FlakyTests(ctx, ev.Repo.String(), 1); err != nil || total == 0 {
		return err // no known flaky test: no log is worth reading
	}
	failed, err := failedJobs(ctx, gh, ev)
	if err != nil || len(failed) == 0 {
		return err
	}
	known, err := knownTests(ctx, b, ev.Repo.String(), failed)
	if err != nil || len(known) == 0 {
		return err
	}
	d.Quarantine = DecideQuarantine(ev.Repo.String(), failed, known, b.Time(), f.QuarantineDays)
	if len(d.Known) == 0 {
		return nil
	}
	// One decision per attempt across replicas and redeliveries: a short
	// lock, so that a worker that died deciding is taken over.
	if first, err := b.Ledger.FirstTime(ctx, decided+":deciding", 5*time.Minute); err != nil || !first {
		return cmp.Or(err, errors.New("another delivery is deciding this attempt"))
	}
	if d.Rerun {
		switch once, err := b.Ledger.FirstTime(ctx, fmt.Sprintf("rerun:%s:%d", repo, ev.RunID), 30*24*time.Hour); {
		case err != nil:
			return err
		case !once:
			d.Rerun, d.Held = false, "pitcrew re-ran this workflow run's failed jobs once already: a known flake that fails again is not re-run twice"
		}
	}
	if d.Rerun {
		if ok, err := b.Ledger.ReserveRerun(ctx, ev.Repo.String(), f.RerunDailyLimit); err != nil {
			return err
		} else if !ok {
			d.Rerun, d.Held = false, fmt.Sprintf("the daily number of %d re-runs for this repository is reached (`flaky.rerun_daily_limit`)", f.RerunDailyLimit)
		}
	}
	d.Pending = d.Rerun
	if err := keepDecision(ctx, b, decided, d); err != nil {
		return err
	}
	return finishRerun(ctx, b, gh, ev, decided, d)
}

// finishRerun makes a pending re-run (the GitHub call; the sightings,
// counted once each), keeps the decision final, and writes the check run.
func finishRerun(ctx context.Context, b *work.Env, gh github.Client, ev RunFailed, decided string, d rerunDecision) error {
	if d.Pending {
		if err := gh.RerunFailedJobs(ctx, ev.Repo, ev.RunID); err != nil {
			zerolog.Ctx(ctx).Warn().Err(err).Msg("GitHub did not re-run the failed jobs")
			d.Rerun, d.Held = false, "GitHub did not re-run the failed jobs ("+github.Describe(err)+")"
		} else if err := countReruns(ctx, b, ev, d.Known); err != nil {
			return err
		}
		d.Pending = false
		if err := keepDecision(ctx, b, decided, d); err != nil {
			return err
		}
	}
	return knownFlakesCheck(ctx, gh, ev, d.Quarantine)
}

func keepDecision(ctx context.Context, b *work.Env, name string, d rerunDecision) error {
	enc, _ := json.Marshal(d)
	return b.Ledger.Cache(ctx, name, enc, 30*24*time.Hour)
}

// failedJobs reads the failed jobs of the attempt: none when there are
// more than maxFailedJobs (too large a failure to call a flake), counted
// before any log is read.
func failedJobs(ctx context.Context, gh github.Client, ev RunFailed) ([]FailedJob, error) {
	jobs, err := gh.Jobs(ctx, ev.Repo, ev.RunID, ev.Attempt)
	if err != nil {
		return nil, err
	}
	var ids []github.CIJob
	for _, j := range jobs {
		if j.Conclusion == "failure" {
			ids = append(ids, j)
		}
	}
	if len(ids) > maxFailedJobs {
		return nil, nil
	}
	logs := NewJobLogs(gh, ev.Repo)
	var failed []FailedJob
	for _, j := range ids {
		rep, err := logs.Report(ctx, j.ID)
		if err != nil {
			return nil, err
		}
		failed = append(failed, FailedJob{Name: j.Name, Report: rep})
	}
	return failed, nil
}

// knownFlakesCheck writes the attempt's "pitcrew / known flakes" check run,
// once: found again by its external id.
func knownFlakesCheck(ctx context.Context, gh github.Client, ev RunFailed, q Quarantine) error {
	out := publish.KnownFlakesCheck(ev.Workflow, q.Rerun, q.Known, q.Why, q.Held)
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
	seen := map[string]bool{}
	for _, j := range jobs {
		if j.Report.CompileErrorOnly() || j.Report.MostlyFailed() {
			continue // never re-run, whatever else failed
		}
		for _, f := range j.Report.Failures {
			if ref, ok := f.Ref(); ok && !seen[Key(repo, ref)] {
				if len(keys) == maxKnownLookups {
					return nil, nil // too many failures to be flakes
				}
				seen[Key(repo, ref)] = true
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
