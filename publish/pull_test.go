package publish

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/runs"
)

func TestTheFollowedPullRequestIsSummedUp(t *testing.T) {
	concern := evidence.Finding{Rule: "sleep-added", Severity: evidence.Concern, File: "test/a_test.exs", Line: 12, Text: "+ Process.sleep(200)", Why: "a sleep waits"}
	note := evidence.Finding{Rule: "async-disabled", Severity: evidence.Note, File: "test/b_test.exs", Line: 2, Text: "+ use Hexpm.DataCase", Why: "runs alone"}
	pr := func(change func(*runs.Pull)) *runs.Pull {
		p := &runs.Pull{Number: 77, URL: "https://github.com/hexpm/hexpm/pull/77", State: runs.PullOpen, Head: "h"}
		p.SetEvidence("h", evidence.Review{Verdict: evidence.VerdictConcern, Findings: []evidence.Finding{concern, note}}, 9)
		if change != nil {
			change(p)
		}
		return p
	}
	for _, c := range []struct {
		name string
		pr   *runs.Pull
		want []string
	}{
		{"open, CI running", pr(func(p *runs.Pull) { p.Suites = map[string]string{"github-actions": "", "circleci-checks": "success"} }),
			[]string{"[PR #77](https://github.com/hexpm/hexpm/pull/77) · CI running · evidence: 1 concern, 1 note", "`test/a_test.exs:12` concern `+ Process.sleep(200)`: a sleep waits", "`test/b_test.exs:2` note"}},
		{"CI failed, changes requested", pr(func(p *runs.Pull) {
			p.Suites = map[string]string{"github-actions": "failure", "circleci-checks": "success"}
			p.Reviews = map[string]runs.Review{"alice": {State: "approved"}, "bob": {State: "changes_requested"}}
		}), []string{"· CI failed · evidence: 1 concern, 1 note · changes requested"}},
		{"merged", pr(func(p *runs.Pull) {
			p.Suites, p.Reviews = map[string]string{"github-actions": "success"}, map[string]runs.Review{"alice": {State: "approved"}}
			p.State, p.MergedAt = runs.PullMerged, time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
		}), []string{"· CI passed · evidence: 1 concern, 1 note · approved · merged 2 Dec"}},
		{"closed", pr(func(p *runs.Pull) { p.State = runs.PullClosed }), []string{"· CI not reported yet · evidence: 1 concern, 1 note · closed without merging"}},
		{"taken over by a later run", pr(func(p *runs.Pull) { p.TakenOver = true }),
			[]string{"· CI not reported yet · evidence: 1 concern, 1 note · a later run named it too and follows it from here on"}},
		{"gone", pr(func(p *runs.Pull) { p.State = runs.PullGone }), []string{"[PR #77](https://github.com/hexpm/hexpm/pull/77) no longer exists."}},
		{"too large", pr(func(p *runs.Pull) {
			p.SetEvidence("h", evidence.Review{Verdict: evidence.VerdictNote, NotChecked: "not checked: too large (301 files, 40 changed lines read; the bounds are 300 files and 20000 changed lines)"}, 9)
		}), []string{"evidence: not checked: too large (301 files"}},
		{"more findings than kept", pr(func(p *runs.Pull) {
			var many []evidence.Finding
			for i := 0; i < 8; i++ {
				many = append(many, concern)
			}
			p.SetEvidence("h", evidence.Review{Verdict: evidence.VerdictConcern, Findings: many}, 9)
		}), []string{"evidence: 8 concerns", "and 3 more on the `pitcrew / evidence` check run"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runs.Run{State: runs.Completed, PR: c.pr, Result: &prompts.Result{Outcome: prompts.OutcomeFixed, PRURL: c.pr.URL}}
			body := RenderStatus(runs.View{Status: runs.Status{Label: "flaky", Entries: []runs.Entry{{About: "test/a_test.exs:1", RunID: "r", Relation: runs.ClaimNew}}}, Runs: map[string]runs.Run{"r": r}})
			for _, w := range c.want {
				if !strings.Contains(body, w) {
					t.Errorf("lacks %q:\n%s", w, body)
				}
			}
			if alert := RenderAlert(runs.View{Status: runs.Status{Entries: []runs.Entry{{RunID: "r", Relation: runs.ClaimNew}}}, Runs: map[string]runs.Run{"r": r}}); !strings.Contains(alert, c.want[0]) {
				t.Errorf("the alert comment lacks %q:\n%s", c.want[0], alert)
			}
		})
	}
}

func TestTheEvidenceCheckRunInformsAndNeverBlocks(t *testing.T) {
	concern := evidence.Finding{Rule: "plug-removed", Severity: evidence.Concern, File: "lib/hexpm_web/router.ex", Line: 4, Text: "- plug :authorize", Why: "the plug no longer runs"}
	note := evidence.Finding{Rule: "async-disabled", Severity: evidence.Note, File: "test/b_test.exs", Line: 2, Text: "+ use X", Why: "runs alone"}
	whole := evidence.Finding{Rule: "test-deleted", Severity: evidence.Concern, File: "test/c_test.exs", Why: "the whole test file is deleted"}
	for _, c := range []struct {
		name                      string
		review                    evidence.Review
		title, conclusion, levels string
	}{
		{"a concern", evidence.Review{Verdict: evidence.VerdictConcern, Findings: []evidence.Finding{concern, note, whole}}, "Evidence: 2 concerns, 1 note", "neutral", "warning notice"},
		{"a note", evidence.Review{Verdict: evidence.VerdictNote, Findings: []evidence.Finding{note}}, "Evidence: 1 note", "neutral", "notice"},
		{"clean", evidence.Review{Verdict: evidence.VerdictClean}, "Evidence: clean", "success", ""},
		{"too large", evidence.Review{Verdict: evidence.VerdictNote, NotChecked: "not checked: too large"}, "Evidence: not checked: too large", "neutral", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := RenderEvidence(evidence.JobAlert, 77, c.review)
			var levels []string
			for _, a := range out.Annotations {
				levels = append(levels, a.Level)
				if a.Line < 1 || a.Title == "" || a.Message == "" {
					t.Errorf("annotation %+v", a)
				}
			}
			if out.Name != EvidenceCheckName || out.Title != c.title || out.Conclusion != c.conclusion || strings.Join(levels, " ") != c.levels || !strings.Contains(out.Summary, "never blocks a merge") {
				t.Fatalf("%+v", out)
			}
		})
	}
}

// A test that flakes again after its fix was merged says so: on the new
// run it starts, and, within the cooldown, on the run that answers.
func TestATestThatComesBackAfterItsFixSaysSo(t *testing.T) {
	merged := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	now := merged.Add(5 * time.Hour)
	fixed := &prompts.Result{Outcome: prompts.OutcomeFixed, PRURL: "https://github.com/hexpm/hexpm/pull/77"}
	for _, c := range []struct {
		name  string
		entry runs.Entry
		run   runs.Run
		want  string
	}{
		{"a new run after the cooldown", runs.Entry{RunID: "r", Relation: runs.ClaimNew},
			runs.Run{State: runs.Started, StartedAt: now, PriorFix: &runs.PriorFix{Number: 77, URL: "https://github.com/hexpm/hexpm/pull/77", MergedAt: merged}},
			"↩️ came back after [PR #77](https://github.com/hexpm/hexpm/pull/77) (merged on 2 Dec). 🔄 the agent is working on it"},
		{"within the cooldown", runs.Entry{RunID: "r", Relation: runs.ClaimCooldown, Cooldown: 24 * time.Hour},
			runs.Run{State: runs.Completed, EndedAt: merged.Add(-time.Hour), Result: fixed, PR: &runs.Pull{Number: 77, URL: "https://github.com/hexpm/hexpm/pull/77", State: runs.PullMerged, MergedAt: merged}},
			"↩️ came back after [PR #77](https://github.com/hexpm/hexpm/pull/77) (merged on 2 Dec). answered 6 hours ago"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.entry.About = "test/a_test.exs:1"
			body := RenderStatus(runs.View{Status: runs.Status{Label: "flaky", Entries: []runs.Entry{c.entry}}, Runs: map[string]runs.Run{"r": c.run}, Now: now})
			if !strings.Contains(body, c.want) {
				t.Fatalf("lacks %q:\n%s", c.want, body)
			}
			_, summary := RenderCheckRun(runs.View{Status: runs.Status{Heading: "CI", Entries: []runs.Entry{c.entry}}, Runs: map[string]runs.Run{"r": c.run}, Now: now})
			if !strings.Contains(summary, "came back after [PR #77]") {
				t.Fatalf("the check run lacks it:\n%s", summary)
			}
		})
	}
}

// What the answer claims stands beside what pitcrew counted in the run's
// own log: verified, or each difference said plainly. A fix whose log
// contradicts its answer is not called fixed anywhere: the issue, the CI
// check run, the dashboard and the pull request's evidence check run say
// the answer claims a fix its log does not back, the differences below.
func TestClaimedCountsStandBesideMeasuredOnes(t *testing.T) {
	f, err := os.Open(testenv.Path("evidence", "testdata", "runlogs", "backed.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := evidence.ParseRunLog(f)
	if err != nil {
		t.Fatal(err)
	}
	const (
		fixed     = "✅ fixed in https://github.com/hexpm/hexpm/pull/9."
		notBacked = "⚠️ the answer claims a fix; its log does not back it: https://github.com/hexpm/hexpm/pull/9."
	)
	ended := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	seed, before, after, six, fifty := int64(8), 2, 0, 6, 50
	for _, c := range []struct {
		name     string
		measured *evidence.Measured
		runs     *int
		headline string   // of the run's line, on the issue, the CI check run and the dashboard
		want     []string // below the headline
	}{
		{"backed", &m, &six, fixed, []string{"Measured in the run's log: 2 of 4 runs failed before the fix (seeds `4`, `8`), 0 of 6 after · ✔️ the answer's counts are verified",
			"5 clean runs after the fix give 95% confidence that the failure rate (50% before) dropped: reached"}},
		{"inflated", &m, &fifty, notBacked, []string{"0 of 6 after\n    - the log shows 6 runs after the fix; the answer says 50"}},
		{"no log", nil, &fifty, fixed, []string{"Counts not verified: the run left no evidence log (`pitcrew-evidence.log`)."}},
		{"cut", func() *evidence.Measured { c := m; c.Truncated = true; return &c }(), &six, notBacked, []string{"0 of 6 after\n    - the log is longer than pitcrew reads: it was counted up to there, and what follows was not read"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runs.Run{Kind: runs.KindFlaky, State: runs.Completed, EndedAt: ended, Measured: c.measured,
				Result: &prompts.Result{Outcome: prompts.OutcomeFixed, PRURL: "https://github.com/hexpm/hexpm/pull/9", Seed: &seed, FailuresBefore: &before, FailuresAfter: &after, Runs: c.runs}}
			entry := runs.Entry{About: "test/a_test.exs:1", RunID: "r", Relation: runs.ClaimNew}
			view := runs.View{Status: runs.Status{Label: "flaky", Heading: "CI", Entries: []runs.Entry{entry}}, Runs: map[string]runs.Run{"r": r}}
			title, summary := RenderCheckRun(view)
			if title != "1 flaky test, 1 new fix run" {
				t.Errorf("CI check run title %q", title)
			}
			contradicted := c.headline == notBacked
			for surface, body := range map[string]string{
				"- `test/a_test.exs:1`: ": RenderStatus(view),
				"\nFix: ":                 summary,
				"  - Run, ended on 2 Dec 2026: ": RenderDashboard(DashboardView{Repo: "hexpm/hexpm", Total: 1,
					Tests: []runs.FlakyTest{{Key: "flaky:hexpm/hexpm:test/a_test.exs:1", Run: &r}}}),
			} {
				at := strings.Index(body, surface+c.headline)
				if at < 0 {
					t.Errorf("%q: lacks the headline %q:\n%s", surface, surface+c.headline, body)
					continue
				}
				for _, w := range c.want {
					if i := strings.Index(body, w); i < at {
						t.Errorf("%q: lacks %q below the headline:\n%s", surface, w, body)
					}
				}
				if contradicted && (strings.Contains(body, "✅") || strings.Contains(body, "fixed in") || strings.Contains(body, "✔️")) {
					t.Errorf("%q: a fix its log contradicts reads as fixed:\n%s", surface, body)
				}
			}
			// The evidence check run on the fix's pull request.
			out := WithRunLog(RenderEvidence(evidence.JobFlaky, 9, evidence.Review{Verdict: evidence.VerdictClean}), evidence.JobFlaky, r)
			title, conclusion, section := "Evidence: clean", "success", "### The run's own log\n\n  - "
			if contradicted {
				title, conclusion = "⚠️ the answer claims a fix; its log does not back it · Evidence: clean", "neutral"
				section = "### The run's own log\n\n⚠️ the answer claims a fix; its log does not back it:\n  - "
			}
			if out.Title != title || out.Conclusion != conclusion {
				t.Errorf("evidence check run %q, %s; want %q, %s", out.Title, out.Conclusion, title, conclusion)
			}
			at := strings.Index(out.Summary, section)
			if at < 0 {
				t.Errorf("evidence check run lacks %q:\n%s", section, out.Summary)
			}
			for _, w := range c.want {
				if i := strings.Index(out.Summary, w); i < at {
					t.Errorf("evidence check run lacks %q below its section's headline:\n%s", w, out.Summary)
				}
			}
		})
	}
}

func TestAnAlertFixSaysWhatItsRegressionTestShows(t *testing.T) {
	fixed := &prompts.Result{Outcome: prompts.OutcomeFixed, PRURL: "https://github.com/hexpm/hexpm/pull/9"}
	red := evidence.Measured{Phases: map[evidence.Phase]*evidence.PhaseCount{evidence.PhaseBefore: {Runs: 1, FailedRuns: 1}, evidence.PhaseAfter: {Runs: 1}}}
	green := evidence.Measured{Phases: map[evidence.Phase]*evidence.PhaseCount{evidence.PhaseBefore: {Runs: 1}, evidence.PhaseAfter: {Runs: 1}}}
	for _, c := range []struct {
		m                  *evidence.Measured
		headline, evidence string
	}{
		{&red, "✅ Fixed in https://github.com/hexpm/hexpm/pull/9, with a regression test.", "Regression test ✔️ verified in the run's log: it fails on the unfixed code and passes on the fix."},
		// The log contradicts the claim: no tick, the reason below it.
		{&green, "⚠️ The answer claims a fix; its log does not back it: https://github.com/hexpm/hexpm/pull/9.", "Regression test: the new test passed on the unfixed code, so it does not show the production failure."},
		{nil, "✅ Fixed in https://github.com/hexpm/hexpm/pull/9, with a regression test.", "Regression test not verified: the run left no evidence log (`pitcrew-evidence.log`)."},
	} {
		r := runs.Run{State: runs.Completed, Result: fixed, Measured: c.m}
		body := RenderAlert(runs.View{Status: runs.Status{Entries: []runs.Entry{{RunID: "r", Relation: runs.ClaimNew}}}, Runs: map[string]runs.Run{"r": r}})
		h, e := strings.Index(body, c.headline), strings.Index(body, c.evidence)
		if h < 0 || e < h {
			t.Errorf("want %q, then %q below it:\n%s", c.headline, c.evidence, body)
		}
	}
}
