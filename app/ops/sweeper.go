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
// within LookBack and, for each guid whose deliveries all failed, asks for
// its newest failed one again: once per failed delivery (a redelivery that
// fails too, during a failover say, is asked for again at a later sweep),
// at most MaxPerGUID times.
type DeliverySweeper struct {
	AppClient func() (*gogithub.Client, error)
	Redis     redis.UniversalClient
	Metrics   *metrics.Metrics
	LookBack  time.Duration // default 3 days
	// MaxPerSweep bounds the redeliveries asked for in one sweep;
	// MaxPerGUID those of one guid (default 5).
	MaxPerSweep, MaxPerGUID int
}

// askScript records that the sweeper asks to redeliver delivery ARGV[1] of
// a guid (KEYS[1]): 0 when that delivery was asked for already (its
// redelivery is not in the log yet), -1 past ARGV[2] asks for the guid.
var askScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'id') == ARGV[1] then return 0 end
if tonumber(redis.call('HGET', KEYS[1], 'asked') or '0') >= tonumber(ARGV[2]) then return -1 end
redis.call('HSET', KEYS[1], 'id', ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return redis.call('HINCRBY', KEYS[1], 'asked', 1)
`)

func redeliveriesKey(guid string) string { return "pitcrew:redeliveries:" + guid }

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
	asked, limit, maxPerGUID := 0, s.MaxPerSweep, s.MaxPerGUID
	if limit <= 0 {
		limit = 100
	}
	if maxPerGUID <= 0 {
		maxPerGUID = 5
	}
	for guid, id := range failed {
		if ok[guid] || asked >= limit {
			continue
		}
		n, err := askScript.Run(ctx, s.Redis, []string{redeliveriesKey(guid)}, id, maxPerGUID, int64((lookBack+time.Hour)/time.Second)).Int()
		if err != nil {
			return err
		}
		if n <= 0 {
			if n < 0 {
				zerolog.Ctx(ctx).Warn().Str("guid", guid).Int("max", maxPerGUID).Msg("sweeper: a delivery failed every redelivery asked for; not asking again")
			}
			continue
		}
		// GitHub answers 202 Accepted, which go-github reports as an error.
		if _, _, err := client.Apps.RedeliverHookDelivery(ctx, id); err != nil && !errors.As(err, new(*gogithub.AcceptedError)) {
			// Not asked after all: the next sweep tries again.
			undo := context.WithoutCancel(ctx)
			s.Redis.HDel(undo, redeliveriesKey(guid), "id")
			s.Redis.HIncrBy(undo, redeliveriesKey(guid), "asked", -1)
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
