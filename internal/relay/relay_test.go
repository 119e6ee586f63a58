package relay

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

const secret = "webhook-secret"

func sign(body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// event is a channel event as smee.io writes one: the headers GitHub sent,
// lower-cased, beside the body it parsed and wrote again.
func event(id, body, signature string) string {
	return fmt.Sprintf(`{"host":"smee.io","x-github-event":"issues","x-github-delivery":%q,"x-hub-signature-256":%q,"content-type":"application/json","body":%s,"query":{},"timestamp":1764800000000}`, id, signature, body)
}

// intake checks the signature on the exact bytes, as pitcrew's does.
type intake struct {
	mu       sync.Mutex
	accepted []string
	refused  int
}

func (in *intake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	in.mu.Lock()
	defer in.mu.Unlock()
	if r.URL.Path != "/api/github/hook" || !hmac.Equal([]byte(r.Header.Get("X-Hub-Signature-256")), []byte(sign(string(body)))) {
		in.refused++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	in.accepted = append(in.accepted, r.Header.Get("X-GitHub-Event")+" "+r.Header.Get("X-GitHub-Delivery"))
	w.WriteHeader(http.StatusAccepted)
}

func (in *intake) seen() ([]string, int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]string(nil), in.accepted...), in.refused
}

// The channel's deliveries reach the intake with their bytes and headers,
// across an error page, a silent connection and a drop of the stream; one
// whose body was written otherwise than signed is refused there;
// keep-alive events are not deliveries.
func TestTheChannelsDeliveriesReachTheIntake(t *testing.T) {
	body := `{"action":"labeled","issue":{"number":7,"title":"Flaky é \u003cb\u003e"},"zeta":1,"alpha":2}`
	var connects int
	var mu sync.Mutex
	channel := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		connects++
		n := connects
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if n == 1 {
			http.Error(w, "smee is restarting", http.StatusBadGateway) // an error page: retried, not the end
			return
		}
		if n == 2 {
			w.Header().Set("Content-Type", "text/event-stream")
			w.(http.Flusher).Flush()
			<-r.Context().Done() // silent: taken for dead after Idle
			return
		}
		if n == 3 {
			fmt.Fprintf(w, "event: ready\ndata: {}\n\n")
			fmt.Fprintf(w, "id: 1\ndata: %s\n\n", event("d-1", body, sign(body)))
			fmt.Fprintf(w, "event: ping\ndata: {}\n\n")
			fmt.Fprintf(w, "id: 2\ndata: %s\n\n", event("d-2", body, sign(`{"action":"labeled"}`)))
			return // the stream drops
		}
		fmt.Fprintf(w, "id: 3\ndata: %s\n\n", event("d-3", body, sign(body)))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer channel.Close()
	in := &intake{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- (&Relay{URL: channel.URL, Intake: in, Path: "/api/github/hook", Log: zerolog.Nop(), Idle: time.Second}).Run(ctx)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		accepted, refused := in.seen()
		if len(accepted) == 2 && refused == 1 {
			if accepted[0] != "issues d-1" || accepted[1] != "issues d-3" {
				t.Fatalf("accepted %q", accepted)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("accepted %q, refused %d", accepted, refused)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run returned %v", err)
	}
}

func TestRequestReadsOnlyDeliveries(t *testing.T) {
	for name, data := range map[string]string{
		"no body":         `{"x-github-event":"issues"}`,
		"a body not JSON": `{"x-github-event":"issues","body":"text"}`,
		"no event":        `{"body":{"a":1}}`,
		"not JSON":        `ready`,
	} {
		if _, err := Request(context.Background(), "/api/github/hook", []byte(data)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	req, err := Request(context.Background(), "/api/github/hook", []byte(event("d-1", `{"b":1,"a":2}`, "sha256=x")))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(req.Body)
	if string(got) != `{"b":1,"a":2}` || req.Header.Get("X-GitHub-Delivery") != "d-1" || req.Header.Get("X-Hub-Signature-256") != "sha256=x" {
		t.Fatalf("body %s, headers %v", got, req.Header)
	}
}

func FuzzRequest(f *testing.F) {
	f.Add([]byte(event("d-1", `{"action":"labeled"}`, "sha256=x")))
	f.Add([]byte(`{"X-GitHub-Event":"push","body":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := Request(context.Background(), "/api/github/hook", data)
		if err != nil {
			return
		}
		body, _ := io.ReadAll(req.Body)
		if len(body) == 0 || body[0] != '{' || req.Header.Get("X-GitHub-Event") == "" || !strings.Contains(string(data), string(body)) {
			t.Fatalf("request of %q: body %q, headers %v", data, body, req.Header)
		}
	})
}
