package runs

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Entry is one thing a subject names (a test, a merge commit, an alert's
// title), and the run that answers for it.
type Entry struct {
	About    string `json:"test"`             // stored as "test" since flaky tests came first
	RunID    string `json:"run_id,omitempty"` // empty when no run was started (see Note)
	Relation Claim  `json:"relation"`         // new: this subject started it; attached/cooldown: another signal did

	Cooldown time.Duration `json:"cooldown,omitempty"` // the cooldown a ClaimCooldown was judged with
	Note     string        `json:"note,omitempty"`     // why no run started, e.g. the daily limit

	// What a CI log said about the failure (check runs only).
	Name      string   `json:"name,omitempty"`
	Module    string   `json:"module,omitempty"`
	Seed      *int64   `json:"seed,omitempty"`
	Excerpt   []string `json:"excerpt,omitempty"`
	Sightings int64    `json:"sightings,omitempty"`
	Owners    *Owners  `json:"owners,omitempty"` // of the test's file; nil when not looked up
}

// Owners are whom pitcrew names for a test file: its owners in the
// repository's CODEOWNERS, or, when no line names any, whoever changed it
// last (named, never pinged).
type Owners struct {
	Listed        []string `json:"listed,omitempty"` // @user, @org/team or an email, as CODEOWNERS writes them
	LastCommitter string   `json:"last_committer,omitempty"`
}

// RunIDs lists the runs entries name.
func RunIDs(entries []Entry) []string {
	var ids []string
	for _, e := range entries {
		if e.RunID != "" {
			ids = append(ids, e.RunID)
		}
	}
	return ids
}

// Status is what a subject shows, and where it is on GitHub.
type Status struct {
	InstallationID int64    `json:"installation_id"`
	Job            string   `json:"job,omitempty"` // the runs' kind; empty for flaky
	Label          string   `json:"label"`         // the label that starts runs, named in retry hints
	CommentID      int64    `json:"comment_id,omitempty"`
	CheckRunID     int64    `json:"check_run_id,omitempty"`
	Creating       bool     `json:"creating,omitempty"` // a create was sent whose id may not be recorded
	Heading        string   `json:"about,omitempty"`    // Markdown naming what a check run reports on, e.g. workflow `CI`
	Notice         string   `json:"notice,omitempty"`   // why nothing started, shown instead of runs
	Entries        []Entry  `json:"entries,omitempty"`
	Rejected       []string `json:"rejected,omitempty"` // mentions that were not valid test paths, or CI failures set aside, with reasons
	// Written is when pitcrew last wrote the comment or check run.
	Written time.Time `json:"written,omitzero"`
}

// Replace sets what the subject shows to next, keeping where it is on
// GitHub (the comment or check run, and a create under way).
func (st *Status) Replace(next Status) {
	next.CommentID, next.CheckRunID, next.Creating = st.CommentID, st.CheckRunID, st.Creating
	*st = next
}

func (l *Ledger) statusKey(s Subject) string { return l.prefix + "status:" + s.String() }

// Status reads what a subject shows; a zero value if pitcrew never wrote it.
func (l *Ledger) Status(ctx context.Context, s Subject) (Status, error) {
	return decodeStatus(l.rdb.Get(ctx, l.statusKey(s)))
}

func decodeStatus(get *redis.StringCmd) (Status, error) {
	var st Status
	b, err := get.Bytes()
	if errors.Is(err, redis.Nil) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal(b, &st)
}

// SaveStatus stores what a subject shows. Callers hold the subject's lock
// (see Lock).
func (l *Ledger) SaveStatus(ctx context.Context, s Subject, st Status) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return l.rdb.Set(ctx, l.statusKey(s), b, Retention).Err()
}
