package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

// setupPitcrew starts pitcrew with no GitHub App configured, against the
// GitHub and sandbox fakes, and returns its base URL.
func setupPitcrew(t *testing.T) (base string, gh *testenv.GitHub, credsPath string) {
	gh = testenv.NewGitHub(t)
	sb := testenv.NewSandbox(t)
	gh.AppKeyPEM = testenv.AppKeyPEM(t)
	gh.ManifestCode = "a1b2c3"
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	credsPath = filepath.Join(t.TempDir(), ".pitcrew", "credentials.yml")
	env := map[string]string{"PITCREW_ADDR": addr, "PITCREW_PUBLIC_URL": "http://" + addr, "GITHUB_V3_API_URL": gh.URL + "/", "GITHUB_WEB_URL": gh.URL,
		"PITCREW_CREDENTIALS_FILE": credsPath, "RUSH_API_URL": sb.URL, "RUSH_ORG": sb.Org, "RUSH_API_KEY": sb.APIKey, "RUSH_WEBHOOK_SECRET": "whsec_c2VjcmV0",
		"REDIS_URL": ""} // embedded Redis: nothing is left in the shared one
	for k, v := range env {
		t.Setenv(k, v) // the switch re-reads the configuration from the environment
	}
	cfg, err := LoadConfig(nil, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, zerolog.Nop()) }()
	t.Cleanup(func() { cancel(); <-done })
	base = "http://" + addr
	for deadline := time.Now().Add(10 * time.Second); ; {
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("setup mode never answered")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return base, gh, credsPath
}

func TestManifestFlowRegistersAndSwitchesToServing(t *testing.T) {
	base, gh, credsPath := setupPitcrew(t)
	page := get(t, base+"/")
	if !strings.Contains(page, `action="/setup/start"`) || !strings.Contains(page, `name="org"`) {
		t.Fatalf("setup page:\n%s", page)
	}
	// Register on an organisation: the next page posts the manifest to GitHub.
	resp, err := http.PostForm(base+"/setup/start", url.Values{"account": {"organization"}, "org": {"hexpm"}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	action := html.UnescapeString(regexp.MustCompile(`action="([^"]+)"`).FindStringSubmatch(string(body))[1])
	manifest := html.UnescapeString(regexp.MustCompile(`name="manifest" value="([^"]+)"`).FindStringSubmatch(string(body))[1])
	if !strings.HasPrefix(action, gh.URL+"/organizations/hexpm/settings/apps/new?state=") {
		t.Fatalf("form action %q", action)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(manifest), &m); err != nil {
		t.Fatal(err)
	}
	if m["hook_attributes"].(map[string]any)["url"] != base+"/api/github/hook" || m["redirect_url"] != base+"/setup/callback" ||
		m["default_permissions"].(map[string]any)["checks"] != "write" || len(m["default_events"].([]any)) == 0 {
		t.Fatalf("manifest %v", m)
	}
	state := strings.TrimPrefix(action, gh.URL+"/organizations/hexpm/settings/apps/new?state=")

	// GitHub sends the user back; a wrong state is refused and consumes nothing.
	if code := status(t, base+"/setup/callback?code=a1b2c3&state=forged"); code != http.StatusBadRequest {
		t.Fatalf("forged state answered %d", code)
	}
	done := get(t, base+"/setup/callback?code=a1b2c3&state="+state)
	if !strings.Contains(done, "pitcrew is now serving webhooks") || !strings.Contains(done, gh.URL+"/apps/pitcrew-test/installations/new") {
		t.Fatalf("done page:\n%s", done)
	}
	// A reused state: after the switch the setup routes are gone, and the
	// setup server itself refuses a used state (TestStateIsSingleUse).
	if code := status(t, base+"/setup/callback?code=a1b2c3&state="+state); code < 400 {
		t.Fatalf("a reused state answered %d", code)
	}
	info, err := os.Stat(credsPath)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v %v", info, err)
	}
	creds, _ := os.ReadFile(credsPath)
	if !strings.Contains(string(creds), "secret-from-github") || !strings.Contains(string(creds), "GITHUB_APP_INTEGRATION_ID") {
		t.Fatalf("credentials file:\n%s", creds)
	}

	// Serving now, with the new webhook secret, without a restart.
	payload := []byte(`{"action":"labeled","zen":"Keep it logically awesome."}`)
	if code := deliver(t, base, "after-setup-1", "secret-from-github", payload); code != http.StatusAccepted {
		t.Fatalf("webhook after setup: %d", code)
	}
}

// deliver posts an issues delivery signed with secret, as GitHub does.
func deliver(t *testing.T, base, id, secret string, payload []byte) int {
	t.Helper()
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(payload)
	req, _ := http.NewRequest(http.MethodPost, base+"/api/github/hook", bytes.NewReader(payload))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "issues")
	req.Header.Set("X-GitHub-Delivery", id)
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func get(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", u, resp.StatusCode, b)
	}
	return string(b)
}

func status(t *testing.T, u string) int {
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A page on attacker.example whose name is rebound to 127.0.0.1 reaches
// pitcrew from loopback: setup mode refuses it by its Host, writes no
// credentials, and the operator's registration goes through afterwards.
func TestSetupRefusesARebindingHost(t *testing.T) {
	base, gh, credsPath := setupPitcrew(t)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(base, "http://"))
	as := func(host, method, path string, form url.Values) (int, string) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
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
	if code, _ := as(attacker, http.MethodGet, "/", nil); code != http.StatusMisdirectedRequest {
		t.Fatalf("GET / for %s: %d", attacker, code)
	}
	if code, body := as(attacker, http.MethodPost, "/setup/start", url.Values{"account": {"personal"}}); code != http.StatusMisdirectedRequest || strings.Contains(body, "state=") {
		t.Fatalf("POST /setup/start for %s: %d\n%s", attacker, code, body)
	}
	code, body := as("localhost:"+port, http.MethodPost, "/setup/start", url.Values{"account": {"personal"}})
	m := regexp.MustCompile(`state=([0-9a-f]+)`).FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		t.Fatalf("the operator's start: %d\n%s", code, body)
	}
	if code, _ := as(attacker, http.MethodGet, "/setup/callback?code=a1b2c3&state="+m[1], nil); code != http.StatusMisdirectedRequest {
		t.Fatalf("a rebound callback: %d", code)
	}
	if _, err := os.Stat(credsPath); !os.IsNotExist(err) {
		t.Fatalf("a rebound callback wrote credentials: %v", err)
	}
	if done := get(t, base+"/setup/callback?code=a1b2c3&state="+m[1]); !strings.Contains(done, gh.URL+"/apps/pitcrew-test/installations/new") {
		t.Fatalf("done page:\n%s", done)
	}
}
