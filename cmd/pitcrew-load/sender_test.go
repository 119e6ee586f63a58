package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
)

var uuidShape = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// recorder is a webhook receiver that checks each delivery the way
// pitcrew does (go-github's signature check) and keeps the delivery ids.
type recorder struct {
	t       *testing.T
	payload []byte
	mu      sync.Mutex
	ids     map[string]bool
	conns   int
	closeAt int  // answer "Connection: close" to every closeAt-th delivery
	refusal bool // bad deliveries are expected: refuse them quietly
	server  *httptest.Server
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := github.ValidatePayload(r, []byte("s3cret"))
	if err != nil || string(body) != string(rec.payload) || github.WebHookType(r) != "issues" {
		if !rec.refusal {
			rec.t.Errorf("bad delivery: %v", err)
		}
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	rec.mu.Lock()
	id := github.DeliveryID(r)
	if !uuidShape.MatchString(id) || rec.ids[id] {
		rec.t.Errorf("delivery id %q is not a fresh UUID-shaped id", id)
	}
	rec.ids[id] = true
	if rec.closeAt > 0 && len(rec.ids)%rec.closeAt == 0 {
		w.Header().Set("Connection", "close")
	}
	rec.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
}

func startRecorder(t *testing.T, closeAt int) (*recorder, string) {
	payload, err := os.ReadFile("../../testdata/webhooks/issues.labeled.json")
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{t: t, payload: compact(payload), ids: map[string]bool{}, closeAt: closeAt}
	srv := httptest.NewUnstartedServer(rec)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			rec.mu.Lock()
			rec.conns++
			rec.mu.Unlock()
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	rec.server = srv
	return rec, srv.URL + "/api/github/hook"
}

func TestConcurrentSendersDeliverSignedUniqueDeliveriesOnKeptAliveConnections(t *testing.T) {
	rec, url := startRecorder(t, 0)
	tmpl, err := newTemplate(url, "s3cret", "issues", rec.payload)
	if err != nil {
		t.Fatal(err)
	}
	res := run(tmpl, 0, 4, 300*time.Millisecond)
	if res.Sent == 0 || res.Errors != 0 || int(res.Sent) != len(rec.ids) {
		t.Fatalf("sent %d with %d errors; the server saw %d deliveries", res.Sent, res.Errors, len(rec.ids))
	}
	if rec.conns != 4 {
		t.Errorf("4 senders opened %d connections, want one each", rec.conns)
	}
}

func TestOpenLoopRedialsWhenTheServerClosesConnections(t *testing.T) {
	rec, url := startRecorder(t, 7)
	tmpl, err := newTemplate(url, "s3cret", "issues", rec.payload)
	if err != nil {
		t.Fatal(err)
	}
	res := run(tmpl, 200, 0, 500*time.Millisecond)
	if res.Sent < 90 || res.Errors != 0 || int(res.Sent) != len(rec.ids) {
		t.Fatalf("sent %d with %d errors; the server saw %d deliveries", res.Sent, res.Errors, len(rec.ids))
	}
	if rec.conns < int(res.Sent)/7 {
		t.Errorf("%d connections for %d deliveries, every 7th closed", rec.conns, res.Sent)
	}
}

func TestAConnectionClosedWhileIdleIsNotAnError(t *testing.T) {
	rec, url := startRecorder(t, 0)
	tmpl, err := newTemplate(url, "s3cret", "issues", rec.payload)
	if err != nil {
		t.Fatal(err)
	}
	s := tmpl.newSender()
	defer s.close()
	for i := range 3 {
		if status, err := s.send(); err != nil || status != http.StatusAccepted {
			t.Fatalf("send %d: %d, %v", i, status, err)
		}
		rec.server.CloseClientConnections() // as a server's idle timeout does
	}
	if len(rec.ids) != 3 || rec.conns != 3 {
		t.Fatalf("%d deliveries on %d connections, want 3 on 3", len(rec.ids), rec.conns)
	}
}

func TestErrorsAreCounted(t *testing.T) {
	rec, url := startRecorder(t, 0)
	tmpl, err := newTemplate(url, "wrong-secret", "issues", rec.payload)
	if err != nil {
		t.Fatal(err)
	}
	rec.refusal = true
	res := run(tmpl, 0, 2, 100*time.Millisecond)
	if res.Sent == 0 || res.Errors != res.Sent || res.Throughput != 0 {
		t.Fatalf("a server refusing every delivery: sent %d, errors %d, throughput %v", res.Sent, res.Errors, res.Throughput)
	}
	if _, err := newTemplate("https://example.com/hook", "s", "issues", nil); err == nil {
		t.Error("an https URL was accepted; the generator speaks plain HTTP only")
	}
}
