package evidence

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// want is one expected finding: rule, severity and line (0: any line).
type want struct {
	rule string
	sev  Severity
	line int
}

// TestRulesOnRealShapedFixes runs each job's rules over diffs shaped like
// real fixes in hexpm (testdata/<job>/*.diff, as git show prints them)
// and checks every finding, no more, no fewer.
func TestRulesOnRealShapedFixes(t *testing.T) {
	cases := map[string][]want{
		"flaky/sleep_added.diff":       {{"sleep-added", Concern, 42}},
		"flaky/sleep_lengthened.diff":  {{"sleep-lengthened", Concern, 90}},
		"flaky/real_fix_sync.diff":     nil,
		"flaky/receive_timeout.diff":   {{"receive-timeout-raised", Concern, 18}},
		"flaky/receive_attribute.diff": {{"timeout-attribute-raised", Concern, 4}},
		"flaky/task_await.diff":        {{"call-timeout-raised", Concern, 32}, {"call-timeout-raised", Concern, 33}},
		"flaky/tag_timeout.diff":       {{"test-timeout-raised", Concern, 12}},
		"flaky/retry_helper.diff": {{"retry-loop", Concern, 63}, {"rescue-around-assertion", Concern, 65}, {"sleep-added", Concern, 68},
			{"retry-loop", Concern, 69}, {"retry-loop", Concern, 42}},
		"flaky/rescue_assertion.diff": {{"rescue-around-assertion", Concern, 23}, {"rescue-around-assertion", Concern, 25}},
		"flaky/skip_tag.diff":         {{"test-skipped", Concern, 121}},
		"flaky/exclude_helper.diff":   {{"tag-excluded", Concern, 2}},
		"flaky/exclude_ci.diff":       {{"tag-excluded", Concern, 51}},
		"flaky/ci_retry_failed.diff":  {{"ci-retry", Concern, 62}},
		"flaky/ci_or_true.diff":       {{"failure-ignored", Concern, 64}, {"failure-ignored", Concern, 65}, {"failure-ignored", Concern, 6}},
		"flaky/deleted_test.diff":     {{"test-deleted", Concern, 33}, {"assertion-deleted", Concern, 37}},
		"flaky/weakened.diff":         {{"assertion-weakened", Concern, 56}, {"assertion-weakened", Concern, 57}},
		"flaky/async_global.diff":     {{"async-disabled", Note, 2}},
		"flaky/async_none.diff":       {{"async-disabled", Concern, 2}},
		"flaky/ecto_allow_clean.diff": nil,

		"alert/plug_removed.diff":        {{"plug-removed", Concern, 4}},
		"alert/plug_narrowed.diff":       {{"plug-changed", Concern, 5}},
		"alert/pipe_through.diff":        {{"pipeline-changed", Concern, 89}},
		"alert/permissions_module.diff":  {{"authorization-changed", Concern, 41}},
		"alert/owner_check_removed.diff": {{"check-removed", Concern, 113}},
		"alert/default_changed.diff":     {{"default-changed", Concern, 21}},
		"alert/nil_guard_clean.diff":     nil,
		"alert/test_deleted.diff":        {{"test-deleted", Concern, 1}},
	}
	files, _ := filepath.Glob("testdata/*/*.diff")
	if len(files) != len(cases) {
		t.Errorf("%d samples, %d cases: every sample needs its expected findings", len(files), len(cases))
	}
	for name, expected := range cases {
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			d, err := ParseDiff(f)
			if err != nil {
				t.Fatal(err)
			}
			job := Job(strings.Split(name, "/")[0])
			r := Check(d, job)
			var got, exp []string
			for _, f := range r.Findings {
				got = append(got, fmt.Sprintf("%s %s %d", f.Rule, f.Severity, f.Line))
				if f.File == "" || f.Why == "" || (f.Line != 0 && f.Text == "") {
					t.Errorf("finding without its place or reason: %+v", f)
				}
			}
			for _, w := range expected {
				exp = append(exp, fmt.Sprintf("%s %s %d", w.rule, w.sev, w.line))
			}
			sort.Strings(got)
			sort.Strings(exp)
			if strings.Join(got, "\n") != strings.Join(exp, "\n") {
				t.Errorf("findings:\n%s\nwant:\n%s\n%+v", strings.Join(got, "\n"), strings.Join(exp, "\n"), r.Findings)
			}
			verdict := VerdictClean
			for _, w := range expected {
				if w.sev == Concern {
					verdict = VerdictConcern
					break
				}
				verdict = VerdictNote
			}
			if r.Verdict != verdict {
				t.Errorf("verdict %s, want %s", r.Verdict, verdict)
			}
		})
	}
}

// TestWhatTheRulesLeaveAlone: lines that look like a disguise but are not
// one, each of which a careless rule would flag.
func TestWhatTheRulesLeaveAlone(t *testing.T) {
	hunk := func(path string, lines ...string) string {
		return "--- a/" + path + "\n+++ b/" + path + "\n@@ -1,20 +1,20 @@\n" + strings.Join(lines, "\n") + "\n"
	}
	for _, c := range []struct {
		name string
		job  Job
		diff string
	}{
		{"a sleep removed", JobFlaky, hunk("test/a_test.exs", "-    Process.sleep(100)", "+    assert_receive {:done, ^ref}")},
		{"a sleep shortened", JobFlaky, hunk("test/a_test.exs", "-    Process.sleep(500)", "+    Process.sleep(10)")},
		{"a sleep in a comment or a string", JobFlaky, hunk("test/a_test.exs", "+    # no Process.sleep(100) here: we wait for the message", `+    assert log =~ "Process.sleep(100)"`)},
		{"a receive timeout shortened", JobFlaky, hunk("test/a_test.exs", "-    assert_receive :ok, 1000", "+    assert_receive :ok, 200")},
		{"a new assert_receive at the default", JobFlaky, hunk("test/a_test.exs", "+    assert_receive {:indexed, ^id}")},
		{"a tag that skips nothing", JobFlaky, hunk("test/a_test.exs", "+  @tag :integration", "+  @tag capture_log: true")},
		{"a rescue in library code", JobFlaky, hunk("lib/hexpm/store.ex", "+  rescue", "+    e in File.Error -> {:error, e}")},
		{"an exclude that was already there", JobFlaky, hunk("test/test_helper.exs", "-ExUnit.start(exclude: [:integration])", "+ExUnit.start(exclude: [:integration], capture_log: true)")},
		{"a test renamed", JobFlaky, hunk("test/a_test.exs", `-  test "it works" do`, `+  test "publishing twice keeps one release" do`)},
		{"an assertion made stricter", JobFlaky, hunk("test/a_test.exs", "-    assert release.version", `+    assert release.version == Version.parse!("1.0.0")`)},
		{"async turned on", JobFlaky, hunk("test/a_test.exs", "-  use Hexpm.DataCase", "+  use Hexpm.DataCase, async: true")},
		{"a Task.await at the default", JobFlaky, hunk("test/a_test.exs", "-    Task.await(task, 5000)", "+    Task.await(task)")},
		{"a plug added", JobAlert, hunk("lib/hexpm_web/controllers/api/key_controller.ex", "+  plug :authorize, [domain: \"api\", resource: \"write\"] when action in [:create]")},
		{"a plug moved", JobAlert, "--- a/lib/hexpm_web/router.ex\n+++ b/lib/hexpm_web/router.ex\n@@ -1,6 +1,6 @@\n-  plug :fetch_session\n   plug :accepts, [\"html\"]\n+  plug :fetch_session\n"},
		{"authorization code in a test", JobAlert, hunk("test/hexpm/permissions_test.exs", "+    assert Permissions.organization_access(org, user, \"read\")")},
		{"a default kept, the call reformatted", JobAlert, hunk("lib/hexpm/releases.ex", "-    replace? = Keyword.get(opts, :replace, false)", "+    replace? = Keyword.get(opts,  :replace, false)")},
		{"an owner check rewritten, not removed", JobAlert, hunk("lib/hexpm/releases.ex", "-    if Packages.owner?(package, user) do", "+    if user && Packages.owner?(package, user) do")},
		{"a flaky rule on an alert fix", JobAlert, hunk("test/a_test.exs", "+    Process.sleep(100)")},
		{"names that start like a retry", JobFlaky, hunk("test/a_test.exs", "+  alias Hexpm.Polls", "+    poll = insert(:poll)", "+    assert job.retry_count == 1")},
		{"a refutation made stricter", JobFlaky, hunk("test/a_test.exs", "-    refute_receive {:event, :a}", "+    refute_receive {:event, _}", "-    refute x == 1", "+    refute x")},
		{"a short refute replaced by a default assert_receive", JobFlaky, hunk("test/a_test.exs", "-    refute_receive :stale, 10", "+    assert_receive {:done, ^ref}")},
		{"a sleep moved to another place", JobFlaky, "--- a/test/a_test.exs\n+++ b/test/a_test.exs\n@@ -1,2 +1,1 @@\n-    Process.sleep(10)\n     :ok\n@@ -30,1 +29,2 @@\n     :ok\n+    Process.sleep(10)\n"},
		{"a new test module that runs alone", JobFlaky, "--- /dev/null\n+++ b/test/new_test.exs\n@@ -0,0 +1,2 @@\n+defmodule NewTest do\n+  use Hexpm.DataCase, async: false\n"},
		{"a pipeline tightened", JobAlert, hunk("lib/hexpm_web/router.ex", "-    pipe_through [:browser]", "+    pipe_through [:browser, :require_admin]")},
		{"a pipeline moved", JobAlert, "--- a/lib/hexpm_web/router.ex\n+++ b/lib/hexpm_web/router.ex\n@@ -1,2 +1,1 @@\n-    pipe_through :api\n     get \"/\", A, :a\n@@ -9,1 +8,2 @@\n     get \"/b\", B, :b\n+    pipe_through :api\n"},
		{"a command that may fail, not the tests", JobFlaky, hunk(".github/workflows/ci.yml", "+        run: mix deps.unlock --check-unused || true", "+        continue-on-error: ${{ matrix.experimental }}")},
		{"a forgiving line already there", JobFlaky, hunk(".github/workflows/ci.yml", "-        run: mix test || true", "+        run: mix test --cover || true", "-        continue-on-error: true", "+        continue-on-error: true")},
		{"a mix test --failed target for developers", JobFlaky, hunk("Makefile", "+test-failed:", "+	mix test --failed")},
		{"a forgiving line in a comment", JobFlaky, hunk(".github/workflows/ci.yml", "+        # do not write mix test || true here")},
		{"continue-on-error turned off", JobFlaky, hunk(".github/workflows/ci.yml", "-        continue-on-error: true", "+        continue-on-error: false")},
		{"a default of another key", JobAlert, hunk("lib/hexpm_web/controllers/page.ex", `-    page = Map.get(params, "page", 1)`, `+    sort = Map.get(params, "sort", :asc)`)},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := ParseDiff(strings.NewReader(c.diff))
			if err != nil {
				t.Fatal(err)
			}
			if r := Check(d, c.job); r.Verdict != VerdictClean {
				t.Fatalf("%s: %+v", r.Verdict, r.Findings)
			}
		})
	}
}

// TestDisguisesWrittenOtherwise: the same disguises as the samples, in the
// other ways Elixir lets them be written.
func TestDisguisesWrittenOtherwise(t *testing.T) {
	hunk := func(path string, lines ...string) string {
		return "--- a/" + path + "\n+++ b/" + path + "\n@@ -1,20 +1,20 @@\n" + strings.Join(lines, "\n") + "\n"
	}
	for _, c := range []struct {
		name, rule string
		job        Job
		diff       string
	}{
		{"a sleep of a variable", "sleep-added", JobFlaky, hunk("test/a_test.exs", "+    Process.sleep(delay)")},
		{"a piped sleep", "sleep-added", JobFlaky, hunk("test/a_test.exs", "+    100 |> Process.sleep()")},
		{"a sleep without parentheses", "sleep-added", JobFlaky, hunk("test/a_test.exs", "+    Process.sleep 100")},
		{"a piped await", "call-timeout-raised", JobFlaky, hunk("test/a_test.exs", "-    task |> Task.await()", "+    task |> Task.await(:infinity)")},
		{"a piped call", "call-timeout-raised", JobFlaky, hunk("test/a_test.exs", "+    pid |> GenServer.call(:sync, 60_000)")},
		{"a receive timeout on its own line", "receive-timeout-raised", JobFlaky, hunk("test/a_test.exs",
			"-    assert_receive {:done, %{id: ^id,", "-      status: :ok}}", "+    assert_receive {:done, %{id: ^id,", "+      status: :ok}},", "+      5_000")},
		{"a skip among other tags", "test-skipped", JobFlaky, hunk("test/a_test.exs", `+  @tag capture_log: true, skip: "flaky"`)},
		{"a timeout among other tags", "test-timeout-raised", JobFlaky, hunk("test/a_test.exs", "+  @tag capture_log: true, timeout: 120_000")},
		{"an exclusion over lines", "tag-excluded", JobFlaky, hunk("test/test_helper.exs", "-ExUnit.start()", "+ExUnit.start(", "+  exclude: [", "+    :flaky", "+  ]", "+)")},
		{"an exclusion in a mix alias", "tag-excluded", JobFlaky, hunk("mix.exs", `-      test: ["ecto.create --quiet", "test"]`, `+      test: ["ecto.create --quiet", "test --exclude flaky"]`)},
		{"a test file renamed out of mix test's sight", "test-deleted", JobFlaky, "diff --git a/test/a_test.exs b/test/a_test.exs.bak\nsimilarity index 100%\nrename from test/a_test.exs\nrename to test/a_test.exs.bak\n"},
		{"another assertion macro deleted", "assertion-deleted", JobFlaky, hunk("test/a_test.exs", "-    assert_enqueued worker: Hexpm.Worker", "     :ok")},
		{"a CI script that exits 0", "failure-ignored", JobFlaky, hunk("bin/ci", "-mix test", "+mix test; exit 0")},
		{"coveralls forgiven", "failure-ignored", JobFlaky, hunk(".github/workflows/test.yml", "+      - run: MIX_ENV=test mix coveralls.github || :")},
		{"a Makefile recipe whose failure make ignores", "failure-ignored", JobFlaky, hunk("Makefile", "-	mix test", "+	-mix test")},
		{"a retry action", "ci-retry", JobFlaky, hunk(".github/workflows/ci.yml", "+      - uses: nick-fields/retry@v3", "+        with:", "+          command: mix test")},
		{"the tests run twice in a script", "ci-retry", JobFlaky, hunk("scripts/test.sh", "-mix test", "+mix test || MIX_ENV=test mix test --failed")},
		{"a GitLab job allowed to fail", "failure-ignored", JobFlaky, hunk(".gitlab-ci.yml", "   test:", "+    allow_failure: true")},
		{"an exclusion in GitLab CI", "tag-excluded", JobFlaky, hunk(".gitlab-ci.yml", "-    - mix test", "+    - mix test --exclude flaky")},
		{"a plug moved and narrowed", "plug-changed", JobAlert, "--- a/lib/hexpm_web/controllers/key_controller.ex\n+++ b/lib/hexpm_web/controllers/key_controller.ex\n@@ -1,3 +1,2 @@\n-  plug :authenticate when action in [:new, :create, :delete]\n   use HexpmWeb, :controller\n@@ -20,2 +19,3 @@\n   def x, do: 1\n+  plug :authenticate when action in [:new]\n"},
		{"a plug given another role", "plug-changed", JobAlert, hunk("lib/hexpm_web/router.ex", `-    plug :require_role, "admin"`, `+    plug :require_role, "guest"`)},
		{"a default string changed", "default-changed", JobAlert, hunk("lib/hexpm/accounts.ex", `-    role = Keyword.get(opts, :role, "viewer")`, `+    role = Keyword.get(opts, :role, "editor")`)},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := ParseDiff(strings.NewReader(c.diff))
			if err != nil {
				t.Fatal(err)
			}
			r := Check(d, c.job)
			for _, f := range r.Findings {
				if f.Rule == c.rule {
					return
				}
			}
			t.Fatalf("no %s: %+v", c.rule, r.Findings)
		})
	}
}
