package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
)

// Task types on the durable queue.
const (
	TaskGitHubDelivery = "github:delivery" // a verified GitHub webhook delivery
	TaskSessionRefresh = "sandbox:refresh" // read a session and report its outcome
)

// Queue names; a busy GitHub intake does not delay outcome reports.
const (
	QueueGitHub  = "github"
	QueueOutcome = "outcome"
)

const (
	// deliveryRetention keeps a finished delivery task in Redis, so a
	// redelivery within that time is refused at intake by its task id.
	deliveryRetention = time.Hour
	// processedTTL is how long the worker remembers a delivery it finished;
	// GitHub can redeliver a delivery for 3 days.
	processedTTL = 72 * time.Hour
	maxRetry     = 12
)

// decodeDelivery splits a delivery task's payload, framed by readDelivery
// as "event\ndelivery-id\n" + body: no JSON re-encoding, no copy.
func decodeDelivery(p []byte) (event, id string, body []byte, err error) {
	e, rest, ok1 := bytes.Cut(p, []byte{'\n'})
	d, body, ok2 := bytes.Cut(rest, []byte{'\n'})
	if !ok1 || !ok2 || len(e) == 0 || len(d) == 0 {
		return "", "", nil, errors.New("malformed delivery task")
	}
	return string(e), string(d), body, nil
}

// deliveryTask is the queue's task for a framed delivery (decodeDelivery).
func deliveryTask(id string, framed []byte) *asynq.Task {
	return asynq.NewTask(TaskGitHubDelivery, framed,
		asynq.TaskID("gh:"+id), asynq.Queue(QueueGitHub), asynq.MaxRetry(maxRetry),
		asynq.Retention(deliveryRetention), asynq.Timeout(5*time.Minute))
}

// refresh is the payload of a TaskSessionRefresh: read a session.
// Reconcile marks the reconciler's read of a run whose callback may be
// lost: a session still running past the maximum age is given up.
type refresh struct {
	SessionID string `json:"session_id"`
	Reconcile bool   `json:"reconcile,omitempty"`
}

func refreshTask(r refresh, taskID string, opts ...asynq.Option) *asynq.Task {
	payload, _ := json.Marshal(r)
	return asynq.NewTask(TaskSessionRefresh, payload, append([]asynq.Option{
		asynq.TaskID(taskID), asynq.Queue(QueueOutcome), asynq.MaxRetry(maxRetry),
		asynq.Retention(24 * time.Hour), asynq.Timeout(5 * time.Minute)}, opts...)...)
}

// ReconcileTask asks a worker to read a session again and report its
// outcome (the reconciler; pitcrew runs retry). taskID keeps a repeat from
// being queued twice.
func ReconcileTask(sessionID, taskID string) *asynq.Task {
	return refreshTask(refresh{SessionID: sessionID, Reconcile: true}, taskID)
}

// isDuplicate reports whether an enqueue failed only because the same
// task is already stored.
func isDuplicate(err error) bool { return errors.Is(err, asynq.ErrTaskIDConflict) }

func processedKey(id string) string { return fmt.Sprintf("pitcrew:delivery:%s", id) }

// bodyKey remembers which delivery id a body was first accepted under.
func bodyKey(event string, digest []byte) string {
	return fmt.Sprintf("pitcrew:delivery-body:%s:%x", event, digest)
}
