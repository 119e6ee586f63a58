package exunit

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// The logs of testdata/generate_ci.sh: real `mix test` output in the
// shapes CI jobs give it (see testdata/README.md, "CI shapes").

func TestParseLogReadsCIShapes(t *testing.T) {
	props := []string{"property test/prop_test.exs:5", "property test/prop_test.exs:9", "test test/prop_test.exs:17", "test test/prop_test.exs:21"}
	retried := []string{"test test/racy_b_test.exs:25"}
	beta := []string{"test apps/beta/test/beta_test.exs:9"}
	for _, c := range []struct {
		file        string
		runs        int
		flaky       []string // kind and ref of each failure that names a test, in order
		failures    int      // all failure blocks, when more than the flaky ones
		lastFailure string   // the ref of the last one, for long lists
	}{
		{file: "properties_fail.txt", runs: 1, flaky: props},
		{file: "gha_pm_properties_fail.txt", runs: 1, flaky: props},
		{file: "absolute_runner_fail.txt", runs: 1, flaky: props},
		{file: "gha_pm_absolute_runner_fail.txt", runs: 1, flaky: props},
		{file: "absolute_container_fail.txt", runs: 1, flaky: props},
		{file: "absolute_unknown_fail.txt", runs: 1, failures: 4},
		{file: "many_failures.txt", runs: 1, failures: 150, lastFailure: "test/many_test.exs:600"},
		{file: "gha_pm_many_failures.txt", runs: 1, failures: 150, lastFailure: "test/many_test.exs:600"},
		{file: "gha_pm_fail_seed_1.txt", runs: 1, flaky: retried},
		{file: "gha_pm_color_fail_seed_1.txt", runs: 1, flaky: []string{"test test/racy_a_test.exs:23"}},
		{file: "gha_nopm_fail_seed_33.txt", runs: 1, flaky: []string{"test test/racy_b_test.exs:25", "test test/racy_b_test.exs:20"}},
		{file: "gha_pm_umbrella_fail.txt", runs: 2, flaky: beta},
		{file: "umbrella_cd_fail.txt", runs: 1, flaky: []string{"test test/beta_test.exs:9"}},
		{file: "gha_pm_umbrella_cd_fail.txt", runs: 1, flaky: beta},
		{file: "gha_pm_compile_error.txt", runs: 1},
		{file: "in_job_retry.txt", runs: 2, flaky: retried},
		{file: "gha_pm_in_job_retry.txt", runs: 2, flaky: retried},
		// generate_modern.sh: the same logs as Elixir 1.18 to 1.20 print them
		{file: "handmade_1_18_params_fail.txt", runs: 1, flaky: retried},
		{file: "gha_pm_handmade_1_18_params_fail.txt", runs: 1, flaky: retried},
		{file: "gha_pm_handmade_1_18_pass.txt", runs: 1},
		{file: "handmade_1_19_fail.txt", runs: 1, flaky: retried},
		{file: "gha_pm_handmade_1_19_pass.txt", runs: 1},
		{file: "gha_pm_handmade_1_20_fail.txt", runs: 1, flaky: retried},
		{file: "handmade_1_20_pass.txt", runs: 1},
		{file: "gha_pm_handmade_1_20_in_job_retry.txt", runs: 2, flaky: retried},
	} {
		t.Run(c.file, func(t *testing.T) {
			rep := parseFile(t, c.file)
			var got []string
			for _, f := range rep.Flaky() {
				ref, _ := f.Ref()
				got = append(got, f.Kind+" "+ref.String())
			}
			if c.lastFailure == "" && strings.Join(got, ",") != strings.Join(c.flaky, ",") {
				t.Errorf("flaky tests:\n got %q\nwant %q", got, c.flaky)
			}
			if n := max(c.failures, len(c.flaky)); len(rep.Failures) != n || len(rep.Runs) != c.runs {
				t.Errorf("%d failures in %d runs, want %d in %d", len(rep.Failures), len(rep.Runs), n, c.runs)
			}
			if c.lastFailure == "" {
				return
			}
			if last := rep.Failures[len(rep.Failures)-1]; last.File+":"+strconv.Itoa(last.Line) != c.lastFailure {
				t.Errorf("last failure at %s:%d", last.File, last.Line)
			}
		})
	}
}

func TestParseLogDetails(t *testing.T) {
	rep := parseFile(t, "gha_pm_properties_fail.txt")
	if r := rep.Runs[0]; !r.Summary || r.Properties != 2 || r.Tests != 3 || r.Failures != 4 || r.Seed == nil || *r.Seed != 0 {
		t.Errorf("run %+v", r)
	}
	if f := rep.Failures[2]; f.Test != "name with\na newline" || f.Module != "PropTest" || f.Message[0] != "Assertion with == failed" {
		t.Errorf("the name printed across lines: %+v", f)
	}
	// The assertion message holds a header-shaped line and its location.
	if f := rep.Failures[3]; len(f.Message) < 3 || f.Message[1] != "1) test fake one (FakeTest)" {
		t.Errorf("the message with a header inside: %+v", f)
	}
	for _, f := range parseFile(t, "absolute_unknown_fail.txt").Failures {
		if f.File != "/opt/elsewhere/ci/test/prop_test.exs" || !strings.Contains(f.Unusable, "absolute location") {
			t.Errorf("an absolute location nobody can place: %+v", f)
		}
	}
	if r := parseFile(t, "many_failures.txt").Runs[0]; r.Tests != 150 || r.Failures != 150 {
		t.Errorf("run %+v", r)
	}
}

func TestParseLogLines(t *testing.T) {
	for _, c := range []struct {
		name, log, want string // want: the refs read, or "-" for none
	}{
		{"a counter in its four columns", "  1) test a (M)\n     test/a_test.exs:3\n", "test/a_test.exs:3"},
		{"a counter of two digits", " 10) test a (M)\n     test/a_test.exs:3\n", "test/a_test.exs:3"},
		{"a counter of four digits", "1000) test a (M)\n     test/a_test.exs:3\n", "test/a_test.exs:3"},
		{"a counter misaligned", "   1) test a (M)\n     test/a_test.exs:3\n", "-"},
		{"a matcher's warning prefix", "  1) test a (M)\n##[warning]     test/a_test.exs:3\n", "test/a_test.exs:3"},
		{"a runner group ends the block", "  1) test a (M)\n##[endgroup]\n     test/b_test.exs:3\n", "-"},
		{"a header without a module", "  1) test a\n     test/a_test.exs:3\n", "-"},
		{"a name on three lines", "  1) test a\nb\nc (M)\n     test/a_test.exs:3\n", "test/a_test.exs:3"},
		{"a location that is no test file", "  1) test a (M)\n     lib/a.ex:3\n", "-"},
		{"a location after the message", "  1) test a (M)\n     ** (RuntimeError) boom\n     test/a_test.exs:3\n", "-"},
		{"a step that cd-ed into an app", "##[group]Run cd apps/web && mix test\n##[endgroup]\n  1) test a (M)\n     test/a_test.exs:3\n", "apps/web/test/a_test.exs:3"},
		{"a step that cd-ed upwards", "##[group]Run cd ../x && mix test\n##[endgroup]\n  1) test a (M)\n     test/a_test.exs:3\n", "-"},
		{"a step that cd-ed into the checkout by its path", "##[group]Run cd /home/runner/work/x/x/apps/web; mix test\n  1) test a (M)\n     test/a_test.exs:3\n", "apps/web/test/a_test.exs:3"},
		{"the next step cd-s nowhere", "##[group]Run cd apps/web && mix test\n##[group]Run mix test\n  1) test a (M)\n     test/a_test.exs:3\n", "test/a_test.exs:3"},
		{"the checkout's own directory", "Working directory is '/srv/ci/x'\n  1) test a (M)\n     /srv/ci/x/test/a_test.exs:3\n", "test/a_test.exs:3"},
		{"a CircleCI checkout", "  1) test a (M)\n     /home/circleci/project/apps/b/test/a_test.exs:3\n", "apps/b/test/a_test.exs:3"},
		{"a macOS runner", "  1) test a (M)\n     /Users/runner/work/x/x/test/a_test.exs:3\n", "test/a_test.exs:3"},
		{"a Windows runner", "  1) test a (M)\n     d:/a/x/x/test/a_test.exs:3\n", "test/a_test.exs:3"},
		{"another Windows drive", "  1) test a (M)\n     c:/work/x/test/a_test.exs:3\n", "-"},
		{"a self-hosted runner", "  1) test a (M)\n     /home/ci/actions-runner/_work/x/x/test/a_test.exs:3\n", "test/a_test.exs:3"},
		{"one project after its dependencies", "==> jason\nGenerated jason app\n==> hexpm\n  1) test a (M)\n     test/a_test.exs:3\n\n1 test, 1 failure\n", "test/a_test.exs:3"},
		{"an umbrella printing app-relative locations", "==> a\n  1) test a (M)\n     test/a_test.exs:3\n\n1 test, 1 failure\n==> b\n1 test, 0 failures\n", "apps/a/test/a_test.exs:3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, err := ParseLog(strings.NewReader(c.log))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range rep.Flaky() {
				ref, _ := f.Ref()
				got = append(got, ref.String())
			}
			if g := strings.Join(got, ","); g != c.want && !(g == "" && c.want == "-") {
				t.Fatalf("read %q, want %q", g, c.want)
			}
		})
	}
}

func TestSummaryLines(t *testing.T) {
	for _, c := range []struct {
		line string
		want Run // zero: not a summary
	}{
		{"3 doctests, 13 tests, 1 failure, 1 excluded, 2 skipped", Run{Summary: true, Format: Format114, Doctests: 3, Tests: 13, Failures: 1, Excluded: 1, Skipped: 2}},
		{"1 doctest, 3 properties, 1 test, 3 failures", Run{Summary: true, Format: Format114, Doctests: 1, Properties: 3, Tests: 1, Failures: 3}},
		{"1 property, 0 failures", Run{Summary: true, Format: Format114, Properties: 1}},
		{"2 tests, 0 failures, 2 invalid", Run{Summary: true, Format: Format114, Tests: 2, Invalid: 2}},
		{"4 features, 2 tests, 1 failure", Run{Summary: true, Format: Format114, Tests: 2, Failures: 1}},
		{"2 tests, 1 failure, 3 apples", Run{}},
		{"1 failure, 2 tests", Run{}},
		{"12 tests passed", Run{}},
		{"2019 tests, ", Run{}},
	} {
		rep, _ := ParseLog(strings.NewReader(c.line + "\n"))
		var got Run
		if len(rep.Runs) > 0 {
			got = rep.Runs[0]
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: got %+v, want %+v", c.line, got, c.want)
		}
	}
}

func TestMostlyFailed(t *testing.T) {
	if !parseFile(t, "many_failures.txt").MostlyFailed() {
		t.Error("150 of 150 failed: mostly failed")
	}
	for _, f := range []string{"fail_seed_33.txt", "gha_pm_properties_fail.txt", "setup_all_fail.txt"} {
		if parseFile(t, f).MostlyFailed() {
			t.Errorf("%s: a few failures are not an outage", f)
		}
	}
}

func parseFile(t *testing.T, name string) Report {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata/logs", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := ParseLog(f)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}
