package setup

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew"
)

func TestStateIsSingleUse(t *testing.T) {
	gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(Credentials{ID: 7, Slug: "p", Name: "p", HTMLURL: "https://github.com/apps/p", PEM: "KEY", WebhookSecret: "S"})
	}))
	defer gh.Close()
	registered := 0
	s := &Server{GitHubWebURL: "https://github.com", GitHubAPIURL: gh.URL, CredentialsPath: filepath.Join(t.TempDir(), "c.yml"),
		Registered: func(Credentials) error { registered++; return nil }}
	req := httptest.NewRequest(http.MethodPost, "/setup/start", strings.NewReader("account=personal"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.RemoteAddr = "127.0.0.1:40000"
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	state := regexp.MustCompile(`state=([0-9a-f]+)`).FindStringSubmatch(rec.Body.String())[1]
	call := func(q string) int {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/setup/callback?"+q, nil))
		return rec.Code
	}
	if call("code=abc&state="+state) != 200 || call("code=abc&state="+state) != 400 || call("code=abc&state=") != 400 || registered != 1 {
		t.Fatalf("state not single-use (registered %d)", registered)
	}
	if info, _ := os.Stat(s.CredentialsPath); info.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", info.Mode())
	}
	bad := httptest.NewRequest(http.MethodPost, "/setup/start", strings.NewReader("account=organization&org=../evil"))
	bad.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	bad.RemoteAddr = "127.0.0.1:40000"
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, bad)
	if rec.Code != 400 {
		t.Fatalf("a bad organisation name answered %d", rec.Code)
	}
}

func TestBuildManifestFromAppYML(t *testing.T) {
	b, err := BuildManifest(pitcrew.AppManifest, "https://pitcrew.example.com/", "https://smee.io/abc")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	if m["name"] != "pitcrew" || m["hook_attributes"].(map[string]any)["url"] != "https://smee.io/abc" || m["redirect_url"] != "https://pitcrew.example.com/setup/callback" {
		t.Fatalf("%v", m)
	}
	perms := m["default_permissions"].(map[string]any)
	for _, p := range []string{"issues", "checks", "actions", "contents", "pull_requests", "metadata"} {
		if perms[p] == nil {
			t.Errorf("permission %s missing", p)
		}
	}
}

func TestSetupPagesNeedLoopbackOrTheToken(t *testing.T) {
	s := &Server{GitHubWebURL: "https://github.com", Token: "t0k3n"}
	for _, c := range []struct {
		remote, path string
		want         int
	}{
		{"127.0.0.1:5000", "/", 200}, {"[::1]:5000", "/", 200},
		{"203.0.113.9:5000", "/", 403}, {"203.0.113.9:5000", "/?setup_token=wrong", 403}, {"203.0.113.9:5000", "/?setup_token=t0k3n", 200},
	} {
		req := httptest.NewRequest(http.MethodGet, c.path, nil)
		req.RemoteAddr = c.remote
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("%s %s: %d, want %d", c.remote, c.path, rec.Code, c.want)
		}
	}
}
