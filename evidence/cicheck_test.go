package evidence

import (
	"strings"
	"testing"
)

// CheckCI is green only with both sides counted: the base failing, the
// head passing as many runs as the base's rate needs.
func TestCheckCI(t *testing.T) {
	base := PhaseCount{Runs: 50, FailedRuns: 6, Seeds: []int64{4242, 1, 2}, FailingSeeds: []int64{4242}}
	head := PhaseCount{Runs: 50, Seeds: []int64{4242, 3}}
	for _, c := range []struct {
		name       string
		base, head PhaseCount
		truncated  bool
		verdict    Verdict
		problem    string
	}{
		{"red on the base, green on the head", base, head, false, VerdictClean, ""},
		{"the base never failed", PhaseCount{Runs: 50, Seeds: []int64{4242}}, head, false, VerdictNote, "the base never failed in 50 runs: the flake is not reproduced in CI"},
		{"the head failed", base, PhaseCount{Runs: 50, FailedRuns: 1, Seeds: []int64{4242}}, false, VerdictConcern, "1 of 50 runs on the head failed"},
		{"too few runs on the head for the rate", PhaseCount{Runs: 50, FailedRuns: 1}, PhaseCount{Runs: 20}, false, VerdictNote, "20 runs on the head; the base's failure rate in CI (2%) needs 149 for 95% confidence"},
		{"nothing ran on the base", PhaseCount{}, head, false, VerdictNote, "the base's workflow run shows no finished mix test run"},
		{"nothing ran on the head", base, PhaseCount{}, false, VerdictNote, "the head's workflow run shows no finished mix test run"},
		{"a log cut short", base, head, true, VerdictNote, "a log is longer than pitcrew reads"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := CheckCI(c.base, c.head, 4242, CIAsked{Base: c.base.Runs, Head: c.head.Runs}, c.truncated)
			if r.Verdict != c.verdict || c.problem != "" && !strings.Contains(strings.Join(r.Problems, "\n"), c.problem) || c.problem == "" && len(r.Problems) > 0 {
				t.Fatalf("%s %q", r.Verdict, r.Problems)
			}
			if !r.InCI || r.BaseRuns != c.base.Runs || r.AfterRuns != c.head.Runs {
				t.Fatalf("%+v", r)
			}
		})
	}
}

// A head run short of what was asked, or a base that stopped early, is
// read for what it is.
func TestCheckCIReadsWhatWasAsked(t *testing.T) {
	base := PhaseCount{Runs: 3, FailedRuns: 3, Seeds: []int64{8}, FailingSeeds: []int64{8}}
	r := CheckCI(base, PhaseCount{Runs: 4, Seeds: []int64{8}}, 8, CIAsked{Base: 100, Head: 5, BaseStopAfter: 3}, false)
	if r.Verdict != VerdictNote || !strings.Contains(strings.Join(r.Problems, "\n"), "the head finished 4 of the 5 runs asked") {
		t.Fatalf("%s %q", r.Verdict, r.Problems)
	}
	r = CheckCI(base, PhaseCount{Runs: 5, Seeds: []int64{8}}, 8, CIAsked{Base: 100, Head: 5, BaseStopAfter: 3}, false)
	if r.Verdict != VerdictClean || r.Needed != 5 {
		t.Fatalf("a base failing its 3 first runs, then 5 clean on the head: %s %d %q", r.Verdict, r.Needed, r.Problems)
	}
	r = CheckCI(PhaseCount{Runs: 40, FailedRuns: 2}, PhaseCount{Runs: 100}, 8, CIAsked{Base: 100, Head: 100, BaseStopAfter: 3}, false)
	if r.Verdict != VerdictNote || !strings.Contains(strings.Join(r.Problems, "\n"), "the base finished 40 of the 100 runs asked") {
		t.Fatalf("%s %q", r.Verdict, r.Problems)
	}
}
