package runs

import (
	"context"
	"encoding/json"
	"time"
)

// DeliveryRecord is one GitHub delivery as the worker handled it.
type DeliveryRecord struct {
	ID      string    `json:"id"`
	Event   string    `json:"event"`
	Outcome string    `json:"outcome"` // handled, failed, skipped (already processed)
	At      time.Time `json:"at"`
}

func (l *Ledger) deliveriesKey() string { return l.prefix + "recent-deliveries" }

// RecentDeliveries lists the last deliveries, newest first.
func (l *Ledger) RecentDeliveries(ctx context.Context, limit int64) ([]DeliveryRecord, error) {
	vals, err := l.rdb.LRange(ctx, l.deliveriesKey(), 0, limit-1).Result()
	if err != nil {
		return nil, err
	}
	out := make([]DeliveryRecord, 0, len(vals))
	for _, v := range vals {
		var d DeliveryRecord
		if json.Unmarshal([]byte(v), &d) == nil {
			out = append(out, d)
		}
	}
	return out, nil
}
