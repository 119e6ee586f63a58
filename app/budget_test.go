package app

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/hook"
	"github.com/pitcrew/pitcrew/internal/testenv"
)

// stalledPost opens a connection that sends the headers of an unsigned
// post of size bytes and then stalls, as a slow or hostile sender does.
func stalledPost(t *testing.T, url, path string, size int) net.Conn {
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\nX-GitHub-Event: issues\r\nX-GitHub-Delivery: %s\r\nX-Hub-Signature-256: sha256=%s\r\n\r\n{",
		path, size, testenv.DeliveryID(), strings.Repeat("0", 64))
	return conn
}

func TestLargeUnverifiedBodiesAreBoundedAndSmallDeliveriesStillPass(t *testing.T) {
	h := newHarness(t, false)
	const size = hook.MaxGitHubBody - 100<<10 // 4.9 MiB
	// The budget's half for large bodies holds six of them.
	for i := 0; i < 6; i++ {
		stalledPost(t, h.server.URL, "/api/github/hook", size)
	}
	h.eventually("the six bodies holding the budget", func() bool { return h.app.unverified.Used() >= 6*size })
	extra := stalledPost(t, h.server.URL, "/api/github/hook", size)
	extra.SetReadDeadline(time.Now().Add(5 * time.Second))
	head, _ := io.ReadAll(io.LimitReader(extra, 512))
	if !strings.HasPrefix(string(head), "HTTP/1.1 503") || !strings.Contains(string(head), "Retry-After: 1") {
		t.Fatalf("a seventh large unverified body was answered:\n%s", head)
	}
	if code := h.deliver("issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky", "alice", 8, flakyTest, "")); code != http.StatusAccepted {
		t.Fatalf("an honest delivery during the flood answered %d", code)
	}
	if code := h.sandbox.Callback(t, h.server.URL+"/api/rush/hook", testRushSecret, "run.completed", "ses_unknown"); code != http.StatusOK {
		t.Fatalf("a small sandbox callback during the flood answered %d", code)
	}
	if !strings.Contains(h.get("/metrics"), `pitcrew_deliveries_total{event="unverified",outcome="busy"} 1`) {
		t.Error("the refusal is not counted")
	}
}
