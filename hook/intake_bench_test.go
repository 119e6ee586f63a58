package hook_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pitcrew/pitcrew/handlers"
	"github.com/pitcrew/pitcrew/hook"
	"github.com/pitcrew/pitcrew/internal/metrics"
	"github.com/pitcrew/pitcrew/internal/testenv"
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
	secret := []byte("bench-secret")
	in := &hook.Intake{Secret: secret, Queue: asynq.NewClientFromRedisClient(rdb), Inspector: asynq.NewInspectorFromRedisClient(rdb),
		Events: []string{"issues", "issue_comment", "workflow_run"}, Metrics: metrics.New(prometheus.NewRegistry()),
		Unverified: &hook.Budget{}, Ignored: handlers.Ignored}
	mac := hmac.New(sha256.New, secret)
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
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		if n%2000 == 0 { // keep what Redis holds small
			b.StopTimer()
			rdb.FlushDB(b.Context())
			b.StartTimer()
		}
		id[0] = "bench-" + strconv.Itoa(n)
		reader.Reset(body)
		w.status = 0
		in.ServeHTTP(w, r)
		if w.status != status {
			b.Fatalf("answered %d, want %d", w.status, status)
		}
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
