package runs

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// A daily cap on the issues pitcrew opens in a repository (tracking issues
// of alerts and of flaky tests), so that a storm of signals cannot become a
// storm of issues. The count is per UTC day, like the runs' daily limit.

// reserveIssueScript takes one of the day's issues (KEYS[1]) unless the
// cap (ARGV[1]) is reached; past it, it sets the day's "reached" flag
// (KEYS[2]) and says whether this call set it first.
var reserveIssueScript = redis.NewScript(`
if redis.call('INCR', KEYS[1]) > tonumber(ARGV[1]) then
  redis.call('DECR', KEYS[1])
  local first = redis.call('SET', KEYS[2], '1', 'NX', 'EX', 172800)
  if first then return 2 end
  return 0
end
redis.call('EXPIRE', KEYS[1], 172800)
return 1
`)

// IssueReservation is the answer of ReserveIssue.
type IssueReservation int

// The answers of ReserveIssue.
const (
	IssueRefused      IssueReservation = iota // the cap is reached, and was already reported today
	IssueReserved                             // the caller may open one issue
	IssueFirstRefusal                         // the cap is reached; the caller is the first today to hear it
)

func (l *Ledger) issuesKey(repo string) string {
	return l.prefix + "issues-opened:" + strings.ToLower(repo) + ":" + l.now().UTC().Format("2006-01-02")
}

// ReserveIssue takes one of repo's dailyCap issues for today. A caller
// that opens no issue after all gives it back with ReleaseIssue.
func (l *Ledger) ReserveIssue(ctx context.Context, repo string, dailyCap int) (IssueReservation, error) {
	key := l.issuesKey(repo)
	n, err := reserveIssueScript.Run(ctx, l.rdb, []string{key, key + ":reached"}, dailyCap).Int()
	if err != nil {
		return IssueRefused, fmt.Errorf("runs: reserve an issue in %s: %w", repo, err)
	}
	return IssueReservation(n), nil
}

// ReleaseIssue gives back an issue reserved today and not opened.
func (l *Ledger) ReleaseIssue(ctx context.Context, repo string) error {
	return l.rdb.Decr(ctx, l.issuesKey(repo)).Err()
}

// IssuesOpened is how many issues repo's cap has counted today.
func (l *Ledger) IssuesOpened(ctx context.Context, repo string) (int, error) {
	n, err := l.rdb.Get(ctx, l.issuesKey(repo)).Int()
	if err == redis.Nil {
		return 0, nil
	}
	return n, err
}
