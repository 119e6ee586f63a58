package ops

import (
	"context"
	"errors"
	"time"

	gogithub "github.com/google/go-github/v66/github"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/internal/metrics"
)

// DeliverySweeper asks GitHub to redeliver webhooks that pitcrew never
// acknowledged (a timeout, a 503 while Redis was down): GitHub does not
// retry failed deliveries by itself. It reads the app's delivery log
// within LookBack, and asks once per delivery guid.
type DeliverySweeper struct {
	AppClient func() (*gogithub.Client, error)
	Redis     redis.UniversalClient
	Metrics   *metrics.Metrics
	LookBack  time.Duration // default 3 days
	// MaxPerSweep bounds the redeliveries asked for in one sweep.
	MaxPerSweep int
}

// ProcessTask implements asynq.Handler for TaskSweepDeliveries.
func (s *DeliverySweeper) ProcessTask(ctx context.Context, _ *asynq.Task) error {
	client, err := s.AppClient()
	if err != nil {
		return err
	}
	lookBack := s.LookBack
	if lookBack <= 0 {
		lookBack = 72 * time.Hour
	}
	since := time.Now().Add(-lookBack)
	ok := map[string]bool{}
	failed := map[string]int64{} // guid → a delivery id to redeliver
	opts := &gogithub.ListCursorOptions{PerPage: 100}
	checked := 0
pages:
	for {
		deliveries, resp, err := client.Apps.ListHookDeliveries(ctx, opts)
		if err != nil {
			return err
		}
		for _, d := range deliveries {
			if d.GetDeliveredAt().Before(since) {
				break pages
			}
			checked++
			guid := d.GetGUID()
			if code := d.GetStatusCode(); code >= 200 && code < 300 {
				ok[guid] = true
			} else if _, seen := failed[guid]; !seen {
				failed[guid] = d.GetID()
			}
		}
		if resp.Cursor == "" {
			break
		}
		opts.Cursor = resp.Cursor
	}
	s.Metrics.SweptDeliveries.Add(float64(checked))
	asked, limit := 0, s.MaxPerSweep
	if limit <= 0 {
		limit = 100
	}
	for guid, id := range failed {
		if ok[guid] || asked >= limit {
			continue
		}
		first, err := s.Redis.SetNX(ctx, "pitcrew:redelivered:"+guid, id, lookBack+time.Hour).Result()
		if err != nil {
			return err
		}
		if !first {
			continue // asked before: once per guid
		}
		// GitHub answers 202 Accepted, which go-github reports as an error.
		if _, _, err := client.Apps.RedeliverHookDelivery(ctx, id); err != nil && !errors.As(err, new(*gogithub.AcceptedError)) {
			// Not asked after all: the next sweep tries again.
			s.Redis.Del(context.WithoutCancel(ctx), "pitcrew:redelivered:"+guid)
			zerolog.Ctx(ctx).Warn().Err(err).Str("guid", guid).Msg("sweeper: redelivery refused")
			s.Metrics.Redeliveries.WithLabelValues("refused").Inc()
			continue
		}
		asked++
		s.Metrics.Redeliveries.WithLabelValues("asked").Inc()
		zerolog.Ctx(ctx).Info().Str("guid", guid).Int64("delivery", id).Msg("sweeper: asked GitHub to redeliver a delivery that never got an OK")
	}
	zerolog.Ctx(ctx).Info().Int("checked", checked).Int("redelivered", asked).Msg("sweeper: delivery log read")
	return nil
}
