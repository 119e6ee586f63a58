package runs

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// MaxReport bounds a stored report; the sandbox keeps the whole one.
const MaxReport = 1 << 20

func (l *Ledger) reportKey(runID string) string { return l.prefix + "run:" + runID + ":report" }

// SaveReport stores the report a run produced (cut at MaxReport bytes).
func (l *Ledger) SaveReport(ctx context.Context, runID string, report []byte) error {
	if len(report) > MaxReport {
		report = report[:MaxReport]
	}
	return l.rdb.Set(ctx, l.reportKey(runID), report, Retention).Err()
}

// Report reads a run's stored report; empty when there is none.
func (l *Ledger) Report(ctx context.Context, runID string) (string, error) {
	s, err := l.rdb.Get(ctx, l.reportKey(runID)).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	return s, err
}
