package evidence

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseDiffReadsWhatGitAndDiffPrint(t *testing.T) {
	cases := []struct {
		name, diff string
		files      []string // path, then +added -deleted
		check      func(t *testing.T, d Diff)
	}{
		{"git show with a message", "commit abc\nAuthor: a <a@b>\n\n    --- not a header\n\ndiff --git a/lib/a.ex b/lib/a.ex\nindex 1..2 100644\n--- a/lib/a.ex\n+++ b/lib/a.ex\n@@ -1,3 +1,3 @@\n defmodule A do\n-  def x, do: 1\n+  def x, do: 2\n end\n",
			[]string{"lib/a.ex +1 -1"}, func(t *testing.T, d Diff) {
				l := d.Files[0].Hunks[0].Lines
				if l[1].Old != 2 || l[2].New != 2 || l[3].Old != 3 || l[3].New != 3 {
					t.Fatalf("line numbers %+v", l)
				}
			}},
		{"diff -u with timestamps", "--- lib/a.ex\t2026-12-01 10:00:00\n+++ lib/a.ex\t2026-12-01 10:01:00\n@@ -1 +1 @@\n-a\n+b\n", []string{"lib/a.ex +1 -1"}, nil},
		{"a new file", "diff --git a/test/n_test.exs b/test/n_test.exs\nnew file mode 100644\n--- /dev/null\n+++ b/test/n_test.exs\n@@ -0,0 +1,2 @@\n+defmodule N do\n+end\n",
			[]string{"test/n_test.exs +2 -0"}, func(t *testing.T, d Diff) {
				if d.Files[0].OldPath != "" || d.Files[0].Hunks[0].Lines[1].New != 2 {
					t.Fatalf("%+v", d.Files[0])
				}
			}},
		{"a deleted file", "diff --git a/test/o_test.exs b/test/o_test.exs\ndeleted file mode 100644\n--- a/test/o_test.exs\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n",
			[]string{"test/o_test.exs +0 -1"}, func(t *testing.T, d Diff) {
				if !d.Files[0].Deleted() {
					t.Fatal("not deleted")
				}
			}},
		{"a rename without changes, then a file", "diff --git a/lib/old.ex b/lib/new.ex\nsimilarity index 100%\nrename from lib/old.ex\nrename to lib/new.ex\ndiff --git a/lib/b.ex b/lib/b.ex\n--- a/lib/b.ex\n+++ b/lib/b.ex\n@@ -1 +1,2 @@\n x\n+y\n",
			[]string{"lib/new.ex +0 -0", "lib/b.ex +1 -0"}, nil},
		{"a binary file", "diff --git a/priv/logo.png b/priv/logo.png\nBinary files a/priv/logo.png and b/priv/logo.png differ\n", []string{"priv/logo.png +0 -0"},
			func(t *testing.T, d Diff) {
				if !d.Files[0].Binary {
					t.Fatal("not binary")
				}
			}},
		{"no newline at the end, CRLF", "--- a/x.ex\r\n+++ b/x.ex\r\n@@ -1 +1 @@\r\n-a\r\n\\ No newline at end of file\r\n+b\r\n\\ No newline at end of file\r\n", []string{"x.ex +1 -1"},
			func(t *testing.T, d Diff) {
				if l := d.Files[0].Hunks[0].Lines; len(l) != 2 || l[1].Text != "b" {
					t.Fatalf("%+v", l)
				}
			}},
		{"a quoted path", "diff --git \"a/test/caf\\303\\251_test.exs\" \"b/test/caf\\303\\251_test.exs\"\n--- \"a/test/caf\\303\\251_test.exs\"\n+++ \"b/test/caf\\303\\251_test.exs\"\n@@ -1 +1 @@\n-a\n+b\n",
			[]string{"test/café_test.exs +1 -1"}, nil},
		{"a removed line that starts with dashes", "--- a/x.ex\n+++ b/x.ex\n@@ -1,2 +1,1 @@\n--- a comment line\n x\n", []string{"x.ex +0 -1"}, nil},
		{"a hunk shorter than its header", "diff --git a/x.ex b/x.ex\n--- a/x.ex\n+++ b/x.ex\n@@ -1,5 +1,5 @@\n-a\n+b\ndiff --git a/y.ex b/y.ex\n--- a/y.ex\n+++ b/y.ex\n@@ -1 +1 @@\n-c\n+d\n", []string{"x.ex +1 -1", "y.ex +1 -1"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := ParseDiff(strings.NewReader(c.diff))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range d.Files {
				a, r := 0, 0
				for _, h := range f.Hunks {
					for _, l := range h.Lines {
						a += b2i(l.Kind == '+')
						r += b2i(l.Kind == '-')
					}
				}
				got = append(got, fmt.Sprintf("%s +%d -%d", f.Path(), a, r))
			}
			if strings.Join(got, "|") != strings.Join(c.files, "|") {
				t.Fatalf("files %v, want %v", got, c.files)
			}
			if c.check != nil {
				c.check(t, d)
			}
		})
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestParseDiffRefusesWhatIsNotADiff(t *testing.T) {
	for _, in := range []string{"", "hello\nworld\n", "commit abc\nAuthor: x\n\n    message only\n", "@@ -1 +1 @@\n-a\n+b\n"} {
		if _, err := ParseDiff(strings.NewReader(in)); err != ErrNotADiff {
			t.Errorf("%q: %v", in, err)
		}
	}
}

func TestADiffPastTheBoundsIsNotChecked(t *testing.T) {
	var many strings.Builder
	for i := 0; i <= MaxFiles; i++ {
		fmt.Fprintf(&many, "--- a/test/f%d_test.exs\n+++ b/test/f%d_test.exs\n@@ -1 +1 @@\n-a\n+Process.sleep(1)\n", i, i)
	}
	var long strings.Builder
	long.WriteString("--- a/test/big_test.exs\n+++ b/test/big_test.exs\n@@ -0,0 +1,30000 @@\n")
	for i := 0; i < 30000; i++ {
		long.WriteString("+Process.sleep(1)\n")
	}
	for name, in := range map[string]string{"files": many.String(), "lines": long.String()} {
		d, err := ParseDiff(strings.NewReader(in))
		if err != nil || !d.TooLarge {
			t.Fatalf("%s: too large %v, %v", name, d.TooLarge, err)
		}
		r := Check(d, JobFlaky)
		if r.Verdict != VerdictNote || len(r.Findings) != 0 || !strings.HasPrefix(r.NotChecked, "not checked: too large (") {
			t.Fatalf("%s: %+v", name, r)
		}
	}
}

// A diff that is not all there never reads clean: a hunk shorter than
// its header (the sender or the way cut it), or only binary files. What
// was read is still reported.
func TestADiffNotReadWholeIsNeverClean(t *testing.T) {
	const sleep = "diff --git a/test/a_test.exs b/test/a_test.exs\n--- a/test/a_test.exs\n+++ b/test/a_test.exs\n@@ -1,3 +1,4 @@\n test \"x\" do\n+  Process.sleep(100)\n   assert_receive :x\n end\n"
	for _, c := range []struct {
		name, diff, notChecked string
		verdict                Verdict
	}{
		{"whole, clean", "--- a/test/a_test.exs\n+++ b/test/a_test.exs\n@@ -1,2 +1,2 @@\n-x = 1\n+x = 2\n y\n", "", VerdictClean},
		{"whole, a concern", sleep, "", VerdictConcern},
		{"cut at the end", "--- a/test/a_test.exs\n+++ b/test/a_test.exs\n@@ -1,9 +1,9 @@\n-x = 1\n+x = 2\n", "not read whole: the diff was cut short (a hunk of test/a_test.exs ends after line 1, before the lines its header announces)", VerdictNote},
		{"cut before the next file", "--- a/lib/a.ex\n+++ b/lib/a.ex\n@@ -1,4 +1,4 @@\n-x = 1\n+x = 2\n" + sleep, "not read whole: the diff was cut short (a hunk of lib/a.ex ends after line 1, before the lines its header announces)", VerdictConcern},
		{"cut by a stray line", "--- a/lib/a.ex\n+++ b/lib/a.ex\n@@ -1,4 +1,4 @@\n-x = 1\n<html>\n", "not read whole: the diff was cut short (a hunk of lib/a.ex ends after line 1, before the lines its header announces)", VerdictNote},
		{"binary only", "diff --git a/priv/a.png b/priv/a.png\nindex 1..2 100644\nBinary files a/priv/a.png and b/priv/a.png differ\n", "not checked: the diff holds only binary files (1), no text to read", VerdictNote},
		{"binary beside text", "diff --git a/priv/a.png b/priv/a.png\nBinary files a/priv/a.png and b/priv/a.png differ\n" + sleep, "", VerdictConcern},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := ParseDiff(strings.NewReader(c.diff))
			if err != nil {
				t.Fatal(err)
			}
			r := Check(d, JobFlaky)
			if r.NotChecked != c.notChecked || r.Verdict != c.verdict {
				t.Fatalf("%s, %q; want %s, %q (%+v)", r.Verdict, r.NotChecked, c.verdict, c.notChecked, r.Findings)
			}
		})
	}
}

func FuzzParseDiff(f *testing.F) {
	f.Add("diff --git a/test/a_test.exs b/test/a_test.exs\n--- a/test/a_test.exs\n+++ b/test/a_test.exs\n@@ -1,2 +1,3 @@\n test \"x\" do\n+  Process.sleep(100)\n-  assert_receive :x, 100\n+  assert_receive :x, @t\n")
	f.Add("--- a/lib/router.ex\n+++ b/lib/router.ex\n@@ -1 +1 @@\n-  plug :authorize when action in [:a]\n+  plug :authorize\n")
	f.Add("--- a/test/test_helper.exs\n+++ b/test/test_helper.exs\n@@ -1 +1,2 @@\n-ExUnit.start()\n+t = String.to_integer(System.get_env(\"T\") || \"200\")\n+ExUnit.start(assert_receive_timeout: t)\n")
	f.Add("--- a/test/a_test.exs\n+++ b/test/a_test.exs\n@@ -1,3 +1,3 @@\n-  use A.Case, async: true\n+  use A.Case\n-    assert_in_delta x, 1, 0.1\n+    assert_in_delta x, 1, 0.5\n-    assert e in 1..2\n+    assert e >= 1\n")
	f.Add("--- a/lib/x_controller.ex\n+++ b/lib/x_controller.ex\n@@ -1,4 +1,3 @@\n   plug :authorize,\n-       [fun: &a/2]\n+       [fun: {M, :a}]\n        when action in [:x]\n")
	f.Add("--- a/lib/p/policy.ex\n+++ b/lib/p/policy.ex\n@@ -1 +1,5 @@\n-  defp ok?(u), do: is_map(u.m)\n+  defp ok?(u) do\n+    case u.m do\n+      nil -> false\n+      m -> is_map(m)\n+    end\n")
	f.Add("--- a/test/a_test.exs\n+++ b/test/a_test.exs\n@@ -1 +1,4 @@\n-    assert f() == 1\n+    check(fn -> assert f() == 1 end)\n+  defp check(g), do: (Process.sleep(1); check(g))\n+    if false do\n+    {:ok, _} = Req.get(u)\n")
	f.Add("--- a/.github/workflows/ci.yml\n+++ b/.github/workflows/ci.yml\n@@ -1 +1,3 @@\n-          max_attempts: 2\n+          max_attempts: 5\n+      - run: mix test --seed 0 --trace\n+    if: false\n")
	f.Add("--- a/test/a_test.exs\n+++ b/test/a_test.exs\n@@ -1 +1 @@\n-assert_in_delta , 1, 0.1\n+assert_in_delta x, 1, 0.5\n") // looped forever on an empty subject
	f.Add("--- a/.gitlab-ci.yml\n+++ b/.gitlab-ci.yml\n@@ -1,2 +1,5 @@\n test:\n   script: mix test\n+  retry:\n+    when:\n+      - script_failure\n+  allow_failure:\n+    exit_codes: [2]\n")
	f.Add("--- a/Jenkinsfile\n+++ b/Jenkinsfile\n@@ -1 +1,3 @@\n+retry(3) {\n   sh 'mix test'\n+}\n")
	f.Add("--- a/lib/a.ex\n+++ b/lib/a.ex\n@@ -1,3 +1,3 @@\n   \"\"\"\n-  plug :a when action in [:x]\n+  plug :a\n   \"\"\"\n")
	f.Add("--- a/test/a_test.exs\n+++ b/test/a_test.exs\n@@ -1,2 +1,3 @@\n-  doctest A\n+  doctest A, except: [f: 1]\n+  @moduletag :integration\n-    assert f(g(x: 1), y: 2) == [a: 1]\n")
	f.Fuzz(func(t *testing.T, in string) {
		d, err := ParseDiff(strings.NewReader(in))
		if err != nil {
			return
		}
		if len(d.Files) > MaxFiles || d.Added+d.Deleted > MaxChangedLine+1 {
			t.Fatalf("past the bounds: %d files, %d lines", len(d.Files), d.Added+d.Deleted)
		}
		for _, job := range []Job{JobFlaky, JobAlert} {
			base, head := map[string]string{}, map[string]string{}
			for _, p := range FileReads(d, job) {
				if p.Base {
					base[p.Path] = in // the files read whole are outside input too
				} else {
					head[p.Path] = in
				}
			}
			r := CheckFiles(d, job, base, head)
			if r.Verdict != VerdictClean && r.Verdict != VerdictNote && r.Verdict != VerdictConcern {
				t.Fatalf("verdict %q", r.Verdict)
			}
			for _, f := range r.Findings {
				if f.Rule == "" || f.Why == "" || f.Severity != Concern && f.Severity != Note {
					t.Fatalf("finding %+v", f)
				}
			}
		}
	})
}

// BenchmarkCheckAtTheBounds checks diffs at the changed-line bound that
// make rules compare lines with each other: every line async: false, and
// as many removed assertions as added ones in one block.
//
//	go test ./evidence -run '^$' -bench CheckAtTheBounds -benchtime 5x
func BenchmarkCheckAtTheBounds(b *testing.B) {
	var async, asserts strings.Builder
	async.WriteString("--- a/test/a_test.exs\n+++ b/test/a_test.exs\n@@ -1 +1,19999 @@\n-x\n")
	asserts.WriteString("--- a/test/a_test.exs\n+++ b/test/a_test.exs\n@@ -1,9999 +1,9999 @@\n")
	for i := 0; i < MaxChangedLine-2; i++ {
		async.WriteString("+  use A.Case, async: false\n")
	}
	for i := 0; i < MaxChangedLine/2-1; i++ {
		fmt.Fprintf(&asserts, "-    assert a%d == b\n", i)
	}
	for i := 0; i < MaxChangedLine/2-1; i++ {
		fmt.Fprintf(&asserts, "+    assert a%d == c\n", i)
	}
	// A test configuration that switches off a feature on every line, and
	// as many lines removed: what the rules that ask "was it there
	// before" compare.
	var config strings.Builder
	config.WriteString("--- a/config/test.exs\n+++ b/config/test.exs\n@@ -1,9999 +1,9999 @@\n")
	for i := 0; i < MaxChangedLine/2-1; i++ {
		fmt.Fprintf(&config, "-config :a, A%d, enabled: true\n", i)
	}
	for i := 0; i < MaxChangedLine/2-1; i++ {
		fmt.Fprintf(&config, "+config :a, A%d, enabled: false\n", i)
	}
	// A CI file whose every line is a value of a retry setting, each
	// indented more than the last: what reading YAML by its parents asks.
	var ci strings.Builder
	ci.WriteString("--- a/.gitlab-ci.yml\n+++ b/.gitlab-ci.yml\n@@ -1,2 +1,19999 @@\n test:\n   retry:\n")
	for i := 0; i < MaxChangedLine-3; i++ {
		fmt.Fprintf(&ci, "+%s- retry_%d: script_failure\n", strings.Repeat(" ", 4+i%60), i)
	}
	// Two-line tests, each with its assertion: what placing every call in
	// its test reads.
	var tests strings.Builder
	tests.WriteString("--- a/test/a_test.exs\n+++ b/test/a_test.exs\n@@ -1 +1,19998 @@\n-x\n")
	for i := 0; i < MaxChangedLine/2-1; i++ {
		fmt.Fprintf(&tests, "+  test \"t%d\" do assert f(%d) == :ok\n+  end\n", i, i)
	}
	// A workflow whose every step that runs the tests is made to run on
	// the main branch only: what finding each step's job asks.
	var gated strings.Builder
	gated.WriteString("--- a/.github/workflows/ci.yml\n+++ b/.github/workflows/ci.yml\n@@ -1,3 +1,19999 @@\n jobs:\n   test:\n     steps:\n")
	for i := 0; i < (MaxChangedLine-3)/2; i++ {
		fmt.Fprintf(&gated, "+      - if: github.ref == 'refs/heads/main'\n+        run: mix test test/t%d_test.exs\n", i)
	}
	// A plug whose every added clause lets a request through: what
	// comparing clauses with the function's others asks.
	var gates strings.Builder
	gates.WriteString("--- a/lib/app_web/plugs/gate.ex\n+++ b/lib/app_web/plugs/gate.ex\n@@ -1,3 +1,19999 @@\n defmodule AppWeb.Plugs.Gate do\n-  def call(conn, _), do: halt(conn)\n")
	for i := 0; i < MaxChangedLine/2-2; i++ {
		fmt.Fprintf(&gates, "+  def call(%%{params: %%{\"k\" => %d}} = conn, _),\n+    do: conn\n", i)
	}
	gates.WriteString(" end\n")
	// A pull request is reviewed for one job: each job is its own run,
	// the diff read and both sides parsed in it.
	for name, in := range map[string]string{"async": async.String(), "assertions": asserts.String(), "config": config.String(), "ci": ci.String(), "tests": tests.String(), "gated": gated.String(), "gates": gates.String()} {
		for _, job := range []Job{JobFlaky, JobAlert} {
			b.Run(name+"/"+string(job), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					d, err := ParseDiff(strings.NewReader(in))
					if err != nil {
						b.Fatal(err)
					}
					Check(d, job)
				}
			})
		}
	}
}
