package runs

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/pitcrew/pitcrew/evidence"
)

// CIVerify is the verification of a fix in the repository's own CI
// (flaky.verify: ci): pitcrew's workflow, dispatched once on the pull
// request's base and once on its head, each run's log counted by pitcrew.
type CIVerify struct {
	// Nonce names this verification in its workflow runs' titles.
	Nonce      string    `json:"nonce"`
	Dispatched time.Time `json:"dispatched"`
	Test       string    `json:"test"`
	Seed       int64     `json:"seed"`
	Base       CISide    `json:"base"`
	Head       CISide    `json:"head"`
}

// CISide is the workflow run of one side: what it was asked, where it
// stands, and what pitcrew counted in its log once it completed.
type CISide struct {
	SHA  string `json:"sha"`
	Runs int    `json:"runs"` // the runs it was asked for
	// RunID and URL are its workflow run's, once GitHub named one.
	RunID int64  `json:"run_id,omitempty"`
	URL   string `json:"url,omitempty"`
	// Status and Conclusion are GitHub's for the run.
	Status     string `json:"status,omitempty"`
	Conclusion string `json:"conclusion,omitempty"`
	// Count is what its job's log showed; nil until it was read.
	// Truncated says the log was longer than pitcrew reads.
	Count     *evidence.PhaseCount `json:"count,omitempty"`
	Truncated bool                 `json:"truncated,omitempty"`
	// Unread says why its log could not be counted, when it could not.
	Unread string `json:"unread,omitempty"`
}

// Done reports whether nothing more will come of the side: its log was
// counted, or it cannot be.
func (s CISide) Done() bool { return s.Count != nil || s.Unread != "" }

// Side is the side of phase (evidence.PhaseBefore: the base), nil for
// another phase.
func (c *CIVerify) Side(phase evidence.Phase) *CISide {
	switch phase {
	case evidence.PhaseBefore:
		return &c.Base
	case evidence.PhaseAfter:
		return &c.Head
	}
	return nil
}

func (l *Ledger) ciVerifyKey(repo string) string {
	return l.prefix + "ci-verifications:" + strings.ToLower(repo) + ":" + l.now().UTC().Format("2006-01-02")
}

// ReserveCIVerify takes one of repo's dailyCap verifications in CI for
// today (each dispatches two workflow runs); false when the cap is reached.
func (l *Ledger) ReserveCIVerify(ctx context.Context, repo string, dailyCap int) (bool, error) {
	res, err := l.reserveDaily(ctx, l.ciVerifyKey(repo), dailyCap)
	if err != nil {
		return false, fmt.Errorf("runs: reserve a verification in CI of %s: %w", repo, err)
	}
	return res == IssueReserved, nil
}

// ReleaseCIVerify gives back a verification reserved today that started
// nothing.
func (l *Ledger) ReleaseCIVerify(ctx context.Context, repo string) error {
	return l.rdb.Decr(ctx, l.ciVerifyKey(repo)).Err()
}
