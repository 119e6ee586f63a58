package app

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

// BenchmarkGitHubIntake measures the time from a signed delivery leaving
// the sender to its 2xx arriving: signature check, JSON check and the
// durable enqueue in Redis (set REDIS_URL for a real one), over loopback
// HTTP. The ceiling sub-benchmark is a handler that only reads the body and
// answers 200, on the same loopback, as the baseline to compare with.
//
//	REDIS_URL=redis://127.0.0.1:6379 go test ./handlers -run '^$' -bench GitHubIntake -benchtime 1000x
func BenchmarkGitHubIntake(b *testing.B) {
	payload := testenv.LabeledEvent(b, "flaky", "alice", 1, flakyTest, issueBody)
	signature := sign(testWebhookSecret, payload)

	b.Run("pitcrew", func(b *testing.B) {
		h := newHarness(b, false)
		benchDeliveries(b, h.server.URL+"/api/github/hook", payload, signature, http.StatusAccepted)
	})
	b.Run("ceiling", func(b *testing.B) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusOK)
		}))
		defer srv.Close()
		benchDeliveries(b, srv.URL, payload, signature, http.StatusOK)
	})
}

func benchDeliveries(b *testing.B, url string, payload []byte, signature string, want int) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	latencies := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(payload))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", "issues")
		req.Header.Set("X-GitHub-Delivery", testenv.DeliveryID())
		req.Header.Set("X-Hub-Signature-256", signature)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		latencies = append(latencies, time.Since(start))
		if resp.StatusCode != want {
			b.Fatalf("answered %d", resp.StatusCode)
		}
	}
	b.StopTimer()
	slices.Sort(latencies)
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds()), "p99-µs")
}
