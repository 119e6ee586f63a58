package queue

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	gogithub "github.com/google/go-github/v66/github"
	"github.com/hibiken/asynq"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

func TestRetryDelayBacksOffFromTwoSeconds(t *testing.T) {
	prev := time.Duration(0)
	for n := 0; n < 8; n++ {
		d := RetryDelay(n, nil, nil)
		if d <= prev || d > 10*time.Minute {
			t.Fatalf("retry %d waits %s after %s", n, d, prev)
		}
		prev = d
	}
	if RetryDelay(0, nil, nil) != 2*time.Second {
		t.Fatal("the first retry waits 2 s")
	}
}

// A task GitHub turned away for a rate limit comes back when GitHub asked,
// however long (at most an hour), a few seconds later at most, and not
// before the backoff; other errors back off as usual.
func TestRetryDelayWaitsAsLongAsARateLimitAsks(t *testing.T) {
	answer := func(status int, message string, headers ...string) error {
		h := http.Header{}
		for i := 0; i+1 < len(headers); i += 2 {
			h.Set(headers[i], headers[i+1])
		}
		return fmt.Errorf("step: %w", &gogithub.ErrorResponse{Response: &http.Response{StatusCode: status, Header: h}, Message: message})
	}
	reset := strconv.FormatInt(time.Now().Add(2*time.Minute).Unix(), 10)
	for _, c := range []struct {
		name     string
		n        int
		err      error
		from, to time.Duration
	}{
		{"retry-after 90", 0, answer(403, "", "Retry-After", "90"), 90 * time.Second, 93 * time.Second},
		{"reset in 2 minutes", 1, answer(403, "", "X-Ratelimit-Remaining", "0", "X-Ratelimit-Reset", reset), 118 * time.Second, 123 * time.Second},
		{"secondary without a header", 2, answer(403, "You have exceeded a secondary rate limit."), time.Minute, time.Minute + 3*time.Second},
		{"429 without a header", 0, answer(429, ""), time.Minute, time.Minute + 3*time.Second},
		{"retry-after 2 hours", 0, answer(429, "", "Retry-After", "7200"), time.Hour, time.Hour + 3*time.Second},
		{"a limit that persists", 7, answer(403, "You have exceeded a secondary rate limit."), 256 * time.Second, 256 * time.Second},
		{"not a rate limit", 3, answer(403, "Resource not accessible by integration"), 16 * time.Second, 16 * time.Second},
		{"any other error", 3, errors.New("boom"), 16 * time.Second, 16 * time.Second},
	} {
		if d := RetryDelay(c.n, c.err, nil); d < c.from || d > c.to {
			t.Errorf("%s: retry %d waits %s, want %s to %s", c.name, c.n, d, c.from, c.to)
		}
	}
}

// A dashboard's refresh is one task per repository and window, due once
// the window has ended, at a whole second (asynq's granularity).
func TestADashboardRefreshIsOnePerWindowDueAfterIt(t *testing.T) {
	rdb := testenv.Redis(t)
	q, in := asynq.NewClientFromRedisClient(rdb), asynq.NewInspectorFromRedisClient(rdb)
	every := 300 * time.Millisecond
	n := time.Now().Add(time.Hour).UnixNano() / int64(every)
	now := time.Unix(0, n*int64(every)).Add(10 * time.Millisecond) // early in window n
	enqueue := func(repo string, at time.Time) (*asynq.TaskInfo, error) {
		return q.EnqueueContext(context.Background(), DashboardTask(Dashboard{Repo: repo, InstallationID: 1}, every, at))
	}
	first, err := enqueue("Hexpm/Hexpm", now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := enqueue("hexpm/hexpm", now.Add(150*time.Millisecond)); !IsDuplicate(err) {
		t.Fatalf("a second request of the window: %v", err)
	}
	next, err := enqueue("hexpm/hexpm", now.Add(every))
	if err != nil || next.ID == first.ID {
		t.Fatalf("the next window: %v %v", next, err)
	}
	end, due := time.Unix(0, (n+1)*int64(every)), first.NextProcessAt
	if due.Before(end) || !due.Before(end.Add(time.Second)) || due.Nanosecond() != 0 {
		t.Fatalf("due at %v: want the first whole second at or after the window's end %v", due, end)
	}
	for _, id := range []string{first.ID, next.ID} {
		if err := in.DeleteTask(QueueOutcome, id); err != nil {
			t.Fatal(err)
		}
	}
}

// The keys a durable.Waiter checks are the ones asynq writes: a change of
// asynq's layout fails here, not as a refused webhook in production.
func TestStoredKeysAreWhereAsynqKeepsTheTask(t *testing.T) {
	rdb := testenv.Redis(t)
	ctx := context.Background()
	q, in := asynq.NewClientFromRedisClient(rdb), asynq.NewInspectorFromRedisClient(rdb)
	body := []byte(`{"alert":1}`)
	for _, c := range []struct {
		task *asynq.Task
		key  string
	}{
		{DeliveryTask("stored-key-test", []byte("issues\nstored-key-test\n{}")), DeliveryKey("stored-key-test")},
		{AlertTask("datadog:alert", "datadog", body), AlertKey("datadog", body)},
		{RefreshTask(Refresh{SessionID: "s"}, "cb:stored-key-test"), RefreshKey("cb:stored-key-test")},
	} {
		info, err := q.EnqueueContext(ctx, c.task, asynq.ProcessIn(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		n, err := rdb.Exists(ctx, c.key).Result()
		in.DeleteTask(info.Queue, info.ID)
		if err != nil || n != 1 {
			t.Fatalf("%s: key %s not found (%d, %v)", info.ID, c.key, n, err)
		}
	}
}
