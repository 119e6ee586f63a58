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
