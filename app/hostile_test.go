package app

import (
	"bytes"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

// TestHostileInputChangesNothing sends every route what an attacker or a
// broken client would, and checks that nothing is stored and the server
// keeps answering.
func TestHostileInputChangesNothing(t *testing.T) {
	h := newHarness(t, true, func(o *Options) { o.SourceEnv = map[string]string{"DATADOG_WEBHOOK_TOKEN": datadogToken} })
	good := testenv.LabeledEvent(t, "flaky", "alice", 1, flakyTest, "")
	post := func(path, contentType string, headers map[string]string, body []byte) int {
		all := map[string]string{"Content-Type": contentType}
		for k, v := range headers {
			all[k] = v
		}
		return h.postTo(path, all, bytes.NewReader(body))
	}
	gh := func(sig string, body []byte) map[string]string {
		return map[string]string{"X-GitHub-Event": "issues", "X-GitHub-Delivery": testenv.DeliveryID(), "X-Hub-Signature-256": sig}
	}
	cases := []struct {
		name, path, contentType string
		headers                 map[string]string
		body                    []byte
	}{
		{"forged GitHub signature", "/api/github/hook", "application/json", gh(sign("guess", good), good), good},
		{"GitHub signature of another body", "/api/github/hook", "application/json", gh(sign(testWebhookSecret, []byte("{}")), good), good},
		{"truncated GitHub body", "/api/github/hook", "application/json", gh(sign(testWebhookSecret, good[:len(good)/2]), good[:len(good)/2]), good[:len(good)/2]},
		{"wrong content type", "/api/github/hook", "text/plain", gh(sign(testWebhookSecret, good), good), good},
		{"no event header", "/api/github/hook", "application/json", map[string]string{"X-Hub-Signature-256": sign(testWebhookSecret, good)}, good},
		{"forged callback", "/api/rush/hook", "application/json", map[string]string{"webhook-id": "m1", "webhook-timestamp": "1", "webhook-signature": "v1,AAAA"}, []byte(`{"event":"run.completed","session_id":"ses_1"}`)},
		{"callback without headers", "/api/rush/hook", "application/json", nil, []byte(`{"event":"run.completed","session_id":"ses_1"}`)},
		{"Datadog without token", "/api/datadog/hook", "application/json", nil, testenv.DatadogAlert("1", "c", "Triggered", testenv.DatadogTags, "x")},
		{"Datadog oversized", "/api/datadog/hook", "application/json", map[string]string{"X-Pitcrew-Token": datadogToken}, bytes.Repeat([]byte("x"), 2<<20)},
	}
	for _, c := range cases {
		if code := post(c.path, c.contentType, c.headers, c.body); code < 400 {
			t.Errorf("%s: answered %d", c.name, code)
		}
	}

	// A slow client: headers trickled in, then abandoned.
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.server.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	conn.Write([]byte("POST /api/github/hook HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{\"action\":"))
	time.Sleep(100 * time.Millisecond)
	conn.Close()

	if h.storedTasks() != 0 {
		t.Fatalf("%d tasks stored from hostile input", h.storedTasks())
	}
	if keys := h.redis.Keys(t.Context(), "pitcrew:*").Val(); len(keys) != 0 {
		t.Fatalf("state written: %v", keys)
	}
	if h.get("/healthz") != "ok\n" {
		t.Fatal("server not answering after hostile input")
	}
}
