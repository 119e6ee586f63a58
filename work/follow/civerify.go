package follow

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/flaky"
)

// CIWorkflowFile is the workflow a repository adds once, under
// .github/workflows, for verifications in its own CI (flaky.verify: ci);
// CIWorkflow is its text, as `pitcrew ci-workflow` prints it.
const CIWorkflowFile = "pitcrew-verify.yml"

//go:embed pitcrew-verify.yml
var CIWorkflow string

// Bounds of a verification in CI: the base stops once the test failed
// ciBaseStopAfter times (the flake is shown); what a nonce leads to is
// kept ciRefTTL (a side whose run has not started by Env.CIStart is not
// waited for).
const (
	ciBaseStopAfter = 3
	ciRefTTL        = 7 * 24 * time.Hour
)

// ciRef is what a verification's nonce leads back to: the fix whose pull
// request it verifies.
type ciRef struct {
	Repo           string `json:"repo"`
	InstallationID int64  `json:"installation_id"`
	FixRun         string `json:"fix_run"`
	PR             int    `json:"pr"`
}

func ciRefName(nonce string) string { return "civerify:" + nonce }

// startCIVerify dispatches pitcrew's workflow on the fix's base and head,
// once per head across replicas and redeliveries, within the repository's
// daily number, and records it on the fix's pull request; or records why
// it did not.
func startCIVerify(ctx context.Context, b *work.Env, gh github.Client, repo github.Repo, fix runs.Run, cfg repoconfig.Config) (runs.Run, error) {
	unlock, err := b.Ledger.Lock(ctx, VerifyKey(repo, fix.PR.Number, fix.PR.Checked), 30*time.Second, 10*time.Second)
	if err != nil {
		return fix, err
	}
	defer unlock()
	if fix, err = b.Ledger.Get(ctx, fix.ID); err != nil {
		return fix, err
	}
	if !VerifyPending(fix) {
		// Another replica, or an earlier delivery, decided. On this task's
		// retry, what it decided at once may not have reached the check run.
		if v := fix.PR.Verify; queue.Retried(ctx) && v != nil && v.InCI && v.Note != "" && v.Head == fix.PR.Checked {
			return fix, showVerified(ctx, b, gh, fix, v.Head, fix.PR.CheckRunID)
		}
		return fix, nil
	}
	p := *fix.PR
	v, err := dispatchCI(ctx, b, gh, repo, fix, cfg)
	if err != nil {
		return fix, err
	}
	fix, err = Read(ctx, b, gh, fix.Repo, fix.ID, p.Number, News{Apply: func(p *runs.Pull) {
		if p.Checked == v.Head && (p.Verify == nil || p.Verify.Head != v.Head) {
			p.Verify = &v
		}
	}})
	if err == nil && fix.PR != nil && fix.PR.Verify != nil && fix.PR.Verify.Head == v.Head && (v.Note != "" || v.CI != nil) {
		// The check run says it at once: decided (no workflow, no seed), or
		// verifying in CI, neutral until both sides are counted.
		err = showVerified(ctx, b, gh, fix, v.Head, fix.PR.CheckRunID)
	}
	return fix, err
}

// dispatchCI starts both workflow runs and schedules the check that they
// started. An error is GitHub's, to retry; what the repository can fix
// (no workflow, a workflow that refuses the inputs) is the verification's
// note.
func dispatchCI(ctx context.Context, b *work.Env, gh github.Client, repo github.Repo, fix runs.Run, cfg repoconfig.Config) (runs.Verify, error) {
	p, f := *fix.PR, flaky.Of(cfg)
	v := runs.Verify{Head: p.Checked, InCI: true}
	seed, hasSeed, ref, refErr := toVerify(fix)
	switch {
	case p.Verdict != evidence.VerdictClean && p.Verdict != evidence.VerdictNote:
		v.Note = "not verified in CI: pitcrew verifies a head whose evidence check passes, and this one's did not"
		return v, nil
	case !hasSeed:
		v.Note = "not verified in CI: the fix names no failing seed"
		return v, nil
	case refErr != nil:
		v.Note = "not verified in CI: the run names no test"
		return v, nil
	}
	branch, err := gh.DefaultBranch(ctx, repo)
	if err != nil {
		return v, err
	}
	if ok, err := b.Ledger.ReserveCIVerify(ctx, fix.Repo, f.VerifyDailyLimit); err != nil || !ok {
		v.Note = fmt.Sprintf("not verified in CI: the daily number of %d verifications in CI for this repository is reached (flaky.verify_daily_limit)", f.VerifyDailyLimit)
		return v, err
	}
	ci := &runs.CIVerify{Nonce: newNonce(), Dispatched: b.Time(), Test: ref.String(), Seed: seed,
		Base: runs.CISide{SHA: p.Base, Runs: f.VerifyRunsMax},
		Head: runs.CISide{SHA: p.Checked, Runs: min(evidence.NeededRuns(fix.Measured, f.VerifyRuns), f.VerifyRunsMax)}}
	ref2 := ciRef{Repo: fix.Repo, InstallationID: fix.InstallationID, FixRun: fix.ID, PR: p.Number}
	enc, _ := json.Marshal(ref2)
	if err := b.Ledger.Cache(ctx, ciRefName(ci.Nonce), enc, ciRefTTL); err != nil {
		return v, err
	}
	for _, side := range []struct {
		phase     evidence.Phase
		s         *runs.CISide
		stopAfter int
	}{{evidence.PhaseBefore, &ci.Base, ciBaseStopAfter}, {evidence.PhaseAfter, &ci.Head, 0}} {
		err := gh.DispatchWorkflow(ctx, repo, CIWorkflowFile, branch, map[string]any{
			"sha": side.s.SHA, "test": ci.Test, "seed": strconv.FormatInt(seed, 10), "runs": strconv.Itoa(side.s.Runs),
			"phase": string(side.phase), "stop_after": strconv.Itoa(side.stopAfter), "nonce": ci.Nonce})
		if note := dispatchRefused(err); note != "" {
			v.Note = "not verified in CI: " + note
			return v, b.Ledger.ReleaseCIVerify(ctx, fix.Repo) // nothing started: the day's number is not spent
		}
		if err != nil {
			// GitHub may have started it all the same: not dispatched again
			// (with a new nonce, it would run twice), it is said not started.
			side.s.Unread = "workflow run was not started: GitHub did not take the dispatch (" + github.Describe(err) + ")"
		}
	}
	v.CI = ci
	if ci.Base.Done() && ci.Head.Done() {
		decideCI(&v) // neither started: nothing will come to decide it later
		return v, nil
	}
	if b.Deadlines != nil {
		// The runs are dispatched: a deadline that cannot be scheduled is
		// logged, not retried (that would dispatch them again); the runs'
		// events still end the verification.
		d := queue.CIDeadline{Repo: fix.Repo, InstallationID: fix.InstallationID, Nonce: ci.Nonce}
		err := b.Deadlines.ScheduleCIDeadline(ctx, d, ci.Dispatched.Add(b.CIStart()))
		if d.Finish = true; err == nil {
			err = b.Deadlines.ScheduleCIDeadline(ctx, d, ci.Dispatched.Add(b.CIStart()+b.CIRun()))
		}
		if err != nil {
			zerolog.Ctx(ctx).Warn().Err(err).Str("nonce", ci.Nonce).Msg("could not schedule the deadlines of a verification in CI; its runs' events will end it")
		}
	}
	return v, nil
}

// dispatchRefused is why a dispatch GitHub refused for good cannot start
// until the repository changes something, "" for any other answer.
func dispatchRefused(err error) string {
	switch {
	case errors.Is(err, github.ErrWorkflowMissing):
		return "the workflow is missing: add .github/workflows/" + CIWorkflowFile + " to the default branch (`pitcrew ci-workflow` prints it), then `/pitcrew retry`"
	case errors.Is(err, github.ErrWorkflowRefused):
		return "GitHub would not start .github/workflows/" + CIWorkflowFile + " (" + publish.Text(err.Error(), 300) + "); `pitcrew ci-workflow` prints the workflow pitcrew expects"
	case github.StatusOf(err) == 403 && !rateLimited(err):
		return "GitHub refused to start the workflow (403): the app needs the `actions: write` permission; accept it in the installation's settings, then `/pitcrew retry`"
	}
	return ""
}

func rateLimited(err error) bool {
	_, limited := github.RateLimited(err)
	return limited
}

func newNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
