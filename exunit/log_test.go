package exunit

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// The logs under testdata/logs are real `mix test` output unless their
// name starts with handmade_ (see testdata/README.md).

type wantFailure struct {
	kind, ref, test, module, message string
}

func TestParseLog(t *testing.T) {
	std := Run{Summary: true, Format: Format114, Doctests: 3, Tests: 13, Failures: 1, Excluded: 1, Skipped: 2}
	withSeed := func(r Run, seed int64) Run { r.Seed = &seed; return r }
	withFailures := func(r Run, n int) Run { r.Failures = n; return r }
	aAfterWork := wantFailure{KindTest, "test/racy_a_test.exs:27", "put_env/3 keeps mode a after work", "RacyATest", "left:  :b"}
	bAfterWork := wantFailure{KindTest, "test/racy_b_test.exs:25", "get_env/2 sees mode b after work", "RacyBTest", "mode was clobbered by another async test"}
	cases := []struct {
		file     string
		runs     []Run
		failures []wantFailure
		compile  bool
	}{
		{"pass_seed_2.txt", []Run{withSeed(withFailures(std, 0), 2)}, nil, false},
		{"fail_seed_1.txt", []Run{withSeed(std, 1)}, []wantFailure{bAfterWork}, false},
		{"fail_seed_4.txt", []Run{withSeed(std, 4)}, []wantFailure{aAfterWork}, false},
		{"fail_seed_8.txt", []Run{withSeed(std, 8)}, []wantFailure{{KindTest, "test/racy_a_test.exs:14", "mode a first", "RacyATest", "Assertion with == failed"}}, false},
		{"fail_seed_33.txt", []Run{withSeed(withFailures(std, 2), 33)}, []wantFailure{bAfterWork, {KindTest, "test/racy_b_test.exs:20", "get_env/2 sees mode b", "RacyBTest", "right: :b"}}, false},
		{"color_fail_seed_1.txt", []Run{withSeed(std, 1)}, []wantFailure{{KindTest, "test/racy_a_test.exs:23", "put_env/3 keeps mode a", "RacyATest", "left:  :b"}}, false},
		{"gha_color_fail_seed_1.txt", []Run{withSeed(std, 1)}, []wantFailure{{KindTest, "test/racy_a_test.exs:23", "put_env/3 keeps mode a", "RacyATest", "left:  :b"}}, false},
		{"doctest_fail.txt", []Run{withSeed(withFailures(std, 2), 8)}, []wantFailure{
			{KindDoctest, "test/racy_doc_test.exs:3", "Racy.parse_mode/1 (3)", "RacyDocTest", `** (ArgumentError) unknown mode: "a"`},
			{KindDoctest, "test/racy_doc_test.exs:3", "Racy.greet/1 (2)", "RacyDocTest", "Doctest failed"},
		}, false},
		{"trace_doctest_fail_seed_7.txt", []Run{withSeed(withFailures(std, 2), 7)}, []wantFailure{
			{KindDoctest, "test/racy_doc_test.exs:3", "Racy.greet/1 (2)", "RacyDocTest", "Doctest failed"},
			{KindDoctest, "test/racy_doc_test.exs:3", "Racy.parse_mode/1 (3)", "RacyDocTest", "unknown mode"},
		}, false},
		{"setup_all_fail.txt", []Run{func() Run { r := withSeed(withFailures(std, 0), 9); r.Invalid = 2; return r }()}, []wantFailure{
			{KindSetupAll, "", "", "RacySetupAllTest", "** (RuntimeError) setup_all exploded"},
		}, false},
		{"setup_all_and_test_fail_seed_1.txt", []Run{func() Run { r := withSeed(std, 1); r.Invalid = 2; return r }()}, []wantFailure{
			bAfterWork, {KindSetupAll, "", "", "RacySetupAllTest", "setup_all exploded"},
		}, false},
		{"two_invocations.txt", []Run{withSeed(std, 1001), withSeed(std, 1002)}, []wantFailure{bAfterWork, bAfterWork}, false},
		{"gha_two_invocations.txt", []Run{withSeed(std, 1001), withSeed(std, 1002)}, []wantFailure{bAfterWork, bAfterWork}, false},
		{"umbrella_fail.txt", []Run{
			withSeed(Run{Summary: true, Format: Format114, Tests: 2, Failures: 1}, 42),
			withSeed(Run{Summary: true, Format: Format114, Doctests: 1, Tests: 1}, 42),
		}, []wantFailure{{KindTest, "apps/beta/test/beta_test.exs:9", "words/1 keeps punctuation (always fails)", "BetaTest", `left:  ["a,", "b"]`}}, false},
		{"compile_error.txt", []Run{{CompileError: true}}, nil, true},
		{"gha_compile_error.txt", []Run{{CompileError: true}}, nil, true},
		{"compile_error_syntax.txt", []Run{{CompileError: true}}, nil, true},
		{"compile_error_test_file.txt", []Run{{CompileError: true}}, []wantFailure{bAfterWork}, true},
		{"handmade_1_17_seed_fail.txt", []Run{func() Run { r := withSeed(std, 1); r.MaxCases = 4; return r }()}, []wantFailure{bAfterWork}, false},
		{"handmade_cr_overwrite.txt", []Run{withSeed(std, 1)}, []wantFailure{bAfterWork}, false},
		{"gha_fail_seed_1.txt", []Run{withSeed(std, 1)}, []wantFailure{bAfterWork}, false},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			rep := parseFile(t, c.file)
			for i := range rep.Runs { // step and app: reruns_test.go's
				rep.Runs[i].Step, rep.Runs[i].StepRun, rep.Runs[i].App = "", 0, ""
			}
			if !reflect.DeepEqual(rep.Runs, c.runs) {
				t.Errorf("runs:\n got %s\nwant %s", runsString(rep.Runs), runsString(c.runs))
			}
			if len(rep.Failures) != len(c.failures) {
				t.Fatalf("%d failures, want %d: %+v", len(rep.Failures), len(c.failures), rep.Failures)
			}
			for i, w := range c.failures {
				g := rep.Failures[i]
				ref := ""
				if r, ok := g.Ref(); ok {
					ref = r.String()
				}
				if g.Kind != w.kind || ref != w.ref || g.Test != w.test || g.Module != w.module || !strings.Contains(strings.Join(g.Message, "\n"), w.message) {
					t.Errorf("failure %d = %+v (ref %q), want %+v", i, g, ref, w)
				}
				if len(g.Message) > MaxMessageLines {
					t.Errorf("failure %d keeps %d message lines", i, len(g.Message))
				}
			}
			if rep.CompileErrorOnly() != c.compile {
				t.Errorf("CompileErrorOnly = %v", rep.CompileErrorOnly())
			}
			if c.compile && len(rep.Flaky()) != 0 {
				t.Errorf("a run that did not compile yields flaky candidates: %+v", rep.Flaky())
			}
		})
	}
}

func runsString(rs []Run) string {
	b, _ := json.Marshal(rs)
	return string(b)
}
