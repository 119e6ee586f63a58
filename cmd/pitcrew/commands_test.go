package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/runs"
)

func TestReplayDryRunCommand(t *testing.T) {
	gh := testenv.NewGitHub(t)
	gh.SetPermission("alice", "write")
	t.Setenv("GITHUB_APP_INTEGRATION_ID", "1")
	t.Setenv("GITHUB_APP_PRIVATE_KEY", string(testenv.AppKeyPEM(t)))
	t.Setenv("GITHUB_V3_API_URL", gh.URL+"/")
	t.Setenv("PITCREW_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none.yml"))
	var ev map[string]any
	b, _ := os.ReadFile("../../testdata/webhooks/issues.labeled.json")
	json.Unmarshal(b, &ev)
	ev["installation"] = map[string]any{"id": 42}
	ev["label"].(map[string]any)["name"] = "flaky"
	ev["issue"].(map[string]any)["body"] = "test/hexpm/accounts/user_test.exs:12"
	ev["sender"].(map[string]any)["login"] = "alice"
	file := filepath.Join(t.TempDir(), "delivery.json")
	b, _ = json.Marshal(ev)
	os.WriteFile(file, b, 0o600)

	var out, errs bytes.Buffer
	if code := replayCommand([]string{"--event", "issues", "--file", file, "--dry-run"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs.String(), out.String())
	}
	var res struct {
		DryRun  bool `json:"dry_run"`
		Actions []struct {
			Kind, Prompt, Body string
			IdempotencyKey     string `json:"idempotency_key"`
		}
	}
	json.Unmarshal(out.Bytes(), &res)
	if !res.DryRun || len(res.Actions) != 2 || res.Actions[0].Kind != "session" || !strings.HasPrefix(res.Actions[0].IdempotencyKey, "flaky:codertocat/hello-world:test/hexpm/accounts/user_test.exs:12#") ||
		res.Actions[1].Kind != "comment" {
		t.Fatalf("output:\n%s", out.String())
	}
	for _, r := range gh.Requests() {
		if r.Method != "GET" && !strings.HasSuffix(r.Operation, "/access_tokens") {
			t.Errorf("dry run wrote: %s %s", r.Method, r.Path)
		}
	}
	if code := replayCommand([]string{"--event", "issues"}, &out, &errs); code != 2 {
		t.Fatalf("missing --file: exit %d", code)
	}
}

// runs list has a header, and says so when the ledger holds no run.
func TestRunsListHasAHeader(t *testing.T) {
	rdb := testenv.Redis(t)
	t.Setenv("REDIS_URL", fmt.Sprintf("redis://%s/%d", rdb.Options().Addr, rdb.Options().DB))
	var out, errs bytes.Buffer
	if code := runsCommand([]string{"list"}, &out, &errs); code != 0 || !strings.Contains(out.String(), "no runs in the ledger") {
		t.Fatalf("empty ledger: %d %q %q", code, out.String(), errs.String())
	}
	if _, _, err := runs.NewLedger(rdb).Claim(context.Background(), runs.Run{Key: "flaky:hexpm/hexpm:test/a_test.exs:1", Kind: runs.KindFlaky, InstallationID: 1, Repo: "hexpm/hexpm"}, time.Hour, 5, runs.Subject{}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := runsCommand([]string{"list"}, &out, &errs); code != 0 {
		t.Fatalf("list: %d %q", code, errs.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "STATE") || !strings.Contains(lines[0], "REPOSITORY") || !strings.Contains(lines[1], "flaky:hexpm/hexpm:test/a_test.exs:1#1") {
		t.Fatalf("list:\n%s", out.String())
	}
}
