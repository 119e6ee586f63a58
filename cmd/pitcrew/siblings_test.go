package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// `pitcrew siblings` reads the checkout's test modules, regular files
// only, outside deps and _build, and prints those that share the fix's
// cause.
func TestSiblingsCommandReadsTheCheckoutsTestModules(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reader := "defmodule X.ATest do\n  use X.Case, async: true\n\n  test \"reads\" do\n    assert Application.get_env(:hexpm, :cdn_url)\n  end\nend\n"
	write("checkout/test/x/a_test.exs", reader)
	write("checkout/deps/lib/test/b_test.exs", reader)
	write("outside/c_test.exs", reader)
	if err := os.Symlink(filepath.Join(dir, "outside"), filepath.Join(dir, "checkout", "test", "linked")); err != nil {
		t.Fatal(err)
	}
	write("fix.patch", "diff --git a/test/cdn_test.exs b/test/cdn_test.exs\n--- a/test/cdn_test.exs\n+++ b/test/cdn_test.exs\n@@ -3,3 +3,3 @@\n   setup do\n-    Application.put_env(:hexpm, :cdn_url, \"http://cdn\")\n+    start_supervised!({Hexpm.CDN, url: \"http://cdn\"})\n   end\n")
	var out, errs bytes.Buffer
	if code := siblingsCommand([]string{"--fix", filepath.Join(dir, "fix.patch"), filepath.Join(dir, "checkout")}, nil, &out, &errs); code != 0 {
		t.Fatalf("code %d: %s", code, errs.String())
	}
	var got struct {
		Siblings []struct {
			File string
			Rank int
		}
		Scanned int
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Scanned != 1 || len(got.Siblings) != 1 || got.Siblings[0].File != "test/x/a_test.exs" || got.Siblings[0].Rank != 2 {
		t.Fatalf("%s", out.String())
	}
	if code := siblingsCommand([]string{filepath.Join(dir, "checkout")}, nil, &out, &errs); code != 2 {
		t.Fatalf("without --fix: code %d", code)
	}
}
