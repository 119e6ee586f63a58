package runs

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// The issue that holds a flaky test's history (flaky.track_issues), by the
// test's idempotency key. 0 while an issue is being opened.

func (l *Ledger) trackingKey(key string) string { return l.prefix + "track:" + key }

// TrackingIssue returns the issue number for key; ok is false when there is
// none and the caller now holds the right to open it (for ten minutes,
// should it crash); n is 0 with ok true while another caller opens it.
func (l *Ledger) TrackingIssue(ctx context.Context, key string) (n int, ok bool, err error) {
	claimed, err := l.rdb.SetNX(ctx, l.trackingKey(key), "0", 10*time.Minute).Result()
	if err != nil || claimed {
		return 0, !claimed && err == nil, err
	}
	v, err := l.rdb.Get(ctx, l.trackingKey(key)).Result()
	if errors.Is(err, redis.Nil) {
		return 0, true, nil
	}
	if err != nil {
		return 0, true, err
	}
	n, _ = strconv.Atoi(v)
	return n, true, nil
}

// SetTrackingIssue records the issue opened for key.
func (l *Ledger) SetTrackingIssue(ctx context.Context, key string, n int) error {
	return l.rdb.Set(ctx, l.trackingKey(key), n, 0).Err()
}

// DropTrackingClaim gives up the right to open key's issue that
// TrackingIssue handed out, when the caller opens none.
func (l *Ledger) DropTrackingClaim(ctx context.Context, key string) error {
	return l.rdb.Eval(ctx, "if redis.call('GET', KEYS[1]) == '0' then return redis.call('DEL', KEYS[1]) end return 0", []string{l.trackingKey(key)}).Err()
}
