package follow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/exunit"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/flaky"
)

// VerifyJob checks a flaky-test fix independently (flaky.verify:
// independent): once the fix's pull request has a head, a short separate
// session runs the test with the failing seed on the pull request's base
// (expected red) and head (expected green), then the after-loop, and
// changes no code. Its result goes on the fix's evidence check run and
// status comment; its runs have no subjects of their own.
var VerifyJob = work.Job{
	Job:   runs.Job{Kind: kindVerify, Prompt: "verify", Render: publish.RenderStatus, RunLog: evidence.RunLogName},
	Ended: verified,
}

const kindVerify runs.Kind = "verify"

// VerifyKey is the idempotency key of the verification of one head of a
// fix's pull request: it runs once per head.
func VerifyKey(repo github.Repo, pr int, head string) string {
	return fmt.Sprintf("verify:%s:%d:%s", strings.ToLower(repo.String()), pr, head)
}

// verifyData is a verification run's own data: what it checks and where
// its result goes.
type verifyData struct {
	FixRun     string `json:"fix_run"`
	PR         int    `json:"pr"`
	Head       string `json:"head"`
	CheckRunID int64  `json:"check_run_id"` // the evidence check run of Head
	Seed       int64  `json:"seed"`
	Runs       int    `json:"runs"`
	// Polluter is the pair the fix's answer names, which the session
	// checks too (nil: none).
	Polluter *prompts.Polluter `json:"polluter,omitempty"`
}

// VerifyPending reports whether a fix's pull request has a checked head
// no verification was decided on yet.
func VerifyPending(fix runs.Run) bool {
	p := fix.PR
	return fix.Kind == runs.KindFlaky && p != nil && p.State == runs.PullOpen && p.Checked != "" && p.Base != "" &&
		(p.Verify == nil || p.Verify.Head != p.Checked)
}

// Verify decides on the verification of the fix's checked head: starts
// it, within the repository's daily limit, unless the repository turned it
// off, and records it (or why there is none) on the fix's pull request, so
// later events of the same head decide nothing again.
func Verify(ctx context.Context, b *work.Env, gh github.Client, fix runs.Run) (runs.Run, error) {
	if !VerifyPending(fix) {
		return fix, nil
	}
	repo, err := github.ParseRepo(fix.Repo)
	if err != nil {
		return fix, queue.Permanent(err)
	}
	cfg, proceed, err := b.JobConfig(ctx, gh, repo, func(c repoconfig.Config) bool {
		f := flaky.Of(c)
		return f.Enabled && (f.Verify == flaky.VerifyIndependent || f.Verify == flaky.VerifyCI)
	})
	if err != nil {
		return fix, err
	}
	if proceed && flaky.Of(cfg).Verify == flaky.VerifyCI {
		return startCIVerify(ctx, b, gh, repo, fix, cfg)
	}
	p := *fix.PR
	v := runs.Verify{Head: p.Checked} // none, when the repository turned it off
	if proceed {
		if v, err = startVerify(ctx, b, repo, fix, cfg); err != nil {
			return fix, err
		}
	}
	return Read(ctx, b, gh, fix.Repo, fix.ID, p.Number, News{Apply: func(p *runs.Pull) {
		if p.Checked == v.Head && (p.Verify == nil || p.Verify.Head != v.Head) {
			p.Verify = &v
		}
	}})
}

// startVerify starts the verification of the fix's checked head with the
// seed that failed, for as many runs as the failure rate needs; the
// verification says why when it cannot start.
func startVerify(ctx context.Context, b *work.Env, repo github.Repo, fix runs.Run, cfg repoconfig.Config) (runs.Verify, error) {
	p := *fix.PR
	v := runs.Verify{Head: p.Checked}
	seed, hasSeed, ref, refErr := toVerify(fix)
	switch {
	case !hasSeed:
		v.Note = "not verified independently: the fix names no failing seed"
	case refErr != nil:
		v.Note = "not verified independently: the run names no test"
	default:
		d := verifyData{FixRun: fix.ID, PR: p.Number, Head: p.Checked, CheckRunID: p.CheckRunID, Seed: seed,
			Runs: evidence.NeededRuns(fix.Measured, flaky.Of(cfg).VerifyRuns)}
		input := prompts.VerifyInput{Repo: fix.Repo, PR: p.Number, Base: p.Base, Head: p.Checked, Test: ref, Seed: seed, Runs: d.Runs}
		if fix.Result != nil && fix.Result.Polluter != nil {
			if pref, err := exunit.ParseTestRef(fix.Result.Polluter.Test); err == nil {
				d.Polluter, input.Polluter, input.PolluterSeed = fix.Result.Polluter, &pref, fix.Result.Polluter.Seed
			}
		}
		data, _ := json.Marshal(d)
		entry, started, err := b.Runs.Start(ctx, runs.Request{
			Run: runs.Run{Key: VerifyKey(repo, p.Number, p.Checked), Kind: kindVerify, InstallationID: fix.InstallationID, Repo: fix.Repo,
				Origin: fix.Origin, About: fix.About, Data: data, Delivery: "verify-of:" + fix.ID},
			Cooldown: runs.Retention, DailyLimit: cfg.DailyLimit, LastAttempt: queue.LastAttempt(ctx),
			Input: input,
		})
		if err != nil {
			return v, err
		}
		v.RunID = entry.RunID
		if entry.Relation == runs.ClaimLimited {
			v.Note = "not verified independently: " + strings.TrimPrefix(entry.Note, "not started: ")
			return v, nil
		}
		if started == nil && entry.RunID != "" {
			// Another signal started it, or it ended before (a head that came
			// back): what it is now is what to show.
			run, err := b.Ledger.Get(ctx, entry.RunID)
			if err != nil {
				return v, err
			}
			started = &run
		}
		if started != nil && started.State.Terminal() {
			v = verification(*started, d)
		}
	}
	return v, nil
}

// toVerify is what a verification of fix runs: its test, with the seed
// that failed (FailingSeed).
func toVerify(fix runs.Run) (seed int64, hasSeed bool, ref exunit.TestRef, refErr error) {
	var claimed *int64
	if fix.Result != nil {
		claimed = fix.Result.Seed
	}
	seed, hasSeed = evidence.FailingSeed(fix.Measured, claimed)
	ref, refErr = exunit.ParseTestRef(fix.About)
	return seed, hasSeed, ref, refErr
}

// verification is what an ended verification run shows: a run that failed
// says why (a failure to start included: no outcome will come), one that
// completed what its log shows.
func verification(run runs.Run, d verifyData) runs.Verify {
	v := runs.Verify{Head: d.Head, RunID: run.ID}
	if run.State == runs.Failed && run.SessionID == "" {
		v.Note = "not verified independently: " + run.Error
		return v
	}
	if run.State == runs.Failed {
		v.Note = "the verification session failed: " + run.Error
	}
	result := evidence.CheckFix(run.Measured, d.Seed, d.Runs)
	if p := d.Polluter; p != nil {
		pc := evidence.CheckPolluter(run.Measured, p.Test, run.About, p.Seed, p.Shares)
		result.Polluter = &pc
	}
	v.Result = &result
	return v
}

// verified shows an ended verification where its fix is shown: on the
// fix's pull request (as the ledger keeps it), on the evidence check run
// of the head it verified while that is still the head, and on the fix's
// status comments.
func verified(ctx context.Context, b *work.Env, gh github.Client, run runs.Run) error {
	var d verifyData
	if err := json.Unmarshal(run.Data, &d); err != nil || d.FixRun == "" {
		return queue.Permanent(fmt.Errorf("verification run %s has no readable data: %v", run.ID, err))
	}
	v := verification(run, d)
	fixID, err := b.Ledger.PullRun(ctx, run.Repo, d.PR)
	if err != nil {
		return err
	}
	if fixID == "" {
		fixID = d.FixRun
	}
	// The fix that follows the pull request now: a later run that named it
	// too took the verification over with it.
	fix, err := Read(ctx, b, gh, run.Repo, fixID, d.PR, News{Apply: func(p *runs.Pull) {
		if p.Verify == nil || (p.Verify.Head == d.Head && (p.Verify.RunID == "" || p.Verify.RunID == run.ID)) {
			p.Verify = &v
		}
	}})
	if err != nil {
		return err
	}
	p := fix.PR
	if p == nil || p.Verify == nil || p.Verify.RunID != run.ID {
		zerolog.Ctx(ctx).Info().Str("fix_run", fixID).Msg("the verification ended after its head was replaced; not shown")
		return nil
	}
	return showVerified(ctx, b, gh, fix, d.Head, d.CheckRunID)
}

// showVerified shows the ended verification of head on the fix's status
// comments and, while head is still the pull request's and was checked
// with checkRunID, on its evidence check run.
func showVerified(ctx context.Context, b *work.Env, gh github.Client, fix runs.Run, head string, checkRunID int64) error {
	// The comment first: a check run that cannot be updated must not keep
	// the result from the issue.
	if err := b.Publish.Subjects(ctx, gh, fix, runs.Subject{}); err != nil {
		return err
	}
	p := fix.PR
	if p.Checked != head || p.CheckRunID != checkRunID || checkRunID == 0 {
		return nil
	}
	repo, err := github.ParseRepo(fix.Repo)
	if err != nil {
		return queue.Permanent(err)
	}
	pr, err := gh.PullRequest(ctx, repo, p.Number)
	if errors.Is(err, github.ErrPullGone) || err == nil && pr.HeadSHA != head {
		return nil // a new head gets its own evidence check run
	}
	if err != nil {
		return err
	}
	job := b.Jobs.Of(fix.Kind).Evidence
	review, err := checkDiff(ctx, gh, siblingsCache(ctx, b, gh, repo, job), repo, pr, job)
	if err != nil {
		return err
	}
	return gh.UpdateCheckRun(ctx, repo, checkRunID, publish.VerifiedEvidence(evidenceOutput(job, fix, p.Number, review), p.Verify))
}
