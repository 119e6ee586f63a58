package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/internal/github"
)

// --head DIR reads a diff's path only when, symbolic links resolved, it
// stays inside DIR, is a regular file and is no larger than the app reads
// at a pull request's head; of every other path it says why, once.
func TestReviewHeadReadsOnlyRegularFilesInsideTheCheckout(t *testing.T) {
	parent := t.TempDir()
	checkout := filepath.Join(parent, "checkout")
	write := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(checkout, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(parent, "secret_test.exs"), "outside the checkout")
	write(filepath.Join(checkout, "test", "a_test.exs"), "inside")
	write(filepath.Join(checkout, "test", "edge_test.exs"), strings.Repeat("x", github.MaxFileAt))
	write(filepath.Join(checkout, "test", "big_test.exs"), strings.Repeat("x", github.MaxFileAt+1))
	link("../../secret_test.exs", "test/escape_test.exs")
	link(filepath.Join(parent, "secret_test.exs"), "test/absolute_test.exs")
	link("/dev/zero", "test/zero_test.exs")
	link("/nonexistent/x_test.exs", "test/dangling_test.exs")
	link("a_test.exs", "test/alias_test.exs")
	link("../../checkout/test/a_test.exs", "test/roundabout_test.exs")
	fifo := syscall.Mkfifo(filepath.Join(checkout, "test", "fifo_test.exs"), 0o644) == nil
	// --head names the checkout through a link of its own, as a temporary
	// directory often is.
	head := filepath.Join(parent, "head")
	if err := os.Symlink(checkout, head); err != nil {
		t.Fatal(err)
	}

	const outside, irregular, gone = "outside --head", "not a regular file", "not in --head"
	for _, c := range []struct {
		name, path string
		read       string // the content read; "" when refused
		why        string // in the refusal; "" when read
	}{
		{name: "a file of the checkout", path: "test/a_test.exs", read: "inside"},
		{name: "a file exactly as large as the app reads", path: "test/edge_test.exs", read: strings.Repeat("x", github.MaxFileAt)},
		{name: "a link to a file of the checkout", path: "test/alias_test.exs", read: "inside"},
		{name: "a path up out of the checkout", path: "../secret_test.exs", why: outside},
		{name: "a path that climbs out from inside", path: "test/../../secret_test.exs", why: outside},
		{name: "an absolute path", path: "/etc/passwd", why: outside},
		{name: "a relative link out of the checkout", path: "test/escape_test.exs", why: outside},
		{name: "an absolute link out of the checkout", path: "test/absolute_test.exs", why: outside},
		{name: "a link to /dev/zero", path: "test/zero_test.exs", why: outside},
		{name: "a link out to nothing", path: "test/dangling_test.exs", why: "escapes"},
		// os.Root follows no link above the checkout, even one that comes back.
		{name: "a link out of the checkout and back in", path: "test/roundabout_test.exs", why: "escapes"},
		{name: "a FIFO", path: "test/fifo_test.exs", why: irregular},
		{name: "a directory", path: "test", why: irregular},
		{name: "a file over the cap", path: "test/big_test.exs", why: "larger than 1048576 bytes"},
		{name: "a file the checkout lacks", path: "test/gone_test.exs", why: gone},
		{name: "a name with an escape sequence", path: "test/\x1b[2Jx_test.exs", why: `"test/\x1b[2Jx_test.exs": ` + gone},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.path == "test/fifo_test.exs" && !fifo {
				t.Skip("no FIFO here")
			}
			var stderr bytes.Buffer
			// Listed twice: read, or refused and said, once.
			files := readWithin(t, head, []string{c.path, c.path}, &stderr)
			said := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
			if c.why == "" {
				if got, ok := files[c.path]; !ok || got != c.read || stderr.Len() != 0 {
					t.Errorf("read %v (%d bytes), stderr %q; want %d bytes read, nothing said", ok, len(got), stderr.String(), len(c.read))
				}
				return
			}
			if _, ok := files[c.path]; ok || len(said) != 1 || !strings.HasPrefix(said[0], "pitcrew review: not reading ") || !strings.Contains(said[0], c.why) {
				t.Errorf("read %v, stderr %q; want it refused once with %q", ok, stderr.String(), c.why)
			}
		})
	}

	// Within a directory that holds devices, a device is still refused.
	var stderr bytes.Buffer
	if files := readWithin(t, "/dev", []string{"zero", "null"}, &stderr); len(files) != 0 || strings.Count(stderr.String(), irregular) != 2 {
		t.Errorf("read %d devices of /dev, stderr %q", len(files), stderr.String())
	}
	if _, err := readHead(filepath.Join(parent, "nothing"), nil, &stderr); err == nil {
		t.Error("a --head that does not exist was taken")
	}
}

// readWithin is readHead, failing the test when it waits (a FIFO opened to
// read waits for a writer) or errs.
func readWithin(t *testing.T, dir string, paths []string, stderr *bytes.Buffer) map[string]string {
	t.Helper()
	type result struct {
		files map[string]string
		err   error
	}
	done := make(chan result, 1)
	go func() {
		files, err := readHead(dir, paths, stderr)
		done <- result{files, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.files
	case <-time.After(10 * time.Second):
		t.Fatalf("reading %q still waits", paths)
		return nil
	}
}

// End to end: a file the diff names is read from --head only inside it,
// so a link out of the checkout cannot settle the review.
func TestReviewCommandHeadStaysInsideTheCheckout(t *testing.T) {
	parent := t.TempDir()
	checkout := filepath.Join(parent, "checkout")
	if err := os.MkdirAll(filepath.Join(checkout, "test"), 0o755); err != nil {
		t.Fatal(err)
	}
	global := "defmodule ATest do\n  use Hexpm.DataCase, async: false\n\n  setup do\n    Application.put_env(:hexpm, :x, 1)\n  end\nend\n"
	for _, name := range []string{filepath.Join(parent, "outside.exs"), filepath.Join(checkout, "test", "inside_test.exs")} {
		if err := os.WriteFile(name, []byte(global), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../../outside.exs", filepath.Join(checkout, "test", "escape_test.exs")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path, verdict, stderr string
	}{
		{name: "a file of the checkout settles the rule", path: "test/inside_test.exs", verdict: `which tests running at the same time would share`},
		{name: "a link out of it does not", path: "test/escape_test.exs", verdict: `the file was not read whole`,
			stderr: "pitcrew review: not reading test/escape_test.exs: outside --head\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			diff := "--- a/" + c.path + "\n+++ b/" + c.path + "\n@@ -1,2 +1,2 @@\n defmodule ATest do\n-  use Hexpm.DataCase, async: true\n+  use Hexpm.DataCase, async: false\n"
			var out, errs bytes.Buffer
			code := reviewCommand([]string{"--head", checkout, "-"}, strings.NewReader(diff), &out, &errs)
			if code != 0 || !strings.Contains(out.String(), c.verdict) || errs.String() != c.stderr {
				t.Errorf("exit %d, stderr %q, out %s; want %s, stderr %q", code, errs.String(), out.String(), c.verdict, c.stderr)
			}
		})
	}
	var out, errs bytes.Buffer
	if code := reviewCommand([]string{"--head", filepath.Join(parent, "nothing"), "-"}, strings.NewReader("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"), &out, &errs); code != 1 || !strings.Contains(errs.String(), "--head") {
		t.Errorf("a --head that does not exist: exit %d, stderr %q", code, errs.String())
	}
}

// With both sides of a checkout, a function's change is read clause by
// clause: a condition dropped from a policy is stricter, no concern; from
// the hunks alone, which do not show the function's head, it is one.
func TestReviewReadsBothSidesAsCode(t *testing.T) {
	dir := t.TempDir()
	policy := "lib/app/policy.ex"
	src := func(body string) string {
		return "defmodule App.Policy do\n  def can_publish?(user, package) do\n" + body + "\n  end\nend\n"
	}
	for side, body := range map[string]string{"base": "    admin?(user) || owner?(user, package)", "head": "    admin?(user)"} {
		if err := os.MkdirAll(filepath.Join(dir, side, "lib", "app"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, side, policy), []byte(src(body)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	diff := "diff --git a/" + policy + " b/" + policy + "\n--- a/" + policy + "\n+++ b/" + policy + "\n@@ -3,1 +3,1 @@\n-    admin?(user) || owner?(user, package)\n+    admin?(user)\n"
	for _, c := range []struct {
		args    []string
		verdict string
	}{
		{[]string{"--job", "alert", "-"}, `"verdict": "concern"`},
		{[]string{"--job", "alert", "--base", filepath.Join(dir, "base"), "--head", filepath.Join(dir, "head"), "-"}, `"verdict": "clean"`},
	} {
		var out, errs bytes.Buffer
		if code := reviewCommand(c.args, strings.NewReader(diff), &out, &errs); code != 0 || !strings.Contains(out.String(), c.verdict) {
			t.Fatalf("%v: code %d, want %s:\n%s%s", c.args, code, c.verdict, out.String(), errs.String())
		}
	}
}
