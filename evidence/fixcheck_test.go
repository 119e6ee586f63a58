package evidence

import (
	"os"
	"reflect"
	"testing"
)

func readRunLog(t *testing.T, name string) *Measured {
	t.Helper()
	f, err := os.Open("testdata/runlogs/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := ParseRunLog(f)
	if err != nil {
		t.Fatal(err)
	}
	return &m
}

// CheckFix reads independent verifications made of real mix test output
// (testdata/runlogs/make.sh).
func TestCheckFixOnRealVerificationLogs(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		seed      int64
		needed    int
		want      FixCheck
	}{
		{name: "red on the base, green on the head, enough runs", log: "verify_agrees.log", seed: 8, needed: 5,
			want: FixCheck{Seed: 8, BaseRan: true, RedOnBase: true, HeadRan: true, GreenOnHead: true, AfterRuns: 5, Needed: 5, Verdict: VerdictClean}},
		{name: "agrees, but fewer runs than asked", log: "verify_agrees.log", seed: 8, needed: 29,
			want: FixCheck{Seed: 8, BaseRan: true, RedOnBase: true, HeadRan: true, GreenOnHead: true, AfterRuns: 5, Needed: 29, Verdict: VerdictNote,
				Problems: []string{"5 runs on the head of the 29 asked for"}}},
		{name: "the seed passed on the base", log: "verify_base_green.log", seed: 8, needed: 2,
			want: FixCheck{Seed: 8, BaseRan: true, HeadRan: true, GreenOnHead: true, AfterRuns: 2, Needed: 2, Verdict: VerdictConcern,
				Problems: []string{"seed 8 passed on the base (1 run): the failure the fix is for did not reproduce there"}}},
		{name: "the seed still fails on the head", log: "verify_head_red.log", seed: 4, needed: 2,
			want: FixCheck{Seed: 4, BaseRan: true, RedOnBase: true, HeadRan: true, AfterRuns: 2, AfterFailed: 1, Needed: 2, Verdict: VerdictConcern,
				Problems: []string{"seed 4 still fails on the head", "1 of 2 runs on the head failed"}}},
		{name: "another seed than the log's", log: "verify_agrees.log", seed: 4242, needed: 5,
			want: FixCheck{Seed: 4242, AfterRuns: 5, Needed: 5, Verdict: VerdictNote,
				Problems: []string{"the log shows no run on the base with seed 4242", "the log shows no run on the head with seed 4242"}}},
		{name: "a fix's own log is not a verification", log: "unmarked.log", seed: 1, needed: 1,
			want: FixCheck{Seed: 1, AfterRuns: 1, Needed: 1, Verdict: VerdictNote,
				Problems: []string{"the log shows no run on the base with seed 1", "the log shows no run on the head with seed 1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CheckFix(readRunLog(t, tc.log), tc.seed, tc.needed); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
	if got := CheckFix(nil, 8, 29); got.Verdict != VerdictNote || len(got.Problems) != 1 {
		t.Errorf("no log: %+v", got)
	}
}

func TestTheSeedAndRunsAVerificationIsAskedFor(t *testing.T) {
	backed := readRunLog(t, "backed.log") // seeds 4 and 8 failed, 2 of 4 runs
	seed := func(s int64) *int64 { return &s }
	for _, tc := range []struct {
		name    string
		fix     *Measured
		claimed *int64
		want    int64
		ok      bool
	}{
		{"the claimed seed the log shows failing", backed, seed(8), 8, true},
		{"a claimed seed the log does not back: the log's", backed, seed(48213), 4, true},
		{"no claim: the log's first", backed, nil, 4, true},
		{"no log: the claim", nil, seed(48213), 48213, true},
		{"neither", nil, nil, 0, false},
	} {
		if got, ok := FailingSeed(tc.fix, tc.claimed); got != tc.want || ok != tc.ok {
			t.Errorf("%s: %d %v, want %d %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	// 2 failed of 4 before: 5 runs give 95% confidence; the floor wins.
	for _, tc := range []struct {
		fix         *Measured
		floor, want int
	}{{backed, 1, 5}, {backed, 50, 50}, {nil, 50, 50}, {&Measured{Phases: map[Phase]*PhaseCount{PhaseBefore: {Runs: 1000, FailedRuns: 1}}}, 50, 500}} {
		if got := NeededRuns(tc.fix, tc.floor); got != tc.want {
			t.Errorf("NeededRuns(floor %d): %d, want %d", tc.floor, got, tc.want)
		}
	}
}
