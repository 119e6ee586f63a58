package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Subject is a GitHub issue whose status comment shows runs.
type Subject struct {
	Repo  string // owner/name
	Issue int
}

// String renders the subject as owner/name#N.
func (s Subject) String() string { return s.Repo + "#" + strconv.Itoa(s.Issue) }

// ParseSubject reverses Subject.String.
func ParseSubject(v string) (Subject, error) {
	i := strings.LastIndexByte(v, '#')
	n, err := strconv.Atoi(v[i+1:])
	if i <= 0 || err != nil {
		return Subject{}, fmt.Errorf("runs: bad subject %q", v)
	}
	return Subject{Repo: v[:i], Issue: n}, nil
}

// Entry is one test an issue names, and the run that answers for it.
type Entry struct {
	Test     string `json:"test"`
	RunID    string `json:"run_id"`
	Relation Claim  `json:"relation"` // new: this issue started it; attached/cooldown: another signal did

	Cooldown time.Duration `json:"cooldown,omitempty"` // the cooldown a ClaimCooldown was judged with
}

// IssueStatus is what one issue's status comment shows, and where it is.
type IssueStatus struct {
	InstallationID int64    `json:"installation_id"`
	Label          string   `json:"label"` // the label that starts runs, named in retry hints
	CommentID      int64    `json:"comment_id,omitempty"`
	Notice         string   `json:"notice,omitempty"` // why nothing started, shown instead of runs
	Entries        []Entry  `json:"entries,omitempty"`
	Rejected       []string `json:"rejected,omitempty"` // mentions that were not valid test paths, with reasons
}

func (l *Ledger) subjectsKey(runID string) string { return l.prefix + "run:" + runID + ":subjects" }
func (l *Ledger) issueKey(s Subject) string       { return l.prefix + "issue:" + s.String() }

// Subscribe records that s shows the run's progress.
func (l *Ledger) Subscribe(ctx context.Context, runID string, s Subject) error {
	_, err := l.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.SAdd(ctx, l.subjectsKey(runID), s.String())
		p.Expire(ctx, l.subjectsKey(runID), Retention)
		return nil
	})
	return err
}

// Subjects lists the issues that show the run.
func (l *Ledger) Subjects(ctx context.Context, runID string) ([]Subject, error) {
	vals, err := l.rdb.SMembers(ctx, l.subjectsKey(runID)).Result()
	if err != nil {
		return nil, err
	}
	out := make([]Subject, 0, len(vals))
	for _, v := range vals {
		s, err := ParseSubject(v)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// IssueStatus reads what an issue's status comment shows; a zero value if
// pitcrew never commented.
func (l *Ledger) IssueStatus(ctx context.Context, s Subject) (IssueStatus, error) {
	var st IssueStatus
	b, err := l.rdb.Get(ctx, l.issueKey(s)).Bytes()
	if errors.Is(err, redis.Nil) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal(b, &st)
}

// SaveIssueStatus stores what an issue's status comment shows. Callers hold
// the issue's lock (see Lock).
func (l *Ledger) SaveIssueStatus(ctx context.Context, s Subject, st IssueStatus) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return l.rdb.Set(ctx, l.issueKey(s), b, Retention).Err()
}
