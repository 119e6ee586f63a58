package flaky

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/exunit"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
)

// CIWhat names the CI a check run reports on, e.g. workflow `CI`.
func CIWhat(kind, name string) string { return kind + " " + publish.Code(name, 100) }

// maxNotes bounds the failures set aside that a check run lists.
const maxNotes = 20

// CISignal is a CI run that failed and then passed on re-run.
type CISignal struct {
	InstallationID int64
	Delivery       string
	Subject        runs.Subject // the check run that reports on it
	What           string       // Markdown naming the CI (CIWhat), for the check run's text
	URL            string       // the CI run's page, Markdown-safe (publish.SafeURL); "" when unknown
}

// CILog is what one failed job's log held.
type CILog struct {
	Occurrence string // identifies the failed attempt, so a sighting counts once
	Job        string
	Report     exunit.Report
	Flakes     []exunit.Failure // the failures that passed when run again
	NotFlaky   []string         // failures set aside, each "test: why"
}

// PassedOnRetry splits a failed attempt's failures into those the
// passing attempt ran and passed (the flakes) and the others, each with
// why ("`test/x_test.exs:3`: ...").
func PassedOnRetry(failed, passing exunit.Report) (flakes []exunit.Failure, notFlaky []string) {
	for _, f := range failed.Flaky() {
		ref, _ := f.Ref()
		if ok, why := passing.Passed(ref); ok {
			flakes = append(flakes, f)
		} else {
			notFlaky = append(notFlaky, publish.Code(ref.String(), 200)+": "+why)
		}
	}
	return flakes, notFlaky
}

// ReportCI turns the failures in the failed attempts' logs into fix
// runs, one per test (shared with any other signal about the test), counts
// each sighting, and writes the check run.
func ReportCI(ctx context.Context, b *work.Env, gh github.Client, sig CISignal, logs []CILog, cfg repoconfig.Config) error {
	var entries []runs.Entry
	var retry error // a sandbox that did not answer: shown, then tried again
	seen := map[exunit.TestRef]bool{}
	compileErrors, unlocated, infra := 0, 0, 0
	var notes []string
	for _, l := range logs {
		switch {
		case l.Report.CompileErrorOnly():
			compileErrors++
			continue
		case l.Report.MostlyFailed():
			infra++
			continue
		}
		unlocated += len(l.Report.Failures) - len(l.Report.Flaky())
		for _, f := range l.Report.Failures {
			if f.Unusable != "" && len(notes) < maxNotes {
				notes = append(notes, fmt.Sprintf("%s in job %s: %s", publish.Code(fmt.Sprintf("%s:%d", f.File, f.Line), 200), publish.Code(l.Job, 100), f.Unusable))
			}
		}
		for _, n := range l.NotFlaky {
			if len(notes) < maxNotes {
				notes = append(notes, n)
			}
		}
		for _, f := range l.Flakes {
			ref, _ := f.Ref()
			if seen[ref] {
				continue
			}
			seen[ref] = true
			sighting := runs.Seen{Key: Key(sig.Subject.Repo, ref), Occurrence: l.Occurrence,
				Commit: sig.Subject.Commit, Where: sig.URL, Name: publish.Line(f.Test, 200), Module: publish.Line(f.Module, 200)}
			entry, _, err := Claim(ctx, b, Request{InstallationID: sig.InstallationID, Delivery: sig.Delivery, Subject: sig.Subject, Ref: ref, Config: cfg, Seen: &sighting})
			if errors.Is(err, runs.ErrSandboxWaiting) {
				retry, err = cmp.Or(retry, err), nil // shown as waiting first, then tried again
			}
			if err != nil {
				return err
			}
			entry.Name, entry.Module = publish.Line(f.Test, 200), publish.Line(f.Module, 200)
			entry.Seed = l.Report.Runs[f.Invocation].Seed
			entry.Excerpt = f.Message
			entries = append(entries, entry)
		}
	}
	notice := ""
	switch {
	case len(entries) > 0:
	case infra > 0:
		notice = "Most tests failed in the failed attempt: that points at the infrastructure (a database or service that was down), not at flaky tests. No fix was started."
	case len(notes) > 0:
		notice = "No failure of the failed attempt is a flaky test pitcrew can fix. No fix was started."
	case compileErrors > 0:
		notice = "The failed attempt did not compile, so no test ran: that is a broken build, not a flaky test. No fix was started."
	case unlocated > 0:
		notice = "The failed attempt's only ExUnit failures name no test line (a failing `setup_all`, or a run that then failed to compile), so there is no test to fix. No fix was started."
	default:
		notice = "The failed attempt's logs show no ExUnit test failures: the failure was probably in the infrastructure (a timeout, a runner or network error). No fix was started."
	}
	zerolog.Ctx(ctx).Info().Int("tests", len(entries)).Int("logs", len(logs)).Msg("read the failed attempts")
	if len(entries) > 0 {
		b.DashboardChanged(ctx, sig.Subject.Repo, sig.InstallationID)
	}
	runs.ReleaseLocksAhead(ctx) // not held through the owners' and the issues' GitHub calls
	for i, e := range entries {
		if ref, err := exunit.ParseTestRef(e.About); err == nil {
			entries[i].Owners = ownersOrNone(ctx, b, gh, sig.Subject.Repo, ref.Path)
		}
	}
	if Of(cfg).TrackIssues {
		repo, _ := github.ParseRepo(sig.Subject.Repo)
		for _, e := range entries {
			if err := trackIssue(ctx, b, gh, repo, e, cfg, sig.Subject.Commit); err != nil {
				return err
			}
		}
	}
	err := b.Publish.Status(ctx, gh, sig.Subject, func(st *runs.Status) {
		st.Replace(runs.Status{InstallationID: sig.InstallationID, Label: Of(cfg).Label, Notice: notice, Entries: entries, Heading: sig.What, Rejected: notes})
	}, runs.RunIDs(entries)...)
	return cmp.Or(err, retry)
}
