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

func (l *Ledger) dataKey(runID string) string { return l.prefix + "run:" + runID + ":data" }

// SaveData stores the machine-readable artifact a run left beside its
// report (Job.Data), cut at MaxReport bytes.
func (l *Ledger) SaveData(ctx context.Context, runID string, data []byte) error {
	if len(data) > MaxReport {
		data = data[:MaxReport]
	}
	return l.rdb.Set(ctx, l.dataKey(runID), data, Retention).Err()
}

// Data reads a run's stored machine-readable artifact; ok is false when
// the run left none.
func (l *Ledger) Data(ctx context.Context, runID string) (data []byte, ok bool, err error) {
	data, err = l.rdb.Get(ctx, l.dataKey(runID)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	return data, err == nil, err
}
