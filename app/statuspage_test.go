package app

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// getAs reads path from the harness with the given Host header.
func (h *harness) getAs(host, path string, header ...string) (int, string) {
	h.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, h.server.URL+path, nil)
	req.Host = host
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Without a token, a page on attacker.example rebound to 127.0.0.1 reaches
// the status page from loopback; its Host gives it away.
func TestStatusPageRefusesARebindingHost(t *testing.T) {
	h := newHarness(t, false, func(o *Options) { o.StatusToken = "" })
	port := h.server.URL[strings.LastIndex(h.server.URL, ":")+1:]
	for _, host := range []string{"attacker.example:" + port, "attacker.example", "localhost:1"} {
		if code, body := h.getAs(host, "/"); code != http.StatusMisdirectedRequest || strings.Contains(body, "Recent runs") {
			t.Errorf("Host %s: %d", host, code)
		}
	}
	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port, "LOCALHOST.:" + port} {
		if code, _ := h.getAs(host, "/"); code != http.StatusOK {
			t.Errorf("Host %s: %d", host, code)
		}
	}

	// With a token, Host is the reverse proxy's business.
	guarded := newHarness(t, false, func(o *Options) { o.StatusToken = "status-secret" })
	if code, _ := guarded.getAs("pitcrew.example.com", "/", "Authorization", "Bearer status-secret"); code != http.StatusOK {
		t.Fatalf("the token behind a proxy: %d", code)
	}
	if code, _ := guarded.getAs("attacker.example", "/"); code != http.StatusForbidden {
		t.Fatalf("no token: %d", code)
	}
}
