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

// reserveDailyScript takes one of the day's issues (or verifications in
// CI) counted in KEYS[1] unless the cap (ARGV[1]) is reached; past it, it
// sets the day's "reached" flag (KEYS[2]) and says whether this call set
// it first.
var reserveDailyScript = redis.NewScript(`
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
	res, err := l.reserveDaily(ctx, l.issuesKey(repo), dailyCap)
	if err != nil {
		return IssueRefused, fmt.Errorf("runs: reserve an issue in %s: %w", repo, err)
	}
	return res, nil
}

// reserveDaily takes one of dailyCap for today in the count at key.
func (l *Ledger) reserveDaily(ctx context.Context, key string, dailyCap int) (IssueReservation, error) {
	n, err := reserveDailyScript.Run(ctx, l.rdb, []string{key, key + ":reached"}, dailyCap).Int()
	return IssueReservation(n), err
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

func (l *Ledger) rerunsKey(repo string) string {
	return l.prefix + "known-flake-reruns:" + strings.ToLower(repo) + ":" + l.now().UTC().Format("2006-01-02")
}

// ReserveRerun takes one of repo's dailyCap re-runs of jobs that only
// known flaky tests failed, for today; false when the cap is reached.
func (l *Ledger) ReserveRerun(ctx context.Context, repo string, dailyCap int) (bool, error) {
	res, err := l.reserveDaily(ctx, l.rerunsKey(repo), dailyCap)
	if err != nil {
		return false, fmt.Errorf("runs: reserve a re-run in %s: %w", repo, err)
	}
	return res == IssueReserved, nil
}
