package follow

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
)

// CIRunNews is what an event says of a run of pitcrew's verification
// workflow: which verification (its nonce) and side (its phase) the run's
// title names, and the run.
type CIRunNews struct {
	Repo  github.Repo
	Nonce string
	Phase evidence.Phase
	Run   github.WorkflowRun
}

// maxCIJobs bounds the jobs of a side's workflow run whose logs are read
// (the workflow has one); ParseRunLog bounds each log.
const maxCIJobs = 5

// CIRunSeen records what an event says of a verification's workflow run
// and, once both sides are done, shows the verification. A run whose
// nonce leads to no verification of this repository is ignored.
func CIRunSeen(ctx context.Context, b *work.Env, gh github.Client, ev CIRunNews) error {
	ref, ok, err := readCIRef(ctx, b, ev.Nonce)
	if err != nil || !ok || !strings.EqualFold(ref.Repo, ev.Repo.String()) {
		if err == nil {
			zerolog.Ctx(ctx).Info().Str("nonce", ev.Nonce).Msg("ignoring a verification workflow run: its nonce names no verification pitcrew keeps for this repository")
		}
		return err
	}
	side := runs.CISide{RunID: ev.Run.ID, URL: ev.Run.URL, Status: ev.Run.Status, Conclusion: ev.Run.Conclusion}
	if ev.Run.Status == "completed" {
		side.Count, side.Truncated, side.Unread, err = countCISide(ctx, gh, ev.Repo, ev.Run, ev.Phase)
		if err != nil && !queue.LastAttempt(ctx) && !github.WillNotChange(err) {
			return err
		}
		if err != nil {
			side.Unread = "workflow run's log could not be read (GitHub: " + github.Describe(err) + ")"
		}
	}
	return settleCI(ctx, b, gh, ref, ev.Nonce, func(ci *runs.CIVerify) {
		if s := ci.Side(ev.Phase); s != nil && !s.Done() {
			side.SHA, side.Runs = s.SHA, s.Runs
			*s = side
		}
	})
}

// CIDeadline is the check, once a verification's workflow runs should
// have started (and again once they should have finished: d.Finish), that
// they did: a side not done is looked for among the workflow's runs (its
// events may have been lost) and read when it is there; one still not
// started, or at the second check not finished, is not waited for any
// more.
func CIDeadline(ctx context.Context, b *work.Env, gh github.Client, d queue.CIDeadline) error {
	ref, ok, err := readCIRef(ctx, b, d.Nonce)
	if err != nil || !ok {
		return err
	}
	fix, err := b.Ledger.Get(ctx, ref.FixRun)
	if err != nil {
		return err
	}
	ci := fixCI(fix, d.Nonce)
	if ci == nil || !d.Finish && ci.Base.RunID != 0 && ci.Head.RunID != 0 || ci.Base.Done() && ci.Head.Done() {
		return nil
	}
	repo, err := github.ParseRepo(ref.Repo)
	if err != nil {
		return queue.Permanent(err)
	}
	branch, err := gh.DefaultBranch(ctx, repo)
	if err != nil {
		return err
	}
	listed, err := gh.WorkflowRuns(ctx, repo, CIWorkflowFile, ci.Dispatched.Add(-b.CIStart()))
	if err != nil {
		return err
	}
	for _, r := range listed {
		// As from its events: only a run dispatched on the default branch.
		if r.HeadBranch != branch || r.Event != "workflow_dispatch" {
			continue
		}
		if nonce, phase, ok := ParseCITitle(r.Title); ok && nonce == d.Nonce && !ci.Side(phase).Done() {
			if err := CIRunSeen(ctx, b, gh, CIRunNews{Repo: repo, Nonce: nonce, Phase: phase, Run: r}); err != nil {
				return err
			}
		}
	}
	return settleCI(ctx, b, gh, ref, d.Nonce, func(ci *runs.CIVerify) {
		for _, s := range []*runs.CISide{&ci.Base, &ci.Head} {
			switch {
			case s.Done():
			case s.RunID == 0:
				s.Unread = fmt.Sprintf("workflow run did not start within %s", b.CIStart())
			case d.Finish:
				s.Unread = fmt.Sprintf("workflow run did not finish within %s", b.CIStart()+b.CIRun())
			}
		}
	})
}

// settleCI applies change to the verification of nonce on its fix's pull
// request and, when that leaves both sides done, decides and shows it.
func settleCI(ctx context.Context, b *work.Env, gh github.Client, ref ciRef, nonce string, change func(*runs.CIVerify)) error {
	decided, changed, shown := false, false, false
	fix, err := Read(ctx, b, gh, ref.Repo, ref.FixRun, ref.PR, News{Apply: func(p *runs.Pull) {
		v := p.Verify
		if v == nil || v.CI == nil || v.CI.Nonce != nonce {
			return
		}
		if v.Result != nil || v.Note != "" {
			shown = true // decided before: by this task, if it is a retry
			return
		}
		changed = true
		ci := *v.CI
		change(&ci)
		nv := *v
		nv.CI = &ci
		if ci.Base.Done() && ci.Head.Done() {
			decideCI(&nv)
			decided = true
		}
		p.Verify = &nv
	}})
	if err == nil && shown && queue.Retried(ctx) {
		// A retry after the decision was recorded: what failed may be the
		// check run's update, which only this task would make.
		return showVerified(ctx, b, gh, fix, fix.PR.Verify.Head, fix.PR.CheckRunID)
	}
	if err != nil || !changed {
		return err
	}
	if !decided { // where the runs stand, on the status comment only
		return b.Publish.Subjects(ctx, gh, fix, runs.Subject{})
	}
	return showVerified(ctx, b, gh, fix, fix.PR.Verify.Head, fix.PR.CheckRunID)
}

// decideCI is the verification's result once both sides are done: what
// pitcrew counted, or why a side could not be counted.
func decideCI(v *runs.Verify) {
	ci := v.CI
	for _, s := range []struct {
		name string
		side runs.CISide
	}{{"the base", ci.Base}, {"the head", ci.Head}} {
		if s.side.Count == nil {
			v.Note = "not verified in CI: " + s.name + "'s " + s.side.Unread
			return
		}
	}
	asked := evidence.CIAsked{Base: ci.Base.Runs, Head: ci.Head.Runs, BaseStopAfter: ciBaseStopAfter}
	r := evidence.CheckCI(*ci.Base.Count, *ci.Head.Count, ci.Seed, asked, ci.Base.Truncated || ci.Head.Truncated)
	v.Result = &r
}

// countCISide reads a completed side's job logs and counts the runs of
// phase in them; unread says why there is nothing to count (a run that
// was cancelled, or failed before it ran the test).
func countCISide(ctx context.Context, gh github.Client, repo github.Repo, run github.WorkflowRun, phase evidence.Phase) (count *evidence.PhaseCount, truncated bool, unread string, err error) {
	switch run.Conclusion {
	case "success", "failure":
	case "cancelled":
		return nil, false, "workflow run was cancelled", nil
	default:
		return nil, false, "workflow run ended " + strings.ReplaceAll(run.Conclusion, "_", " "), nil
	}
	jobs, err := gh.Jobs(ctx, repo, run.ID, max(run.Attempt, 1))
	if err != nil {
		return nil, false, "", err
	}
	total := evidence.PhaseCount{}
	for i, job := range jobs {
		if i == maxCIJobs {
			truncated = true
			break
		}
		body, err := gh.JobLog(ctx, repo, job.ID)
		if err != nil {
			return nil, false, "", err
		}
		m, err := evidence.ParseRunLog(body)
		body.Close()
		if err != nil {
			return nil, false, "", err
		}
		truncated = truncated || m.Truncated
		c := m.Phase(phase)
		total.Runs += c.Runs
		total.FailedRuns += c.FailedRuns
		total.Seeds = append(total.Seeds, c.Seeds...)
		total.FailingSeeds = append(total.FailingSeeds, c.FailingSeeds...)
		total.FailingTests = append(total.FailingTests, c.FailingTests...)
	}
	switch {
	case run.Conclusion == "failure" && total.Runs == 0:
		return nil, false, "workflow run failed before it ran the test (its set-up failed)", nil
	case run.Conclusion == "failure":
		// The script never fails because the test does: the job itself
		// died (a timeout, a lost runner), and its count is not whole.
		return nil, false, fmt.Sprintf("workflow run failed after %d %s (a timeout or a lost runner): pitcrew counts a run that completed", total.Runs, publish.Plural(total.Runs, "run", "runs")), nil
	}
	return &total, truncated, "", nil
}

func readCIRef(ctx context.Context, b *work.Env, nonce string) (ciRef, bool, error) {
	raw, ok, err := b.Ledger.Cached(ctx, ciRefName(nonce))
	var ref ciRef
	if err != nil || !ok || json.Unmarshal(raw, &ref) != nil {
		return ref, false, err
	}
	return ref, true, nil
}

// fixCI is the verification in CI of nonce on fix's pull request, nil
// when it is not (any more) the one it shows.
func fixCI(fix runs.Run, nonce string) *runs.CIVerify {
	if fix.PR == nil || fix.PR.Verify == nil || fix.PR.Verify.CI == nil || fix.PR.Verify.CI.Nonce != nonce {
		return nil
	}
	return fix.PR.Verify.CI
}

// ParseCITitle reads a verification workflow run's title, "pitcrew verify
// <nonce> <phase>" (the workflow's run-name).
func ParseCITitle(title string) (nonce string, phase evidence.Phase, ok bool) {
	f := strings.Fields(title)
	if len(f) != 4 || f[0] != "pitcrew" || f[1] != "verify" || len(f[2]) != 32 || strings.Trim(f[2], "0123456789abcdef") != "" {
		return "", "", false
	}
	switch p := evidence.Phase(f[3]); p {
	case evidence.PhaseBefore, evidence.PhaseAfter:
		return f[2], p, true
	}
	return "", "", false
}
