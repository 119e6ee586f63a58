package exunit

import (
	"testing"
)

func TestWhatACommandRan(t *testing.T) {
	const file = "apps/core/test/core/repo_test.exs"
	for _, c := range []struct {
		step    string
		stepRun int
		rerun   bool // a rerun of an earlier failure of the file
		want    bool
	}{
		{"", 0, false, true}, // no command in the log: read as a bare mix test
		{"mix test\n", 0, false, true},
		{"MIX_ENV=test mix test --seed 0 --max-cases 2 --warnings-as-errors\n", 0, false, true},
		{"mix coveralls.github --umbrella\n", 0, false, true},
		{"mix test apps/core/test\n", 0, false, true},
		{"mix test apps/core/test/core/repo_test.exs\n", 0, false, true},
		{"mix test apps/web/test\n", 0, false, false},
		{"cd apps/core && mix test test/core\n", 0, false, true},
		{"cd apps/web && mix test\n", 0, false, true}, // the umbrella path rule already placed the file
		{"mix test apps/core/test/core/repo_test.exs:12\n", 0, false, false},
		{"mix test --only integration\n", 0, false, false},
		{"mix test --exclude slow\n", 0, false, false},
		{"mix test --partitions 4\n", 0, false, false},
		{"mix test --stale\n", 0, false, false},
		{"mix test --include slow --seed 3\n", 0, false, true},
		{"mix test || mix test --failed\n", 0, false, true},
		{"mix test || mix test --failed\n", 1, true, true},
		{"mix test || mix test --failed\n", 1, false, false},
		{"mix deps.get\nmix test --failed\n", 0, false, false},
		{"mix compile\n", 0, false, true}, // not a mix test step: unknown, the whole suite
		{"mix test 2>&1 | tee test.log\n", 0, false, true},
		{"mix test > out.txt\n", 0, false, true},
		{"mix test apps/core/test $EXTRA\n", 0, false, false},
		{"mix test $(cat files)\n", 0, false, false},
		{"git diff --name-only | xargs mix test\n", 0, false, false},
	} {
		r := Run{Step: c.step, StepRun: c.stepRun}
		if got := r.command().ranFile(file, c.rerun); got != c.want {
			t.Errorf("%q (run %d, rerun %v): ran the file = %v, want %v", c.step, c.stepRun, c.rerun, got, c.want)
		}
	}
}

func TestAnUmbrellaRunCoversItsOwnAppOnly(t *testing.T) {
	rep := parseFile(t, "gha_pm_umbrella_fail.txt") // beta fails, then alpha's run passes
	if got := rep.RetriedFlakes(); len(got) != 0 {
		t.Fatalf("another app's run is no retry: %+v", got)
	}
	beta, _ := ParseTestRef("apps/beta/test/beta_test.exs:9")
	alpha, _ := ParseTestRef("apps/alpha/test/alpha_test.exs:3")
	if ok, _ := rep.Passed(beta); ok {
		t.Error("beta failed in its only run")
	}
	if ok, why := rep.Passed(alpha); !ok {
		t.Errorf("alpha's run passed it: %s", why)
	}
	if r := (Run{Step: "mix test || mix test --failed\n", App: "alpha"}); r.command().ranFile("apps/alpha/test/a_test.exs", false) {
		t.Error("an umbrella's runs cannot be matched to a step's several commands")
	}
}

func TestPassedAndRetriedFlakes(t *testing.T) {
	retried := parseFile(t, "gha_pm_in_job_retry.txt")
	if got := retried.RetriedFlakes(); len(got) != 1 || got[0].File != "test/racy_b_test.exs" || got[0].Line != 25 {
		t.Fatalf("in-job retry: %+v (runs %s)", got, runsString(retried.Runs))
	}
	for _, f := range []string{"in_job_retry.txt", "handmade_1_20_in_job_retry.txt", "gha_pm_handmade_1_20_in_job_retry.txt"} {
		if got := parseFile(t, f).RetriedFlakes(); len(got) != 1 {
			t.Fatalf("%s: in-job retry: %+v", f, got)
		}
	}
	for _, f := range []string{"gha_pm_fail_seed_1.txt", "many_failures.txt", "gha_pm_compile_error.txt", "fail_seed_33.txt"} {
		if got := parseFile(t, f).RetriedFlakes(); len(got) != 0 {
			t.Errorf("%s: no run reran its failures, got %+v", f, got)
		}
	}

	pass := parseFile(t, "gha_pm_fail_seed_1.txt") // fails racy_b_test.exs:25 only
	for _, c := range []struct {
		ref  string
		want bool
	}{
		{"test/racy_a_test.exs:27", true},
		{"test/racy_b_test.exs:25", false},
	} {
		ref, _ := ParseTestRef(c.ref)
		if ok, why := pass.Passed(ref); ok != c.want {
			t.Errorf("Passed(%s) = %v (%s), want %v", c.ref, ok, why, c.want)
		}
	}
	for _, f := range []string{"gha_pm_compile_error.txt", "many_failures.txt"} {
		ref, _ := ParseTestRef("test/racy_a_test.exs:27")
		if ok, why := parseFile(t, f).Passed(ref); ok || why == "" {
			t.Errorf("%s cannot clear a test: %v %q", f, ok, why)
		}
	}
}
