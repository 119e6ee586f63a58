package hook_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/pitcrew/pitcrew/handlers"
	"github.com/pitcrew/pitcrew/hook"
	"github.com/pitcrew/pitcrew/internal/metrics"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/queue"
)

// BenchmarkIntake is each event's path through Intake.ServeHTTP as the
// server wires it: a signed delivery, go-github's signature check, the
// decision of handlers.Ignored (this external test package may import
// handlers, which imports hook), the JSON check, and for a delivery kept
// the enqueue in Redis (REDIS_URL, else an in-process miniredis, whose
// scripts are far slower). Only the HTTP transport is left out, so a
// change in the intake's own work shows in ns/op and allocs/op.
//
//	REDIS_URL=redis://127.0.0.1:6379 go test ./hook -run '^$' -bench Intake -benchmem
func BenchmarkIntake(b *testing.B) {
	comment := testenv.CommentEvent(b, "alice", 12, 901, "/pitcrew retry", false)
	labeled := testenv.LabeledEvent(b, "flaky", "alice", 6, "test/a_test.exs:1", "")
	for _, c := range []struct {
		name, event string
		body        []byte
		status      int
	}{
		{"issues-labeled", "issues", labeled, http.StatusAccepted},
		{"issues-unlabeled", "issues", bytes.Replace(labeled, []byte(`"action":"labeled"`), []byte(`"action":"unlabeled"`), 1), http.StatusOK},
		// pitcrew's own status comment, edited: the most frequent of all.
		{"issue_comment-ignored", "issue_comment", bytes.Replace(testenv.CommentEvent(b, "pitcrew[bot]", 12, 902, "pitcrew is working on it", false),
			[]byte(`"action":"created"`), []byte(`"action":"edited"`), 1), http.StatusOK},
		{"issue_comment-command", "issue_comment", comment, http.StatusAccepted},
		{"workflow_run", "workflow_run", testenv.WorkflowRunEvent(b, 30433642, 2, 0, testenv.HeadSHA), http.StatusAccepted},
	} {
		if !strings.Contains(string(c.body), `"action":`) {
			b.Fatalf("%s: no action in the sample", c.name)
		}
		b.Run(c.name, func(b *testing.B) { benchIntake(b, c.event, c.body, c.status) })
	}
}

func benchIntake(b *testing.B, event string, body []byte, status int) {
	rdb := testenv.Redis(b)
	send := newSender(b, newIntake(rdb, rdb), event, body)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		if n%2000 == 0 { // keep what Redis holds small
			b.StopTimer()
			rdb.FlushDB(b.Context())
			b.StartTimer()
		}
		if got := send("bench-" + strconv.Itoa(n)); got != status {
			b.Fatalf("answered %d, want %d", got, status)
		}
	}
}

// BenchmarkIntakeConcurrent stores issues.labeled deliveries from 64
// goroutines, side by side through an asynq client on the Redis client as
// it is (a round trip each) and on queue.Batched, as the server wires it:
// what concurrent deliveries gain from sharing round trips shows in ns/op.
//
//	REDIS_URL=redis://127.0.0.1:6379 go test ./hook -run '^$' -bench IntakeConcurrent -benchtime 20000x
func BenchmarkIntakeConcurrent(b *testing.B) {
	labeled := testenv.LabeledEvent(b, "flaky", "alice", 6, "test/a_test.exs:1", "")
	for _, c := range []struct {
		name string
		wrap func(redis.UniversalClient) redis.UniversalClient
	}{
		{"round-trip-each", func(c redis.UniversalClient) redis.UniversalClient { return c }},
		{"batched", queue.Batched},
	} {
		b.Run(c.name, func(b *testing.B) {
			rdb := testenv.Redis(b)
			in := newIntake(rdb, c.wrap(rdb))
			var n atomic.Int64
			b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				send := newSender(b, in, "issues", labeled)
				for pb.Next() {
					if got := send("bench-" + strconv.FormatInt(n.Add(1), 10)); got != http.StatusAccepted {
						b.Errorf("answered %d", got)
						return
					}
				}
			})
		})
	}
}

// newIntake is the server's intake on rdb, storing through store.
func newIntake(rdb *redis.Client, store redis.UniversalClient) *hook.Intake {
	return &hook.Intake{Secret: benchSecret, Queue: asynq.NewClientFromRedisClient(store), Inspector: asynq.NewInspectorFromRedisClient(rdb),
		Events: []string{"issues", "issue_comment", "workflow_run"}, Metrics: metrics.New(prometheus.NewRegistry()),
		Unverified: &hook.Budget{}, Ignored: handlers.Ignored}
}

var benchSecret = []byte("bench-secret")

// newSender returns a function that hands in a signed delivery of body
// under a given delivery id and returns the status it answered. One
// sender is for one goroutine: it reuses its request.
func newSender(b *testing.B, in *hook.Intake, event string, body []byte) func(id string) int {
	mac := hmac.New(sha256.New, benchSecret)
	mac.Write(body)
	reader := &bodyReader{}
	r, err := http.NewRequest(http.MethodPost, "/api/github/hook", reader)
	if err != nil {
		b.Fatal(err)
	}
	id := []string{""}
	r.ContentLength = int64(len(body))
	r.Header = http.Header{"Content-Type": {"application/json"}, "X-Github-Event": {event}, "X-Github-Delivery": id,
		"X-Hub-Signature-256": {"sha256=" + hex.EncodeToString(mac.Sum(nil))}}
	w := &discard{header: http.Header{}}
	return func(delivery string) int {
		id[0] = delivery
		reader.Reset(body)
		w.status = 0
		in.ServeHTTP(w, r)
		return w.status
	}
}

type bodyReader struct{ bytes.Reader }

func (*bodyReader) Close() error { return nil }

type discard struct {
	header http.Header
	status int
}

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(status int)      { d.status = status }
