package runs

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Subject is a place on GitHub that shows runs: an issue's (or pull
// request's) status comment, a check run on a commit (Commit and Source
// set: the CI run whose flakes it reports), or a comment on a commit
// (Source is SourceCommit).
type Subject struct {
	Repo   string // owner/name
	Issue  int
	Commit string // head SHA, for a check run
	Source string // e.g. "workflow_run:123", for a check run
}

// SourceCommit is the Source of a subject that is a comment on the commit
// itself (a push without a pull request).
const SourceCommit = "commit"

// IsCheck reports whether the subject is a check run.
func (s Subject) IsCheck() bool { return s.Commit != "" && s.Source != SourceCommit }

// IsCommit reports whether the subject is a comment on a commit.
func (s Subject) IsCommit() bool { return s.Commit != "" && s.Source == SourceCommit }

// String renders owner/name#N for an issue, owner/name@sha~source for a
// check run.
func (s Subject) String() string {
	if s.IsCheck() {
		return s.Repo + "@" + s.Commit + "~" + s.Source
	}
	return s.Repo + "#" + strconv.Itoa(s.Issue)
}

// ParseSubject reverses Subject.String.
func ParseSubject(v string) (Subject, error) {
	if at := strings.IndexByte(v, '@'); at > 0 {
		commit, source, ok := strings.Cut(v[at+1:], "~")
		if ok && commit != "" && source != "" {
			return Subject{Repo: v[:at], Commit: commit, Source: source}, nil
		}
		return Subject{}, fmt.Errorf("runs: bad subject %q", v)
	}
	i := strings.LastIndexByte(v, '#')
	if i <= 0 {
		return Subject{}, fmt.Errorf("runs: bad subject %q", v)
	}
	n, err := strconv.Atoi(v[i+1:])
	if err != nil {
		return Subject{}, fmt.Errorf("runs: bad subject %q", v)
	}
	return Subject{Repo: v[:i], Issue: n}, nil
}

func (l *Ledger) subjectsKey(runID string) string { return l.prefix + "run:" + runID + ":subjects" }

// Subscribe records that s shows the run's progress.
func (l *Ledger) Subscribe(ctx context.Context, runID string, s Subject) error {
	_, err := l.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.SAdd(ctx, l.subjectsKey(runID), s.String())
		p.Expire(ctx, l.subjectsKey(runID), Retention)
		return nil
	})
	return err
}

// Subjects lists the subjects that show the run.
func (l *Ledger) Subjects(ctx context.Context, runID string) ([]Subject, error) {
	vals, err := l.rdb.SMembers(ctx, l.subjectsKey(runID)).Result()
	if err != nil {
		return nil, err
	}
	return parseSubjects(vals)
}

// SubjectsOf lists the subjects that showed run when it was last written,
// read with that write (no round trip); for a run read any other way, the
// subjects now. A subject that subscribes after the write shows the run as
// its own handler reads it, which is this write or later.
func (l *Ledger) SubjectsOf(ctx context.Context, run Run) ([]Subject, error) {
	if run.subjects == nil {
		return l.Subjects(ctx, run.ID)
	}
	return parseSubjects(run.subjects)
}

func parseSubjects(vals []string) ([]Subject, error) {
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
