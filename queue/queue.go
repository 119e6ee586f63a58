// Package queue is the durable queue between the hooks and the handlers
// (asynq on Redis): the task types and their constructors, the retry
// policy, the keys that remember finished deliveries, and the periodic
// ticks every replica sends and one worker runs.
package queue

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/hibiken/asynq"

	"github.com/pitcrew/pitcrew/internal/github"
)

// Task types on the durable queue.
const (
	TaskGitHubDelivery = "github:compressed-delivery" // a verified GitHub webhook delivery (AppendDelivery)
	// TaskGitHubDeliveryJSON is a delivery stored as JSON, by a replica
	// older than the compression: such tasks may still be queued. A
	// replica that old has no handler for the new type (asynq matches a
	// type by prefix, hence a name the old one is not a prefix of), so it
	// retries those tasks until a newer replica takes them, rather than
	// reading them as JSON and giving up.
	TaskGitHubDeliveryJSON = "github:delivery"
	TaskSessionRefresh     = "sandbox:Refresh" // read a session and report its outcome
)

// Queue names; a busy GitHub intake does not delay outcome reports.
const (
	QueueGitHub  = "github"
	QueueOutcome = "outcome"
)

const (
	// DeliveryRetention keeps a finished delivery task in Redis, so a
	// redelivery within that time is refused at intake by its task id.
	DeliveryRetention = time.Hour
	// ProcessedTTL is how long the worker remembers a delivery id it
	// finished: as long as GitHub redelivers it (3 days).
	ProcessedTTL = 72 * time.Hour
	// BodyTTL is how long it remembers the body a delivery carried
	// (BodyKey). GitHub signs only the body: the same body under another
	// delivery id is a captured one sent again, and is dropped for as long
	// as the ledger keeps the runs it may have started (runs.Retention),
	// since the ledger alone would start another (a failed run holds no
	// cooldown, a completed one the repository's, at most 30 days).
	BodyTTL  = 30 * 24 * time.Hour
	MaxRetry = 12
	// AlertRetention keeps a finished alert task (AlertTask), so a repeat
	// of the same body within it is refused by its task id. It covers the
	// window of event times a Sentry body is accepted in
	// (alerts.SentryMaxEventAge, alerts.SentryMaxSkew): a body sent again
	// later is refused as stale, so none is stored twice.
	AlertRetention = 25 * time.Hour
)

// AlertTask is the queue's task for a stored request of an outside alert
// source: its id is the body's hash, so a repeat of the same body is
// refused as a duplicate instead of handled twice.
func AlertTask(taskType, source string, body []byte) *asynq.Task {
	return asynq.NewTask(taskType, body,
		asynq.TaskID(alertTaskID(source, body)), asynq.Queue(QueueGitHub), asynq.MaxRetry(MaxRetry),
		asynq.Retention(AlertRetention), asynq.Timeout(5*time.Minute))
}

func deliveryTaskID(id string) string { return "gh:" + id }

func alertTaskID(source string, body []byte) string {
	sum := sha256.Sum256(body)
	return source + ":" + hex.EncodeToString(sum[:16])
}

// DeliveryKey, AlertKey and RefreshKey name the Redis key that holds each
// task once stored (asynq's "asynq:{queue}:t:id"), for a durable.Waiter to
// check that the write is on the primary that replicated it.
func DeliveryKey(id string) string { return storedKey(QueueGitHub, deliveryTaskID(id)) }

// AlertKey: see DeliveryKey.
func AlertKey(source string, body []byte) string {
	return storedKey(QueueGitHub, alertTaskID(source, body))
}

// RefreshKey: see DeliveryKey.
func RefreshKey(taskID string) string { return storedKey(QueueOutcome, taskID) }

func storedKey(queue, taskID string) string { return "asynq:{" + queue + "}:t:" + taskID }

// Refresh is the payload of a TaskSessionRefresh: read a session.
// Reconcile marks the reconciler's read of a run whose callback may be
// lost: a session still running past the maximum age is given up.
// Run, when set, is the session's run as the callback read it (a
// runs.Snapshot), so the task starts from it instead of reading it again.
type Refresh struct {
	SessionID string          `json:"session_id"`
	Reconcile bool            `json:"reconcile,omitempty"`
	Run       json.RawMessage `json:"run,omitempty"`
}

func RefreshTask(r Refresh, taskID string, opts ...asynq.Option) *asynq.Task {
	payload, _ := json.Marshal(r)
	return asynq.NewTask(TaskSessionRefresh, payload, append([]asynq.Option{
		asynq.TaskID(taskID), asynq.Queue(QueueOutcome), asynq.MaxRetry(MaxRetry),
		asynq.Retention(24 * time.Hour), asynq.Timeout(5 * time.Minute)}, opts...)...)
}

// ReconcileTask asks a worker to read a session again and report its
// outcome (the reconciler; pitcrew runs retry). taskID keeps a repeat from
// being queued twice.
func ReconcileTask(sessionID, taskID string) *asynq.Task {
	return RefreshTask(Refresh{SessionID: sessionID, Reconcile: true}, taskID)
}

// IsDuplicate reports whether an enqueue failed only because the same
// task is already stored.
func IsDuplicate(err error) bool { return errors.Is(err, asynq.ErrTaskIDConflict) }

func ProcessedKey(id string) string { return fmt.Sprintf("pitcrew:delivery:%s", id) }

// BodyKey remembers which delivery id a body was first accepted under.
func BodyKey(event string, digest []byte) string {
	return fmt.Sprintf("pitcrew:delivery-body:%s:%x", event, digest)
}

func Depth(in *asynq.Inspector) float64 {
	var n int
	for _, q := range []string{QueueGitHub, QueueOutcome} {
		if info, err := in.GetQueueInfo(q); err == nil {
			n += info.Pending + info.Scheduled + info.Retry
		}
	}
	return float64(n)
}

// RetryDelay backs off exponentially from 2 s to 10 min, with jitter from
// asynq's default for the long tail. A task GitHub turned away for a rate
// limit (github.RateLimited) is rescheduled for when GitHub asked, however
// long (at most an hour), plus up to 3 s of jitter so the tasks one limit
// turned away do not all come back at once: never earlier, and never
// before the backoff, which keeps growing while the limit persists.
func RetryDelay(n int, err error, t *asynq.Task) time.Duration {
	backoff := (2 * time.Second) << min(n, 8)
	if n >= 8 {
		backoff = asynq.DefaultRetryDelayFunc(n, err, t)
	}
	if wait, limited := github.RateLimited(err); limited {
		return max(min(wait, time.Hour)+rand.N(3*time.Second), backoff)
	}
	return backoff
}

// LastAttempt reports whether the task running in ctx will not be retried
// if it fails now (true outside a task).
func LastAttempt(ctx context.Context) bool {
	n, ok1 := asynq.GetRetryCount(ctx)
	max, ok2 := asynq.GetMaxRetry(ctx)
	return !ok1 || !ok2 || n >= max
}

// Retried reports whether the task running in ctx is a retry of one that
// failed (false outside a task, and for a task handed back by a shutdown).
func Retried(ctx context.Context) bool {
	n, ok := asynq.GetRetryCount(ctx)
	return ok && n > 0
}

// Permanent marks an error that retrying will not fix, so the queue drops
// the task instead of retrying it.
func Permanent(err error) error { return fmt.Errorf("%w (%w)", err, asynq.SkipRetry) }

// TaskID is the id of the task running in ctx, "" outside a task.
func TaskID(ctx context.Context) string {
	id, _ := asynq.GetTaskID(ctx)
	return id
}

// DecodeRefresh reads a TaskSessionRefresh's payload.
func DecodeRefresh(p []byte) (Refresh, error) {
	var r Refresh
	err := json.Unmarshal(p, &r)
	return r, err
}
