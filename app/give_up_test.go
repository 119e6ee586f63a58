package app

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/queue"
)

// A task the queue gives up on, its retries spent or its error permanent,
// is logged once, with its type, id, retries and the cause, and not its
// payload; a failure that will be retried is not.
func TestATaskGivenUpIsLoggedWithItsCause(t *testing.T) {
	h := newHarness(t, true)
	tasks, inspector := asynq.NewClientFromRedisClient(h.redis), asynq.NewInspectorFromRedisClient(h.redis)
	t.Cleanup(func() { tasks.Close() })
	// A type no handler takes (a newer replica's, say): it fails every time.
	secret := []byte("token=give-up-test-secret")
	for _, c := range []struct {
		id  string
		max int
	}{{"give-up-at-once", 0}, {"give-up-after-one-retry", 1}} {
		if _, err := tasks.Enqueue(asynq.NewTask("test:nobody-handles", secret), asynq.TaskID(c.id), asynq.MaxRetry(c.max), asynq.Queue(queue.QueueGitHub)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { inspector.DeleteTask(queue.QueueGitHub, c.id) })
	}
	// A GitHub 404 fails a delivery for good at once.
	h.gh.FailNext(404, nil, 20)
	delivery := testenv.DeliveryID()
	h.deliver("issues", delivery, testenv.LabeledEvent(t, "flaky", "alice", 82, flakyTest, ""))

	archived := func(id string) bool {
		info, err := inspector.GetTaskInfo(queue.QueueGitHub, id)
		return err == nil && info.State == asynq.TaskStateArchived
	}
	h.eventually("the tasks to be given up", func() bool {
		return archived("give-up-at-once") && archived("give-up-after-one-retry") && archived("gh:"+delivery)
	})

	given := map[string][]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(h.logs.String()), "\n") {
		var entry map[string]any
		if json.Unmarshal([]byte(line), &entry) == nil && entry["message"] == "task given up" {
			id, _ := entry["task_id"].(string)
			given[id] = append(given[id], entry)
			if strings.Contains(line, string(secret)) {
				t.Errorf("the payload is logged: %s", line)
			}
			for k := range entry {
				switch k {
				case "level", "component", "task_type", "task_id", "queue", "retried", "max_retry", "error", "message":
				default:
					t.Errorf("field %q logged: %s", k, line)
				}
			}
		}
	}
	for _, c := range []struct {
		id, taskType, cause string
		retried             float64
	}{
		{"give-up-at-once", "test:nobody-handles", "handler not found", 0},
		{"give-up-after-one-retry", "test:nobody-handles", "handler not found", 1},
		{"gh:" + delivery, queue.TaskGitHubDelivery, "404", 0},
	} {
		lines := given[c.id]
		if len(lines) != 1 {
			t.Fatalf("%s: %d lines say it was given up, want 1\nlogs:\n%s", c.id, len(lines), h.logs.String())
		}
		e := lines[0]
		if e["level"] != "error" || e["task_type"] != c.taskType || e["queue"] != queue.QueueGitHub || e["retried"] != c.retried ||
			!strings.Contains(e["error"].(string), c.cause) {
			t.Errorf("%s: %v, want type %s, %v retries, a cause with %q", c.id, e, c.taskType, c.retried, c.cause)
		}
	}
}
