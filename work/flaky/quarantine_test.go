package flaky

import (
	"strings"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/exunit"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/runs"
)

func report(t *testing.T, name string) exunit.Report {
	rep, err := exunit.ParseLog(strings.NewReader(testenv.ExUnitLog(t, name)))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// A failed run is re-run only when every failure is a known flaky test in
// quarantine; real CI logs (exunit/testdata/logs) of each other case.
func TestDecideQuarantine(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	const repo = "hexpm/hexpm"
	racyB := Key(repo, exunit.TestRef{Path: "test/racy_b_test.exs", Line: 25})
	seen := func(daysAgo int, run *runs.Run) runs.FlakyTest {
		return runs.FlakyTest{Key: racyB, Sighting: runs.Sighting{Count: 7, FirstSeen: now.Add(-time.Duration(daysAgo) * 24 * time.Hour)}, Run: run}
	}
	open := &runs.Run{StartedAt: now.Add(-48 * time.Hour), PR: &runs.Pull{Number: 1301, URL: "https://github.com/hexpm/hexpm/pull/1301", State: runs.PullOpen}}
	merged := &runs.Run{StartedAt: now.Add(-48 * time.Hour), PR: &runs.Pull{Number: 1301, State: runs.PullMerged}}
	for _, c := range []struct {
		name  string
		jobs  []FailedJob
		known runs.FlakyTest
		rerun bool
		why   string
	}{
		{"only a known flake", []FailedJob{{"test", report(t, "gha_fail_seed_1.txt")}}, seen(3, open), true, ""},
		{"a known flake whose fix run started recently", []FailedJob{{"test", report(t, "gha_fail_seed_1.txt")}}, seen(30, open), true, ""},
		{"and an unknown failure", []FailedJob{{"a", report(t, "gha_fail_seed_1.txt")}, {"b", report(t, "fail_seed_33.txt")}}, seen(3, open), false, "is not a known flaky test"},
		{"and a compile error", []FailedJob{{"a", report(t, "gha_fail_seed_1.txt")}, {"b", report(t, "gha_compile_error.txt")}}, seen(3, open), false, "did not compile"},
		{"and an infrastructure failure", []FailedJob{{"a", report(t, "gha_fail_seed_1.txt")}, {"b", report(t, "gha_pm_many_failures.txt")}}, seen(3, open), false, "the infrastructure"},
		{"and a job failing with no test failure", []FailedJob{{"a", report(t, "gha_fail_seed_1.txt")}, {"deploy", exunit.Report{}}}, seen(3, open), false, "failed with no ExUnit failure"},
		{"its fix merged", []FailedJob{{"test", report(t, "gha_fail_seed_1.txt")}}, seen(3, merged), false, "its fix merged in PR #1301: it left quarantine"},
		{"its quarantine expired", []FailedJob{{"test", report(t, "gha_fail_seed_1.txt")}}, seen(30, nil), false, "its quarantine expired on 21 Nov 2026"},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := DecideQuarantine(repo, c.jobs, map[string]runs.FlakyTest{racyB: c.known}, now, 14)
			why := strings.Join(q.Why, "\n")
			if q.Rerun != c.rerun || len(q.Known) != 1 || c.why != "" && !strings.Contains(why, c.why) {
				t.Fatalf("rerun %v, known %+v, why:\n%s", q.Rerun, q.Known, why)
			}
		})
	}
	other := Key(repo, exunit.TestRef{Path: "test/other_test.exs", Line: 1})
	if q := DecideQuarantine(repo, []FailedJob{{"b", report(t, "fail_seed_33.txt")}}, map[string]runs.FlakyTest{other: seen(3, open)}, now, 14); q.Rerun || len(q.Known) != 0 {
		t.Fatalf("a run with no known flake: %+v", q)
	}
}
