package follow

import (
	"context"
	"errors"
	"time"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
)

// VerifyAgain answers /pitcrew retry where a fix's verification in CI did
// not verify (its workflow was missing, a run never started or was
// cancelled, a side disagreed): on the fix's pull request (onPull) or on
// the issue whose status shows the fix, it forgets that verification and
// dispatches a new one for the same head, within the daily number. again
// is false when no such verification is there: the retry is then the
// runs'.
func VerifyAgain(ctx context.Context, b *work.Env, gh github.Client, subject runs.Subject, onPull bool) (again bool, err error) {
	var ids []string
	if onPull {
		id, err := b.Ledger.PullRun(ctx, subject.Repo, subject.Issue)
		if err != nil || id == "" {
			return false, err
		}
		ids = append(ids, id)
	} else {
		st, err := b.Ledger.Status(ctx, subject)
		if err != nil {
			return false, err
		}
		for _, e := range st.Entries {
			ids = append(ids, e.RunID)
		}
	}
	for _, id := range ids {
		fix, err := b.Ledger.Get(ctx, id)
		if errors.Is(err, runs.ErrNotFound) || err == nil && !unverifiedInCI(fix, b.Time().Add(-b.CIStart()-b.CIRun())) && !VerifyPending(fix) {
			continue
		}
		if err != nil {
			return false, err
		}
		// A verification pending (an earlier retry's dispatch failed) is
		// started; one that did not verify, or never settled, is forgotten
		// and started again.
		p := fix.PR
		if fix, err = Read(ctx, b, gh, fix.Repo, fix.ID, p.Number, News{Apply: func(p *runs.Pull) {
			if p.Verify != nil && p.Verify.Head == p.Checked {
				p.Verify = nil
			}
		}}); err != nil {
			return false, err
		}
		if fix, err = Verify(ctx, b, gh, fix); err != nil {
			return false, err
		}
		return true, b.Publish.Subjects(ctx, gh, fix, runs.Subject{})
	}
	return false, nil
}

// unverifiedInCI reports whether fix's pull request shows, for its
// checked head, a verification in CI that ended without verifying it, or
// one dispatched before stale that never settled (its events and both
// deadlines lost).
func unverifiedInCI(fix runs.Run, stale time.Time) bool {
	p := fix.PR
	if p == nil || p.State != runs.PullOpen || p.Verify == nil || !p.Verify.InCI || p.Verify.Head != p.Checked {
		return false
	}
	v := p.Verify
	switch {
	case v.Note != "" || v.Result != nil && v.Result.Verdict != evidence.VerdictClean:
		return true
	case v.Result == nil && v.CI != nil:
		return v.CI.Dispatched.Before(stale)
	}
	return false
}
