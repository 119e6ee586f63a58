package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pitcrew.yml")
	os.WriteFile(file, []byte("PITCREW_ADDR: \":9000\"\nRUSH_ORG: from-file\n"), 0o600)
	env := map[string]string{"RUSH_ORG": "from-env"}
	c, err := LoadConfig([]string{file}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != ":9000" || c.RushOrg != "from-env" || c.RushAgent != "claude" || c.GitHubAPIURL != "https://api.github.com/" {
		t.Fatalf("%+v", c)
	}
	err = c.Validate()
	if err == nil || !strings.Contains(err.Error(), "GITHUB_APP_WEBHOOK_SECRET") || !strings.Contains(err.Error(), "RUSH_API_KEY") {
		t.Fatalf("Validate = %v", err)
	}
	os.WriteFile(file, []byte("PITCREW_ADR: x\n"), 0o600)
	if _, err := LoadConfig([]string{file}, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "unknown key PITCREW_ADR") {
		t.Fatalf("typo accepted: %v", err)
	}
	for addr, want := range map[string]string{":9000": "http://localhost:9000", "0.0.0.0:9000": "http://localhost:9000", "127.0.0.1:9001": "http://127.0.0.1:9001",
		"[::]:9002": "http://localhost:9002", ":0": "http://localhost:8080", "nonsense": "http://localhost:8080"} {
		c, err := LoadConfig(nil, func(k string) string { return map[string]string{"PITCREW_ADDR": addr}[k] })
		if err != nil || c.PublicURL != want {
			t.Errorf("PITCREW_ADDR %q: public URL %q, want %q (%v)", addr, c.PublicURL, want, err)
		}
	}
	if c, _ := LoadConfig(nil, func(k string) string {
		return map[string]string{"PITCREW_ADDR": ":9000", "PITCREW_PUBLIC_URL": "https://pitcrew.example.com"}[k]
	}); c.PublicURL != "https://pitcrew.example.com" {
		t.Errorf("a set public URL was replaced: %q", c.PublicURL)
	}
	if got := (Config{GitHubAPIURL: "https://ghe.example.com/api/v3/"}).V4URL(); got != "https://ghe.example.com/api/graphql" {
		t.Fatalf("V4URL = %s", got)
	}
}

// servingEnv is the environment of a pitcrew serving webhooks against the
// fakes, with an embedded Redis (REDIS_URL unset) and webhook secret "s".
func servingEnv(t *testing.T, gh *testenv.GitHub, sb *testenv.Sandbox) map[string]string {
	return map[string]string{"PITCREW_ADDR": "127.0.0.1:0", "GITHUB_APP_INTEGRATION_ID": "1", "GITHUB_APP_WEBHOOK_SECRET": "s", "GITHUB_V3_API_URL": gh.URL + "/",
		"GITHUB_APP_PRIVATE_KEY": string(testenv.AppKeyPEM(t)),
		"RUSH_API_URL":           sb.URL, "RUSH_ORG": sb.Org, "RUSH_API_KEY": sb.APIKey, "RUSH_WEBHOOK_SECRET": "whsec_c2VjcmV0"}
}

func TestRunServesAndShutsDown(t *testing.T) {
	gh := testenv.NewGitHub(t)
	sb := testenv.NewSandbox(t)
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	env := servingEnv(t, gh, sb)
	env["PITCREW_ADDR"] = addr
	cfg, err := LoadConfig(nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, zerolog.Nop()) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil && resp.StatusCode == 200 {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never ready: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run returned %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("shutdown took over 30 s")
	}
}

func TestRunFailsFastOnBadKey(t *testing.T) {
	env := map[string]string{"PITCREW_ADDR": "127.0.0.1:0", "GITHUB_APP_INTEGRATION_ID": "1", "GITHUB_APP_WEBHOOK_SECRET": "s",
		"GITHUB_V3_API_URL": "http://127.0.0.1:1/", "GITHUB_APP_PRIVATE_KEY": "not a key", "RUSH_API_URL": "http://127.0.0.1:1",
		"RUSH_ORG": "o", "RUSH_API_KEY": "k", "RUSH_WEBHOOK_SECRET": "x"}
	cfg, _ := LoadConfig(nil, func(k string) string { return env[k] })
	err := run(context.Background(), cfg, zerolog.Nop())
	if err == nil || strings.Contains(err.Error(), "not a key") {
		t.Fatalf("run = %v", err)
	}
}

func TestExunitCommand(t *testing.T) {
	var out, errs bytes.Buffer
	if code := exunitCommand([]string{"../../exunit/testdata/logs/gha_fail_seed_1.txt"}, nil, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	var rep struct {
		Runs     []struct{ Seed int64 }
		Failures []struct {
			File, Test, Module string
			Line               int
		}
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 || rep.Runs[0].Seed != 1 || len(rep.Failures) != 1 || rep.Failures[0].File != "test/racy_b_test.exs" || rep.Failures[0].Line != 25 {
		t.Fatalf("%s", out.String())
	}
	out.Reset()
	if code := exunitCommand(nil, strings.NewReader("== Compilation error in file lib/a.ex ==\n"), &out, &errs); code != 0 || !strings.Contains(out.String(), `"compile_error": true`) {
		t.Fatalf("stdin: %d %s", code, out.String())
	}
	if code := exunitCommand([]string{"/nonexistent"}, nil, &out, &errs); code != 1 {
		t.Fatalf("missing file: exit %d", code)
	}
	errs.Reset()
	if code := exunitCommand(nil, strings.NewReader("npm ERR! missing script: test\n"), &out, &errs); code != 1 || !strings.Contains(errs.String(), "no ExUnit output") {
		t.Fatalf("a log without ExUnit output: exit %d, %q", code, errs.String())
	}
	out.Reset()
	if code := exunitCommand([]string{"--help"}, nil, &out, &errs); code != 0 || !strings.Contains(out.String(), "usage: pitcrew exunit [FILE]") {
		t.Fatalf("--help: exit %d, %q", code, out.String())
	}
}

func TestReviewCommand(t *testing.T) {
	var out, errs bytes.Buffer
	if code := reviewCommand([]string{"--job", "alert", "../../evidence/testdata/alert/plug_removed.diff"}, nil, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	var rep struct {
		Verdict  string
		Findings []struct {
			Rule, Severity, File, Text, Why string
			Line                            int
		}
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != "concern" || len(rep.Findings) != 1 || rep.Findings[0].Rule != "plug-removed" || rep.Findings[0].Line != 4 ||
		rep.Findings[0].File != "lib/hexpm_web/controllers/api/key_controller.ex" || rep.Findings[0].Why == "" {
		t.Fatalf("%s", out.String())
	}
	out.Reset()
	clean := "--- a/test/a_test.exs\n+++ b/test/a_test.exs\n@@ -1 +1 @@\n-    Process.sleep(100)\n+    assert_receive :done\n"
	if code := reviewCommand([]string{"-"}, strings.NewReader(clean), &out, &errs); code != 0 || !strings.Contains(out.String(), `"verdict": "clean"`) {
		t.Fatalf("stdin: %d %s", code, out.String())
	}
	errs.Reset()
	if code := reviewCommand([]string{"-"}, strings.NewReader("not a diff\n"), &out, &errs); code != 1 || !strings.Contains(errs.String(), "not a unified diff") {
		t.Fatalf("not a diff: exit %d, %q", code, errs.String())
	}
	for _, args := range [][]string{nil, {"--job", "deploy", "-"}, {"a", "b"}, {"--nope", "-"}} {
		if code := reviewCommand(args, nil, &out, &errs); code != 2 {
			t.Fatalf("%v: exit %d", args, code)
		}
	}
	out.Reset()
	if code := reviewCommand([]string{"--help"}, nil, &out, &errs); code != 0 || !strings.Contains(out.String(), "usage: pitcrew review") {
		t.Fatalf("--help: exit %d, %q", code, out.String())
	}
}

// What start-up says of what is wrong: an unset id is called unset, a
// GitHub that cannot be reached is not "rejected credentials", a GitHub
// that answers 401 is, and a bad log level is an error.
func TestStartUpNamesWhatIsWrong(t *testing.T) {
	if _, err := parseAppID(""); err == nil || err.Error() != "GITHUB_APP_INTEGRATION_ID is unset" {
		t.Errorf("unset id: %v", err)
	}
	if _, err := parseAppID("twelve"); err == nil || !strings.Contains(err.Error(), "must be a number") {
		t.Errorf("bad id: %v", err)
	}
	if _, err := LoadConfig(nil, func(k string) string { return map[string]string{"PITCREW_LOG_LEVEL": "verbose"}[k] }); err == nil || !strings.Contains(err.Error(), "PITCREW_LOG_LEVEL") {
		t.Errorf("bad log level: %v", err)
	}
	rejecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"message":"A JSON web token could not be decoded","documentation_url":"https://docs.github.com/rest"}`))
	}))
	defer rejecting.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close() // a port nothing listens on any more
	for url, want := range map[string]string{rejecting.URL: "GitHub rejected the app's credentials", closed.URL: "GitHub could not be reached"} {
		cc, err := newClientCreator(Config{AppID: "1", PrivateKey: string(testenv.AppKeyPEM(t)), GitHubAPIURL: url + "/"})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, err = checkCredentials(ctx, cc)
		cancel()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("GitHub at %s: %v, want %q", url, err, want)
		}
	}
}

// The credentials the setup pages write are found from any directory, and
// `runs` and `healthcheck` read a -config file like the server does.
func TestTheCredentialsAreFoundFromAnyDirectory(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("HOME", home)
	t.Setenv("PITCREW_CREDENTIALS_FILE", "")
	dir, err := os.UserConfigDir() // $XDG_CONFIG_HOME on Linux; ~/Library/Application Support on macOS
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "pitcrew", "credentials.yml")
	if got := defaultCredentials(); got != want {
		t.Fatalf("default credentials %q, want %q", got, want)
	}
	os.MkdirAll(filepath.Dir(want), 0o700)
	os.WriteFile(want, []byte("GITHUB_APP_INTEGRATION_ID: \"77\"\n"), 0o600)
	t.Chdir(t.TempDir())
	c, err := LoadConfig(configFiles("", os.Getenv), os.Getenv)
	if err != nil || c.AppID != "77" || c.CredentialsFile != want {
		t.Fatalf("from another directory: app %q, file %q, %v", c.AppID, c.CredentialsFile, err)
	}

	// A file an earlier version wrote in ./.pitcrew is still read while
	// the home has none.
	os.Remove(want)
	os.MkdirAll(".pitcrew", 0o700)
	os.WriteFile(legacyCredentials, []byte("GITHUB_APP_INTEGRATION_ID: \"78\"\n"), 0o600)
	if c, err := LoadConfig(configFiles("", os.Getenv), os.Getenv); err != nil || c.AppID != "78" {
		t.Fatalf("the earlier version's file: app %q, %v", c.AppID, err)
	}
}

func TestHealthcheckReadsItsConfigFile(t *testing.T) {
	t.Setenv("PITCREW_ADDR", "")
	t.Setenv("PITCREW_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none.yml"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			w.Write([]byte("ok\n"))
		}
	}))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "pitcrew.yml")
	os.WriteFile(file, []byte("PITCREW_ADDR: \""+strings.TrimPrefix(srv.URL, "http://")+"\"\n"), 0o600)
	var stderr bytes.Buffer
	if code, _ := dispatch([]string{"healthcheck", "-config", file}, nil, &bytes.Buffer{}, &stderr); code != 0 {
		t.Fatalf("healthcheck -config: exit %d, %s", code, stderr.String())
	}
	if code, _ := dispatch([]string{"runs", "-config", filepath.Join(t.TempDir(), "missing.yml"), "list"}, nil, &bytes.Buffer{}, &stderr); code != 1 || !strings.Contains(stderr.String(), "missing.yml") {
		t.Fatalf("runs -config with a missing file: exit %d, %s", code, stderr.String())
	}
}

func TestTheSandboxSettingsAreCheckedBeforeRegistering(t *testing.T) {
	got := Config{RushAPIKey: "k", RushWebhookSecret: "whsec_..."}.sandboxProblems()
	if len(got) != 2 || !strings.HasPrefix(got[0], "RUSH_ORG is unset") || !strings.Contains(got[1], "the README's whsec_... is a placeholder") {
		t.Fatalf("problems %q", got)
	}
	if got := (Config{RushOrg: "o", RushAPIKey: "k", RushWebhookSecret: "whsec_c2VjcmV0"}).sandboxProblems(); len(got) != 0 {
		t.Fatalf("problems of good settings: %q", got)
	}
	c := Config{AppID: "1", PrivateKey: "k", WebhookSecret: "s", RushOrg: "o", RushAPIKey: "k", RushWebhookSecret: "whsec_..."}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "RUSH_WEBHOOK_SECRET is not a signing secret") {
		t.Fatalf("Validate = %v", err)
	}
}

// With PITCREW_WEBHOOK_PROXY_URL set, pitcrew reads the relay channel
// itself: a labelled issue posted there starts its run, no smee-client.
func TestWebhooksComeThroughTheRelayChannel(t *testing.T) {
	gh := testenv.NewGitHub(t)
	gh.SetPermission("alice", "write")
	sb := testenv.NewSandbox(t)
	payload := testenv.LabeledEvent(t, "flaky", "alice", 7, "Flaky test/hexpm/accounts/user_test.exs:12", "")
	mac := hmac.New(sha256.New, []byte("s"))
	mac.Write(payload)
	data, _ := json.Marshal(map[string]any{"x-github-event": "issues", "x-github-delivery": "relayed-1",
		"x-hub-signature-256": "sha256=" + hex.EncodeToString(mac.Sum(nil)), "body": json.RawMessage(payload), "query": map[string]any{}})
	channel := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: ready\ndata: {}\n\nid: 1\ndata: %s\n\n", data)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer channel.Close()
	env := servingEnv(t, gh, sb)
	env["PITCREW_WEBHOOK_PROXY_URL"] = channel.URL
	cfg, err := LoadConfig(nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, zerolog.Nop()) }()
	defer func() { cancel(); <-done }()
	for deadline := time.Now().Add(15 * time.Second); sb.SessionCount() == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the relayed delivery started no run")
		}
	}
}
