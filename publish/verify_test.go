package publish

import (
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/runs"
)

func TestTheIndependentVerificationIsSummedUp(t *testing.T) {
	agrees := &evidence.FixCheck{Seed: 4242, BaseRan: true, RedOnBase: true, HeadRan: true, GreenOnHead: true, AfterRuns: 149, Needed: 149, Verdict: evidence.VerdictClean}
	disagrees := &evidence.FixCheck{Seed: 4242, BaseRan: true, AfterRuns: 149, AfterFailed: 2, Needed: 149, Verdict: evidence.VerdictConcern,
		Problems: []string{"seed 4242 passed on the base: the failure the fix is for did not reproduce there", "2 of 149 runs on the head failed"}}
	for _, c := range []struct {
		name   string
		verify *runs.Verify
		line   string // "" for none
		title  string
	}{
		{"none decided", nil, "", "Evidence: clean"},
		{"running", &runs.Verify{Head: "h", RunID: "verify#1"}, "independent verification: running", "Evidence: clean"},
		{"agrees", &runs.Verify{Head: "h", RunID: "verify#1", Result: agrees},
			"independent verification: red on base with seed 4242, green on head, 0 of 149 after · ✔️ agrees with the fix", "Evidence: clean · verified"},
		{"disagrees", &runs.Verify{Head: "h", RunID: "verify#1", Result: disagrees},
			"independent verification: green on base with seed 4242, not run on head, 2 of 149 after · ⚠️ concern: it disagrees with the fix\n      - seed 4242 passed on the base", "Evidence: clean · the verification disagrees"},
		{"the session failed", &runs.Verify{Head: "h", RunID: "verify#1", Note: "the verification session failed: out of memory", Result: &evidence.FixCheck{Verdict: evidence.VerdictNote, Problems: []string{"the verification left no evidence log"}}},
			"independent verification: the verification session failed: out of memory\n      - the verification left no evidence log", "Evidence: clean · verification incomplete"},
		{"not started", &runs.Verify{Head: "h", Note: "not verified independently: the fix names no failing seed"}, "independent verification: not verified independently: the fix names no failing seed", "Evidence: clean"},
		{"of an older head", &runs.Verify{Head: "old", RunID: "verify#1", Result: agrees}, "", "Evidence: clean · verified"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &runs.Pull{Number: 77, URL: "https://github.com/hexpm/hexpm/pull/77", State: runs.PullOpen, Head: "h", Verify: c.verify}
			p.SetEvidence("h", evidence.Review{Verdict: evidence.VerdictClean}, 9)
			line := verifyLine(p)
			if c.line == "" && line != "" || !strings.Contains(line, c.line) {
				t.Fatalf("line %q, want %q", line, c.line)
			}
			out := VerifiedEvidence(RenderEvidence(evidence.JobFlaky, 77, evidence.Review{Verdict: evidence.VerdictClean}), c.verify)
			if out.Title != c.title || out.Annotations != nil {
				t.Fatalf("check run %q, want %q", out.Title, c.title)
			}
			if want := map[bool]string{true: "neutral", false: "success"}[strings.Contains(c.title, "disagrees")]; out.Conclusion != want {
				t.Fatalf("conclusion %s, want %s", out.Conclusion, want)
			}
		})
	}
}

func TestTheEvidenceCheckRunCarriesWhatTheRunsLogShows(t *testing.T) {
	seed, six := int64(8), 6
	backed := &evidence.Measured{Phases: map[evidence.Phase]*evidence.PhaseCount{
		evidence.PhaseBefore: {Runs: 4, FailedRuns: 2, FailingSeeds: []int64{8}}, evidence.PhaseAfter: {Runs: 6, Seeds: []int64{8}}}}
	whole := &evidence.Measured{Phases: map[evidence.Phase]*evidence.PhaseCount{
		evidence.PhaseBefore: {Runs: 4, FailedRuns: 2, FailingSeeds: []int64{8}}, evidence.PhaseAfter: {Runs: 6, Seeds: []int64{8}},
		evidence.PhaseFile: {Runs: 1}, evidence.PhaseSuite: {Runs: 1}}}
	const pr = "https://github.com/hexpm/hexpm/pull/77"
	for _, c := range []struct {
		name  string
		job   evidence.Job
		run   runs.Run
		want  string // "" for no section
		title string // "" for the review's own, "Evidence: clean", and a success
	}{
		{"a flaky fix with its log", evidence.JobFlaky, runs.Run{Measured: backed, Result: &prompts.Result{Seed: &seed}},
			"### The run's own log\n\n  - Measured in the run's log: 2 of 4 runs failed before the fix (seeds `8`), 0 of 6 after", ""},
		{"a flaky fix without its log", evidence.JobFlaky, runs.Run{Result: &prompts.Result{}}, "Counts not verified: the run left no evidence log", ""},
		{"a flaky fix without a result block", evidence.JobFlaky, runs.Run{Measured: backed}, "", ""},
		{"an alert fix whose test passed before", evidence.JobAlert, runs.Run{Measured: &evidence.Measured{Phases: map[evidence.Phase]*evidence.PhaseCount{
			evidence.PhaseBefore: {Runs: 1}, evidence.PhaseAfter: {Runs: 1}}}}, "⚠️ the answer claims a fix; its log does not back it:\nRegression test: the new test passed on the unfixed code",
			"⚠️ the answer claims a fix; its log does not back it · Evidence: clean"},
		{"an alert fix whose test failed before", evidence.JobAlert, runs.Run{Measured: &evidence.Measured{Phases: map[evidence.Phase]*evidence.PhaseCount{
			evidence.PhaseBefore: {Runs: 1, FailedRuns: 1}, evidence.PhaseAfter: {Runs: 1}}}}, "Regression test ✔️ verified in the run's log", ""},
		{"an alert fix without its log", evidence.JobAlert, runs.Run{}, "Regression test not verified: the run left no evidence log", ""},
		{"a fix its log contradicts", evidence.JobFlaky, runs.Run{Kind: runs.KindFlaky, Measured: backed, Result: &prompts.Result{PRURL: pr, Seed: &seed, Runs: &six}},
			"### The run's own log\n\n⚠️ the answer claims a fix; its log does not back it:\n  - Measured in the run's log: 2 of 4 runs failed before the fix (seeds `8`), 0 of 6 after\n" +
				"    - the test's file was not run after the fix\n    - the suite was not run after the fix",
			"⚠️ the answer claims a fix; its log does not back it · Evidence: clean"},
		{"a fix its log backs", evidence.JobFlaky, runs.Run{Kind: runs.KindFlaky, Measured: whole, Result: &prompts.Result{PRURL: pr, Seed: &seed, Runs: &six}},
			"### The run's own log\n\n  - Measured in the run's log: 2 of 4 runs failed before the fix (seeds `8`), 0 of 6 after · ✔️ the answer's counts are verified", ""},
		{"a fix without its log", evidence.JobFlaky, runs.Run{Kind: runs.KindFlaky, Result: &prompts.Result{PRURL: pr, Seed: &seed, Runs: &six}},
			"### The run's own log\n\n  - Counts not verified: the run left no evidence log", ""},
	} {
		out := WithRunLog(RenderEvidence(c.job, 77, evidence.Review{Verdict: evidence.VerdictClean}), c.job, c.run)
		if c.want == "" && strings.Contains(out.Summary, "### The run's own log") || !strings.Contains(out.Summary, c.want) {
			t.Errorf("%s: summary:\n%s", c.name, out.Summary)
		}
		title, conclusion := orDefault(c.title, "Evidence: clean"), "success"
		if c.title != "" {
			conclusion = "neutral" // a claim its log contradicts is never a success
		}
		if out.Title != title || out.Conclusion != conclusion {
			t.Errorf("%s: check run %q, %s; want %q, %s", c.name, out.Title, out.Conclusion, title, conclusion)
		}
	}
}
