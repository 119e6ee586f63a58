package flaky

import (
	"fmt"
	"time"

	"github.com/pitcrew/pitcrew/exunit"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/runs"
)

// Known flakes stop blocking pull requests: a workflow run that only
// known flaky tests failed has its failed jobs re-run once, without
// touching the code (quarantine). What decides it, free of GitHub.

// FailedJob is a failed job of a workflow run and what its log showed.
type FailedJob struct {
	Name   string
	Report exunit.Report
}

// Quarantine is what pitcrew decides of a failed workflow run's failures.
type Quarantine struct {
	// Rerun is true when every failure is a known flaky test in
	// quarantine; Why says, otherwise, each reason it is not re-run.
	Rerun bool
	Why   []string
	// Known are the known flaky tests that failed, in quarantine or not;
	// none means the run is none of pitcrew's business.
	Known []publish.KnownFlake
	// Held says why a re-run every failure called for was not made (the
	// run was re-run once already, the daily number, GitHub's refusal).
	Held string `json:"held,omitempty"`
}

// Quarantined reports whether a known flaky test is still in quarantine
// at now, and, when it is not, since when and why: its fix merged (it
// left quarantine; a new flake is "back after PR #N"), or its quarantine
// of days, counted from its last fix run's start (or its first sighting),
// expired.
func Quarantined(t runs.FlakyTest, now time.Time, days int) (in bool, why string) {
	if r := t.Run; fixMerged(t) {
		return false, fmt.Sprintf("its fix merged in PR #%d: it left quarantine", r.PR.Number)
	}
	if end, expired := QuarantineExpired(t, now, days); expired {
		return false, "its quarantine expired on " + end.UTC().Format("2 Jan 2006") + " (`flaky.quarantine_days`: " + fmt.Sprint(days) + ")"
	}
	return true, ""
}

// QuarantineExpired reports whether a known flaky test's quarantine ran
// out at now before its fix merged, and when.
func QuarantineExpired(t runs.FlakyTest, now time.Time, days int) (time.Time, bool) {
	end := QuarantineEnds(t, days)
	return end, !fixMerged(t) && now.After(end)
}

func fixMerged(t runs.FlakyTest) bool {
	return t.Run != nil && t.Run.PR != nil && t.Run.PR.State == runs.PullMerged
}

// QuarantineEnds is when a known flaky test leaves quarantine unless its
// fix merges first: days after its last fix run started, or after it was
// first seen when no run was.
func QuarantineEnds(t runs.FlakyTest, days int) time.Time {
	since := t.Sighting.FirstSeen
	if t.Run != nil && t.Run.StartedAt.After(since) {
		since = t.Run.StartedAt
	}
	return since.Add(time.Duration(days) * 24 * time.Hour)
}

// DecideQuarantine reads a failed workflow run's failed jobs against the
// tests pitcrew knows as flaky (by key): re-run only when every job failed
// on ExUnit failures alone, each a known flaky test in quarantine. A job
// that did not compile, whose tests mostly failed (the infrastructure), or
// that failed without an ExUnit failure, is a reason not to.
func DecideQuarantine(repo string, jobs []FailedJob, known map[string]runs.FlakyTest, now time.Time, days int) Quarantine {
	var q Quarantine
	listed := map[string]bool{}
	for _, j := range jobs {
		job := publish.Code(j.Name, 100)
		switch rep := j.Report; {
		case rep.CompileErrorOnly():
			q.Why = append(q.Why, "job "+job+" did not compile")
			continue
		case rep.MostlyFailed():
			q.Why = append(q.Why, "most tests failed in job "+job+": the infrastructure, not a flaky test")
			continue
		case len(rep.Failures) == 0:
			q.Why = append(q.Why, "job "+job+" failed with no ExUnit failure (a step other than the tests, or the infrastructure)")
			continue
		case !readWhole(rep):
			q.Why = append(q.Why, "job "+job+"'s log does not show every failure whole (a run cut short, or more failures than pitcrew reads)")
			continue
		}
		for _, f := range j.Report.Failures {
			ref, ok := f.Ref()
			if !ok {
				q.Why = append(q.Why, "a failure in job "+job+" names no test line")
				continue
			}
			if listed[ref.String()] {
				continue
			}
			listed[ref.String()] = true
			t, isKnown := known[Key(repo, ref)]
			if !isKnown {
				q.Why = append(q.Why, publish.Code(ref.String(), 200)+" is not a known flaky test")
				continue
			}
			k := publish.KnownFlake{Test: ref.String(), Seen: t.Sighting.Count}
			if t.Run != nil && t.Run.PR != nil {
				k.PR, k.PRURL = t.Run.PR.Number, t.Run.PR.URL
			}
			if in, why := Quarantined(t, now, days); !in {
				k.Out = why
				q.Why = append(q.Why, publish.Code(ref.String(), 200)+": "+why)
			}
			q.Known = append(q.Known, k)
		}
	}
	q.Rerun = len(q.Why) == 0 && len(q.Known) > 0
	return q
}

// readWhole reports whether a job's log shows every failure of every run:
// each run printed its summary, nothing was dropped, and each run's
// counts match the failures read of it.
func readWhole(rep exunit.Report) bool {
	if rep.DroppedFailures > 0 || rep.MergedRuns > 0 {
		return false
	}
	read := make([]int, len(rep.Runs))
	for _, f := range rep.Failures {
		if f.Invocation >= 0 && f.Invocation < len(read) {
			read[f.Invocation]++
		}
	}
	for i, run := range rep.Runs {
		if !run.Summary || run.Failures+run.Invalid != read[i] {
			return false
		}
	}
	return true
}
