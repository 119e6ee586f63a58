package evidence

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestParseRunLogOnRealMixTestOutput reads run logs made of real mix test
// output (testdata/runlogs/make.sh) and checks every count.
func TestParseRunLogOnRealMixTestOutput(t *testing.T) {
	read := func(name string) Measured { return *readRunLog(t, name) }
	backed := read("backed.log")
	want := map[Phase]PhaseCount{
		PhaseBefore: {Runs: 4, FailedRuns: 2, Seeds: []int64{4, 2, 8, 5}, FailingSeeds: []int64{4, 8}, FailingTests: []string{"test/racy_a_test.exs:27", "test/racy_a_test.exs:14"}},
		PhaseAfter:  {Runs: 6, Seeds: []int64{2, 5, 2, 8, 2, 5}},
		PhaseFile:   {Runs: 1, Seeds: []int64{2}},
		PhaseSuite:  {Runs: 1, Seeds: []int64{5}},
	}
	for p, w := range want {
		if got := backed.Phase(p); !reflect.DeepEqual(got, w) {
			t.Errorf("backed.log %s: %+v, want %+v", p, got, w)
		}
	}
	still := read("still_failing.log")
	if a := still.Phase(PhaseAfter); a.Runs != 2 || a.FailedRuns != 1 || !reflect.DeepEqual(a.FailingSeeds, []int64{1}) {
		t.Errorf("still_failing.log after: %+v", a)
	}
	unmarked := read("unmarked.log")
	if unmarked.Unmarked != 2 || unmarked.Phase(PhaseAfter).Runs != 1 || unmarked.Phase(PhaseBefore).Runs != 0 {
		t.Errorf("unmarked.log: %+v", unmarked)
	}
}

func TestRunsNeeded(t *testing.T) {
	for p, want := range map[float64]int{0.10: 29, 0.05: 59, 0.02: 149, 0.5: 5, 0: 0, 1: 0, -0.1: 0} {
		if got := RunsNeeded(p); got != want {
			t.Errorf("p=%v: %d, want %d", p, got, want)
		}
	}
}

func TestARunLogPastTheBoundIsCut(t *testing.T) {
	log := `=== pitcrew run phase=after cmd="mix test"` + "\n" + strings.Repeat("x", maxRunLogBytes+10) + "\n"
	m, err := ParseRunLog(strings.NewReader(log))
	if err != nil || !m.Truncated {
		t.Fatalf("%+v %v", m, err)
	}
}

func FuzzParseRunLog(f *testing.F) {
	b, _ := os.ReadFile("testdata/runlogs/backed.log")
	f.Add(string(b))
	f.Add("=== pitcrew run phase=after cmd=\"x\"\n3 tests, 1 failure\n\nRandomized with seed 9\n")
	f.Fuzz(func(t *testing.T, log string) {
		m, err := ParseRunLog(strings.NewReader(log))
		if err != nil {
			return
		}
		for p, c := range m.Phases {
			if c.FailedRuns > c.Runs || len(c.Seeds) > maxSeedsKept || len(c.FailingSeeds) > maxListed || len(c.FailingTests) > maxListed {
				t.Fatalf("%s: %+v", p, c)
			}
		}
	})
}

func TestVerifySetsTheClaimBesideTheLog(t *testing.T) {
	f, _ := os.Open("testdata/runlogs/backed.log")
	defer f.Close()
	m, err := ParseRunLog(f)
	if err != nil {
		t.Fatal(err)
	}
	n := func(i int) *int { return &i }
	seed := func(s int64) *int64 { return &s }
	for _, c := range []struct {
		name     string
		claim    Claim
		verified bool
		differ   []string
	}{
		{"what the log shows", Claim{Seed: seed(8), FailuresBefore: n(2), FailuresAfter: n(0), Runs: n(6)}, true, nil},
		{"an inflated count", Claim{Seed: seed(8), FailuresBefore: n(2), FailuresAfter: n(0), Runs: n(50)}, false, []string{"the log shows 6 runs after the fix; the answer says 50"}},
		{"a seed that never failed", Claim{Seed: seed(2)}, false, []string{"seed 2 failed in none of the log's runs before the fix"}},
		{"a seed the after-runs skipped", Claim{Seed: seed(4)}, false, []string{"no run after the fix used seed 4"}},
		{"no claim at all", Claim{}, true, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := Verify(m, c.claim)
			if v.Verified != c.verified || !reflect.DeepEqual(v.Differences, c.differ) || v.Needed != 5 || !v.Enough {
				t.Fatalf("%+v", v)
			}
		})
	}
	still, _ := os.Open("testdata/runlogs/still_failing.log")
	defer still.Close()
	sm, _ := ParseRunLog(still)
	if v := Verify(sm, Claim{}); v.Verified || v.Enough || !reflect.DeepEqual(v.Differences, []string{"1 of 2 runs after the fix failed", "the test's file was not run after the fix", "the suite was not run after the fix"}) {
		t.Fatalf("%+v", v)
	}
}

func TestVerifyRegression(t *testing.T) {
	phases := func(before, beforeFailed, after, afterFailed int) Measured {
		return Measured{Phases: map[Phase]*PhaseCount{PhaseBefore: {Runs: before, FailedRuns: beforeFailed}, PhaseAfter: {Runs: after, FailedRuns: afterFailed}}}
	}
	for want, m := range map[string]Measured{
		"": phases(1, 1, 1, 0),
		"the log shows no run of the new test on the unfixed code":                            phases(0, 0, 1, 0),
		"the new test passed on the unfixed code, so it does not show the production failure": phases(2, 0, 1, 0),
		"the log shows no run of the new test on the fix":                                     phases(1, 1, 0, 0),
		"the new test failed in 1 of 3 runs on the fix":                                       phases(1, 1, 3, 1),
	} {
		if got := VerifyRegression(m); got != want {
			t.Errorf("%+v: %q, want %q", m, got, want)
		}
	}
}

// The polluting pair a fix names is proven only when the pair fails on
// the base every time, the test alone never does, and the pair passes on
// the head (testdata/runlogs/make.sh).
func TestCheckPolluterOnRealMixTestOutput(t *testing.T) {
	const victim = "test/racy_a_test.exs:14"
	proven := CheckPolluter(readRunLog(t, "verify_polluter.log"), "test/racy_b_test.exs:25", victim, 8, "the :mode key of Application env")
	if !proven.Proven || proven.BaseFailed != 5 || proven.BaseRuns != 5 || proven.AloneRuns != 5 || proven.AloneFailed != 0 || proven.HeadRuns != 5 || proven.HeadFailed != 0 {
		t.Fatalf("%+v", proven)
	}
	for _, c := range []struct {
		log, victim string
		seed        int64
		cut         bool
		why         string
	}{
		{"verify_polluter_alone_fails.log", victim, 8, false, "the test alone failed 5 of 5 times: it fails without the polluter"},
		{"verify_agrees.log", victim, 8, false, "the log shows 0, 0 and 0 runs of the pair on the base, the test alone and the pair on the head; it takes 5 of each"},
		{"verify_polluter.log", victim, 4, false, "not every run of the pair's phases used seed 4"},
		{"verify_polluter.log", "test/racy_a_test.exs:27", 8, false, "the pair failed on the base in another test than test/racy_a_test.exs:27: the polluter may fail on its own"},
		{"verify_polluter.log", victim, 8, true, "the log is longer than pitcrew reads: what follows the cut was not counted"},
	} {
		m := readRunLog(t, c.log)
		m.Truncated = c.cut
		if got := CheckPolluter(m, "test/racy_b_test.exs:25", c.victim, c.seed, ""); got.Proven || got.Why != c.why {
			t.Errorf("%s: %+v, want %q", c.log, got, c.why)
		}
	}
}
