package setup

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew"
)

func TestStateIsSingleUse(t *testing.T) {
	registered := 0
	s := &Server{GitHubWebURL: "https://github.com", GitHubAPIURL: fakeConversion(t).URL, CredentialsPath: filepath.Join(t.TempDir(), "c.yml"),
		Registered: func(Credentials) error { registered++; return nil }}
	rec := serve(s, http.MethodPost, "/setup/start", "account=personal", "127.0.0.1:40000", "localhost:8080")
	state := regexp.MustCompile(`state=([0-9a-f]+)`).FindStringSubmatch(rec.Body.String())[1]
	if rec := serve(s, http.MethodPost, "/setup/start", "account=organization&org=../evil", "127.0.0.1:40000", "localhost:8080"); rec.Code != 400 {
		t.Fatalf("a bad organisation name answered %d", rec.Code)
	}
	call := func(q string) int {
		return serve(s, http.MethodGet, "/setup/callback?"+q, "", "192.0.2.1:1234", "localhost:8080").Code
	}
	if call("code=abc&state="+state) != 200 || call("code=abc&state="+state) != 400 || call("code=abc&state=") != 400 || registered != 1 {
		t.Fatalf("state not single-use (registered %d)", registered)
	}
	if info, _ := os.Stat(s.CredentialsPath); info.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", info.Mode())
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
		if rec := serve(s, http.MethodGet, c.path, "", c.remote, "127.0.0.1:8080"); rec.Code != c.want {
			t.Errorf("%s %s: %d, want %d", c.remote, c.path, rec.Code, c.want)
		}
	}
}

// The credentials hold the app's private key: the directory setup makes
// for them is ignored by git, checked with git itself when it is here; a
// directory that existed (the user chose it) is left as it was.
func TestTheCredentialsAreNeverCommitted(t *testing.T) {
	repo := t.TempDir()
	path := filepath.Join(repo, ".pitcrew", "credentials.yml")
	if err := WriteCredentials(path, Credentials{ID: 1, PEM: "-----BEGIN RSA PRIVATE KEY-----", WebhookSecret: "s"}); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v %v", info, err)
	}
	if git, err := exec.LookPath("git"); err == nil {
		if out, err := exec.Command(git, "-C", repo, "init", "-q").CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
		if out, err := exec.Command(git, "-C", repo, "check-ignore", "-q", ".pitcrew/credentials.yml").CombinedOutput(); err != nil {
			t.Fatalf("git does not ignore the credentials: %v %s", err, out)
		}
	} else {
		t.Log("git not installed: the .gitignore is checked by its content only")
	}
	if b, err := os.ReadFile(filepath.Join(repo, ".pitcrew", ".gitignore")); err != nil || !regexp.MustCompile(`(?m)^\*$`).Match(b) {
		t.Fatalf(".gitignore: %q %v", b, err)
	}
	chosen := t.TempDir()
	if err := WriteCredentials(filepath.Join(chosen, "creds.yml"), Credentials{ID: 1, PEM: "k", WebhookSecret: "s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(chosen, ".gitignore")); !os.IsNotExist(err) {
		t.Fatalf("a .gitignore was written into a directory the user chose: %v", err)
	}
}

// Without the sandbox settings, the pages list them instead of offering
// a registration whose app could not start.
func TestTheMissingSettingsComeBeforeTheRegistration(t *testing.T) {
	s := &Server{GitHubWebURL: "https://github.com", GitHubAPIURL: fakeConversion(t).URL, CredentialsPath: filepath.Join(t.TempDir(), "c.yml"),
		Missing: []string{"RUSH_ORG is unset: your organisation on the sandbox service.", "RUSH_WEBHOOK_SECRET is not a signing secret <b>"}}
	for _, req := range []struct{ method, path, form string }{{http.MethodGet, "/", ""}, {http.MethodPost, "/setup/start", "account=personal"}} {
		rec := serve(s, req.method, req.path, req.form, "127.0.0.1:40000", "localhost:8080")
		body := rec.Body.String()
		if rec.Code != 200 || !strings.Contains(body, "<li>RUSH_ORG is unset") || !strings.Contains(body, "&lt;b&gt;") || strings.Contains(body, `id="register"`) || strings.Contains(body, "state=") {
			t.Fatalf("%s %s: %d\n%s", req.method, req.path, rec.Code, body)
		}
	}
}

// Once an app is registered, / shows it (and why pitcrew could not start
// with it, when it could not), never a second registration.
func TestAfterTheRegistrationNoSecondIsOffered(t *testing.T) {
	s := &Server{GitHubWebURL: "https://github.com", GitHubAPIURL: fakeConversion(t).URL, CredentialsPath: filepath.Join(t.TempDir(), "c.yml"),
		Registered: func(Credentials) error {
			return errors.New("set the rest of the configuration and restart pitcrew (missing configuration: RUSH_API_KEY)")
		}}
	rec := serve(s, http.MethodPost, "/setup/start", "account=personal", "127.0.0.1:40000", "localhost:8080")
	state := regexp.MustCompile(`state=([0-9a-f]+)`).FindStringSubmatch(rec.Body.String())[1]
	if rec := serve(s, http.MethodGet, "/setup/callback?code=abc&state="+state, "", "127.0.0.1:40000", "localhost:8080"); rec.Code != 200 || !strings.Contains(rec.Body.String(), "pitcrew could not start with it") {
		t.Fatalf("callback: %d\n%s", rec.Code, rec.Body.String())
	}
	if rec := serve(s, http.MethodGet, "/anything", "", "192.0.2.1:1234", "localhost:8080"); strings.Contains(rec.Body.String(), "registered") {
		t.Fatalf("a browser elsewhere saw the registration on another path: %d\n%s", rec.Code, rec.Body.String())
	}
	for _, req := range []struct{ method, path, form string }{{http.MethodGet, "/", ""}, {http.MethodPost, "/setup/start", "account=personal"}} {
		rec := serve(s, req.method, req.path, req.form, "127.0.0.1:40000", "localhost:8080")
		body := rec.Body.String()
		if !strings.Contains(body, "p is registered") || !strings.Contains(body, "RUSH_API_KEY") || strings.Contains(body, `id="register"`) || strings.Contains(body, "state=") {
			t.Fatalf("%s %s after the registration: %d\n%s", req.method, req.path, rec.Code, body)
		}
	}
}
