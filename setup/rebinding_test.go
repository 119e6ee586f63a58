package setup

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/pitcrew/pitcrew/internal/hostrule"
)

// fakeConversion answers the manifest code exchange as GitHub does.
func fakeConversion(t *testing.T) *httptest.Server {
	gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(Credentials{ID: 7, Slug: "p", Name: "p", HTMLURL: "https://github.com/apps/p", PEM: "KEY", WebhookSecret: "S"})
	}))
	t.Cleanup(gh.Close)
	return gh
}

// serve sends one request to s as a connection to 127.0.0.1:8080 would
// carry it, from remote with Host host, and returns the answer.
func serve(s http.Handler, method, target, form, remote, host string) *httptest.ResponseRecorder {
	var body io.Reader
	if form != "" {
		body = strings.NewReader(form)
	}
	req := httptest.NewRequest(method, target, body)
	if form != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.RemoteAddr, req.Host = remote, host
	req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}))
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

var stateIn = regexp.MustCompile(`state=([0-9a-f]+)`)

// A page on attacker.example, its name rebound to 127.0.0.1, reaches the
// real listener from loopback: every setup route refuses it before any
// state is minted or consumed, and the operator's registration still works.
func TestRebindingRequestChangesNothing(t *testing.T) {
	registered := 0
	s := &Server{GitHubWebURL: "https://github.com", GitHubAPIURL: fakeConversion(t).URL, CredentialsPath: filepath.Join(t.TempDir(), "c.yml"),
		Registered: func(Credentials) error { registered++; return nil }}
	srv := httptest.NewServer(s)
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	do := func(method, path, form, host string) (int, string) {
		var body io.Reader
		if form != "" {
			body = strings.NewReader(form)
		}
		req, _ := http.NewRequest(method, srv.URL+path, body)
		if form != "" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	attacker := "attacker.example:" + port
	for _, c := range []struct{ method, path, form string }{
		{http.MethodGet, "/", ""}, {http.MethodPost, "/setup/start", "account=personal"}, {http.MethodGet, "/setup/callback?code=abc&state=x", ""},
		{http.MethodGet, "/api/github/hook", ""},
	} {
		if code, body := do(c.method, c.path, c.form, attacker); code != http.StatusMisdirectedRequest || stateIn.MatchString(body) {
			t.Errorf("%s %s for Host %s: %d\n%s", c.method, c.path, attacker, code, body)
		}
	}
	s.mu.Lock()
	n := len(s.states)
	s.mu.Unlock()
	if n != 0 {
		t.Fatalf("the rebound requests minted %d states", n)
	}

	code, body := do(http.MethodPost, "/setup/start", "account=personal", "127.0.0.1:"+port)
	m := stateIn.FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		t.Fatalf("the operator's start: %d\n%s", code, body)
	}
	if code, _ := do(http.MethodGet, "/setup/callback?code=abc&state="+m[1], "", attacker); code != http.StatusMisdirectedRequest {
		t.Fatalf("a rebound callback answered %d", code)
	}
	if _, err := os.Stat(s.CredentialsPath); !os.IsNotExist(err) || registered != 0 {
		t.Fatalf("a rebound callback wrote credentials (%v, registered %d)", err, registered)
	}
	if code, body := do(http.MethodGet, "/setup/callback?code=abc&state="+m[1], "", "localhost:"+port); code != http.StatusOK || registered != 1 {
		t.Fatalf("the operator's callback after a rebound one: %d (registered %d)\n%s", code, registered, body)
	}
	if code, _ := do(http.MethodGet, "/healthz", "", attacker); code != http.StatusOK {
		t.Fatalf("/healthz answered %d", code)
	}
}

// The printed setup_token starts one registration; after that, and after
// an app is registered, it opens nothing.
func TestSetupTokenIsSingleUse(t *testing.T) {
	const remote, host = "203.0.113.9:5000", "localhost:8080"
	s := &Server{GitHubWebURL: "https://github.com", GitHubAPIURL: fakeConversion(t).URL, CredentialsPath: filepath.Join(t.TempDir(), "c.yml"), Token: "t0k3n"}
	if rec := serve(s, http.MethodGet, "/?setup_token=t0k3n", "", remote, host); rec.Code != http.StatusOK {
		t.Fatalf("the token's first page: %d", rec.Code)
	}
	if rec := serve(s, http.MethodPost, "/setup/start", "account=organization&org=../evil&setup_token=t0k3n", remote, host); rec.Code != http.StatusBadRequest {
		t.Fatalf("a bad organisation name: %d", rec.Code)
	}
	rec := serve(s, http.MethodPost, "/setup/start", "account=personal&setup_token=t0k3n", remote, host)
	if rec.Code != http.StatusOK || !stateIn.MatchString(rec.Body.String()) {
		t.Fatalf("the token's registration (a form error spends nothing): %d\n%s", rec.Code, rec.Body)
	}
	if rec := serve(s, http.MethodPost, "/setup/start", "account=personal&setup_token=t0k3n", remote, host); rec.Code != http.StatusForbidden || stateIn.MatchString(rec.Body.String()) {
		t.Fatalf("a reused token started another registration: %d", rec.Code)
	}
	if rec := serve(s, http.MethodGet, "/?setup_token=t0k3n", "", remote, host); rec.Code != http.StatusForbidden {
		t.Fatalf("a reused token opened the page: %d", rec.Code)
	}
	if rec := serve(s, http.MethodGet, "/", "", "127.0.0.1:5000", host); rec.Code != http.StatusOK {
		t.Fatalf("this machine after the token: %d", rec.Code)
	}

	// Raced: one start wins the token.
	raced := &Server{GitHubWebURL: "https://github.com", Token: "t0k3n"}
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if serve(raced, http.MethodPost, "/setup/start", "account=personal&setup_token=t0k3n", remote, host).Code == http.StatusOK {
				mu.Lock()
				won++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d concurrent starts used the token", won)
	}

	// Registered from this machine: the unused token is spent too.
	done := &Server{GitHubWebURL: "https://github.com", GitHubAPIURL: fakeConversion(t).URL, CredentialsPath: filepath.Join(t.TempDir(), "c.yml"), Token: "t0k3n"}
	rec = serve(done, http.MethodPost, "/setup/start", "account=personal", "127.0.0.1:5000", host)
	state := stateIn.FindStringSubmatch(rec.Body.String())[1]
	if rec := serve(done, http.MethodGet, "/setup/callback?"+url.Values{"code": {"abc"}, "state": {state}}.Encode(), "", "127.0.0.1:5000", host); rec.Code != http.StatusOK {
		t.Fatalf("callback: %d", rec.Code)
	}
	if rec := serve(done, http.MethodGet, "/?setup_token=t0k3n", "", remote, host); rec.Code != http.StatusForbidden {
		t.Fatalf("the token after a registration: %d", rec.Code)
	}
}

// GitHub sends the browser back to PITCREW_PUBLIC_URL: behind a proxy the
// callback carries the public host and reaches pitcrew from elsewhere.
func TestCallbackAtThePublicHost(t *testing.T) {
	hosts, err := hostrule.New("https://pitcrew.example.com", ":8080")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{GitHubWebURL: "https://github.com", GitHubAPIURL: fakeConversion(t).URL, CredentialsPath: filepath.Join(t.TempDir(), "c.yml"), Hosts: hosts}
	rec := serve(s, http.MethodPost, "/setup/start", "account=personal", "127.0.0.1:5000", "localhost:8080")
	state := stateIn.FindStringSubmatch(rec.Body.String())[1]
	if rec := serve(s, http.MethodGet, "/setup/callback?code=abc&state="+state, "", "10.0.0.2:5000", "pitcrew.example.com.attacker.example"); rec.Code != http.StatusMisdirectedRequest {
		t.Fatalf("a look-alike host: %d", rec.Code)
	}
	if rec := serve(s, http.MethodGet, "/setup/callback?code=abc&state="+state, "", "10.0.0.2:5000", "Pitcrew.Example.com"); rec.Code != http.StatusOK {
		t.Fatalf("the public host: %d\n%s", rec.Code, rec.Body)
	}
}
