package exunit

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The samples of versions_samples_test.go, raw and as GitHub Actions logs.

func TestEveryElixirVersionsLogIsRead(t *testing.T) {
	const retryCmd = "mix test || mix test --failed"
	b25 := "test/racy_b_test.exs:25"
	for _, c := range []struct {
		name, log, cmd string
		formats        []string // each run's
		flaky          []string
		passes         []string // the tests the log shows run and passing
		retried        int
	}{
		{"1.14, a real log", readLog(t, "fail_seed_1.txt"), "mix test", []string{Format114}, []string{b25}, []string{"test/racy_a_test.exs:14"}, 0},
		{"1.18, a parameterized failure and a message with a blank line", logParameterized, "mix test", []string{Format114},
			[]string{"test/hexpm/repo_test.exs:27", "test/hexpm/order_test.exs:12"}, nil, 0},
		{"1.19, a failure and an invalidated module", log119Fail, "mix test", []string{Format119}, []string{b25}, []string{"test/racy_a_test.exs:14"}, 0},
		{"1.19, all passed, one excluded", log119Pass, "mix test", []string{Format119}, nil, []string{b25}, 0},
		{"1.19, an in-job retry", logRetry119, retryCmd, []string{Format119, Format114}, []string{b25}, []string{b25}, 1},
		{"1.20, failures of three types", log120Fail, "mix test", []string{Format120}, []string{b25}, []string{"test/racy_a_test.exs:14"}, 0},
		{"1.20, all passed", log120Pass, "mix test", []string{Format120}, nil, []string{b25}, 0},
		{"1.20, an in-job retry", logRetry120, retryCmd, []string{Format120, Format120}, []string{b25}, []string{b25}, 1},
		{"1.20, repeated until it failed, then retried", logRepeat, "mix test --repeat-until-failure 3 || mix test --failed",
			[]string{Format120, Format120, Format120}, []string{b25}, []string{b25}, 1},
		{"1.20, a dry run", logDryRun, "mix test --dry-run", []string{""}, nil, nil, 0},
	} {
		for form, log := range map[string]string{"raw": c.log, "actions": actionsLog(c.log, c.cmd)} {
			t.Run(c.name+", "+form, func(t *testing.T) {
				rep, err := ParseLog(strings.NewReader(log))
				if err != nil {
					t.Fatal(err)
				}
				var formats, flaky []string
				for _, r := range rep.Runs {
					formats = append(formats, r.Format)
				}
				for _, f := range rep.Flaky() {
					ref, _ := f.Ref()
					flaky = append(flaky, ref.String())
				}
				if !reflect.DeepEqual(formats, c.formats) || !reflect.DeepEqual(flaky, c.flaky) {
					t.Fatalf("formats %q, flaky %q; want %q, %q\nruns %s", formats, flaky, c.formats, c.flaky, runsString(rep.Runs))
				}
				for _, p := range c.passes {
					ref, _ := ParseTestRef(p)
					if ok, why := rep.Passed(ref); !ok {
						t.Errorf("Passed(%s): %s", p, why)
					}
				}
				if got := rep.RetriedFlakes(); len(got) != c.retried {
					t.Errorf("%d retried flakes, want %d", len(got), c.retried)
				}
			})
		}
	}
}

func TestAParameterizedFailureKeepsItsLocation(t *testing.T) {
	rep, _ := ParseLog(strings.NewReader(actionsLog(logParameterized, "mix test")))
	if f := rep.Failures[0]; f.Parameters != "%{db: :mysql}" || f.Message[0] != "Assertion with == failed" {
		t.Errorf("%+v", f)
	}
	if f := rep.Failures[1]; !reflect.DeepEqual(f.Message, []string{"the rows came back out of order", "expected [1, 2], got [2, 1]", "code: assert rows == [1, 2], msg"}) {
		t.Errorf("the message after its blank line: %q", f.Message)
	}
}

func TestEachVersionsSummaryIsCounted(t *testing.T) {
	const finished = "Finished in 0.1 seconds (0.1s async, 0.00s sync)\n\n"
	for _, c := range []struct {
		log  string
		want Run // zero: no summary
	}{
		{"3 doctests, 12 tests, 1 failure, 2 skipped (1 excluded)", Run{Summary: true, Format: Format119, Doctests: 3, Tests: 12, Failures: 1, Excluded: 1, Skipped: 2}},
		{"3 tests, 0 failures (1 excluded)", Run{Summary: true, Format: Format119, Tests: 3, Excluded: 1}},
		{"0 tests, 0 failures (3 excluded)", Run{Summary: true, Format: Format119, Excluded: 3}},
		{"3 tests, 0 failures, 1 excluded (1 excluded)", Run{}},
		{"3 tests, 0 failures (excluded)", Run{}},
		{finished + "Result: 12/13 passed (3/3 doctests, 9/10 tests), 2 skipped, 1 excluded\nFailed: 1 test", Run{Summary: true, Format: Format120,
			Doctests: 3, Tests: 10, Failures: 1, Excluded: 1, Skipped: 2, Passed: 12, Total: 13,
			ByType: []TypeCount{{Type: "doctest", Passed: 3, Total: 3}, {Type: "test", Passed: 9, Total: 10, Failed: 1}}}},
		{finished + "Result: 7/8 passed\nFailed: 1 doctest", Run{Summary: true, Format: Format120, Doctests: 8, Failures: 1, Passed: 7, Total: 8,
			ByType: []TypeCount{{Type: "doctest", Passed: 7, Total: 8, Failed: 1}}}},
		{finished + "Result: 87 passed (70 tests, 14 properties, 3 features)", Run{Summary: true, Format: Format120, Tests: 70, Properties: 14, Passed: 87, Total: 87,
			ByType: []TypeCount{{Type: "test", Passed: 70, Total: 70}, {Type: "property", Passed: 14, Total: 14}, {Type: "features", Passed: 3, Total: 3}}}},
		{finished + "Result: 1 passed, 3 excluded", Run{Summary: true, Format: Format120, Tests: 1, Passed: 1, Total: 1, Excluded: 3}},
		{finished + "Result: 0 tests, 1 skipped", Run{Summary: true, Format: Format120, Skipped: 1}},
		{finished + "Result: 0 tests", Run{Summary: true, Format: Format120}},
		{finished + "Result: 11 passed (3 doctests, 8 tests), 2 invalid, 2 skipped, 1 excluded", Run{Summary: true, Format: Format120,
			Doctests: 3, Tests: 8, Invalid: 2, Skipped: 2, Excluded: 1, Passed: 11, Total: 11,
			ByType: []TypeCount{{Type: "doctest", Passed: 3, Total: 3}, {Type: "test", Passed: 8, Total: 8}}}},
		{finished + "Result: 7/8 passed\nFailed: 2 tests", Run{Summary: true, Format: Format120, Tests: 8, Failures: 1, Passed: 7, Total: 8}},
		{"Result: 3 passed", Run{}}, // not after "Finished in": another program's
		{finished + "Result: 3 tests", Run{}},
		{finished + "Result: 9/8 passed", Run{}},
		{finished + "Result: 5 passed (3 doctests, 3 tests)", Run{}},
		{finished + "Result: 5 passed (2 doctests, 3 tests", Run{}},
		{finished + "Result: 5 passed, 1 apples", Run{}},
		{finished + "Result: 5 passed,", Run{}},
	} {
		rep, _ := ParseLog(strings.NewReader(c.log + "\n"))
		var got Run
		if len(rep.Runs) > 0 {
			got = rep.Runs[0]
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q:\n got %s\nwant %s", c.log, runsString([]Run{got}), runsString([]Run{c.want}))
		}
	}
}

func TestRepeatUntilFailureRunsAreNumbered(t *testing.T) {
	rep, _ := ParseLog(strings.NewReader(actionsLog(logRepeat, "mix test --repeat-until-failure 3 || mix test --failed")))
	type seen struct {
		seed                           int64
		remaining, repetition, stepRun int
	}
	var got []seen
	for _, r := range rep.Runs {
		s := seen{seed: *r.Seed, repetition: r.Repetition, stepRun: r.StepRun, remaining: -1}
		if r.RemainingRuns != nil {
			s.remaining = *r.RemainingRuns
		}
		got = append(got, s)
	}
	want := []seen{{958114, 3, 1, 0}, {12345, 2, 2, 0}, {99, -1, 0, 1}}
	if !reflect.DeepEqual(got, want) || rep.Failures[0].Invocation != 1 {
		t.Fatalf("runs %+v, want %+v", got, want)
	}
}

func TestADryRunShowsNoCompletedRun(t *testing.T) {
	rep, _ := ParseLog(strings.NewReader(logDryRun))
	ref, _ := ParseTestRef("test/racy_b_test.exs:25")
	if ok, why := rep.Passed(ref); ok || len(rep.Runs) != 1 || rep.Runs[0].Summary || !strings.Contains(why, "no completed test run") {
		t.Fatalf("passed %v (%s): %s", ok, why, runsString(rep.Runs))
	}
}

func TestMostlyFailedOnEveryVersion(t *testing.T) {
	const finished = "Finished in 0.1 seconds\n\n"
	for _, c := range []struct {
		log  string
		want bool
	}{
		{"40 tests, 10 failures, 10 excluded, 10 skipped", false},
		{"40 tests, 11 failures, 10 excluded, 10 skipped", true},
		{"30 tests, 10 failures, 10 skipped (10 excluded)", false}, // 1.19: the 30 leave the excluded out
		{"30 tests, 11 failures, 10 skipped (10 excluded)", true},
		{finished + "Result: 10/20 passed, 10 skipped, 10 excluded\nFailed: 10 tests", false},
		{finished + "Result: 9/20 passed, 10 skipped, 10 excluded\nFailed: 11 tests", true},
		{finished + "Result: 0 tests, 12 invalid", true},
	} {
		rep, _ := ParseLog(strings.NewReader(c.log + "\n"))
		if got := rep.MostlyFailed(); got != c.want {
			t.Errorf("%q: mostly failed %v, want %v", c.log, got, c.want)
		}
	}
}

// actionsLog is raw as a GitHub Actions job log, the way
// testdata/gha_wrap.sh makes one: a byte-order mark, a timestamp on every
// line, the step's group, and setup-beam's elixir-mixTestFailure problem
// matcher, which writes a failure's location again after "##[error]".
func actionsLog(raw, cmd string) string {
	var b strings.Builder
	at := time.Date(2026, 10, 2, 10, 12, 40, 0, time.UTC)
	write := func(line string) {
		b.WriteString(at.Format("2006-01-02T15:04:05.0000000Z ") + line + "\n")
		at = at.Add(1234567 * time.Nanosecond)
	}
	b.WriteString("\ufeff")
	for _, l := range []string{"##[group]Run " + cmd, cmd, "shell: /usr/bin/bash -e {0}", "env:", "  MIX_ENV: test", "##[endgroup]"} {
		write(l)
	}
	afterHeader := false
	for _, l := range strings.Split(strings.TrimSuffix(raw, "\n"), "\n") {
		if afterHeader && matcherLocation.MatchString(l) {
			l, afterHeader = "##[error]"+l, false
		} else {
			afterHeader = matcherHeader.MatchString(l)
		}
		write(l)
	}
	write("Post job cleanup.")
	return b.String()
}

var (
	matcherHeader   = regexp.MustCompile(`^\s*\d+\) (.*)$`)
	matcherLocation = regexp.MustCompile(`^\s+(.*):(\d+)$`)
)

func readLog(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata/logs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
