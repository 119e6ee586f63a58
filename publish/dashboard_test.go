package publish

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/runs"
)

var dashNow = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

func flakyTest(n int, run *runs.Run) runs.FlakyTest {
	return runs.FlakyTest{Key: fmt.Sprintf("flaky:hexpm/hexpm:test/hexpm/web/controllers/package_controller_test.exs:%d", n),
		Sighting: runs.Sighting{Count: 7, Commits: 3, FirstSeen: dashNow.AddDate(0, 0, -20), LastSeen: dashNow.Add(-time.Hour),
			Commit: "5779607b49aab1200488439f02372c57b4f75444", Where: "https://github.com/hexpm/hexpm/actions/runs/30433642",
			Name: "test show package with releases", Module: "HexpmWeb.PackageControllerTest"}, Run: run}
}

func TestADashboardRowSaysWhatIsKnownOfItsTest(t *testing.T) {
	one := 1
	merged := &runs.Run{State: runs.Completed, EndedAt: dashNow.Add(-48 * time.Hour), SessionURL: "https://rush.example/s/1",
		Result: &prompts.Result{Outcome: prompts.OutcomeFixed, PRURL: "https://github.com/hexpm/hexpm/pull/77", FailuresBefore: &one},
		PR:     &runs.Pull{Number: 77, URL: "https://github.com/hexpm/hexpm/pull/77", State: runs.PullMerged, MergedAt: dashNow.Add(-24 * time.Hour), Verdict: evidence.VerdictClean}}
	seed, six, fifty := int64(8), 6, 50
	measured := &evidence.Measured{Phases: map[evidence.Phase]*evidence.PhaseCount{
		evidence.PhaseBefore: {Runs: 4, FailedRuns: 2, FailingSeeds: []int64{8}}, evidence.PhaseAfter: {Runs: 6, Seeds: []int64{8}},
		evidence.PhaseFile: {Runs: 1}, evidence.PhaseSuite: {Runs: 1}}}
	measuredFix := func(claimed *int) *runs.Run {
		return &runs.Run{Kind: runs.KindFlaky, State: runs.Completed, EndedAt: dashNow.Add(-48 * time.Hour), Measured: measured,
			Result: &prompts.Result{Outcome: prompts.OutcomeFixed, PRURL: "https://github.com/hexpm/hexpm/pull/78", Seed: &seed, Runs: claimed}}
	}
	for _, c := range []struct {
		name string
		test runs.FlakyTest
		want []string
		not  []string
	}{
		{name: "no run yet", test: flakyTest(1, nil), want: []string{
			"- [ ] `test/hexpm/web/controllers/package_controller_test.exs:1` test show package with releases (`HexpmWeb.PackageControllerTest`) <!-- pitcrew:tick:",
			"  - Seen 7 times on 3 commits, first on 14 Nov 2026, last on 4 Dec 2026 at `5779607` in [CI run](https://github.com/hexpm/hexpm/actions/runs/30433642).",
			"  - No run yet: tick the box to start one."}},
		{name: "a live run", test: flakyTest(2, &runs.Run{State: runs.Started, StartedAt: dashNow.Add(-time.Minute), SessionURL: "https://rush.example/s/2"}),
			want: []string{"Run: 🔄 the agent is working on it since 4 Dec 11:59 UTC ([run](https://rush.example/s/2))."}},
		{name: "a failed run", test: flakyTest(3, &runs.Run{State: runs.Failed, EndedAt: dashNow, Error: "the sandbox refused"}),
			want: []string{"Run: ❌ failed on 4 Dec 2026: the sandbox refused. Tick the box to start a new one."}},
		{name: "a merged fix", test: flakyTest(4, merged), want: []string{"Run, ended on 2 Dec 2026: ✅ fixed in https://github.com/hexpm/hexpm/pull/77", "[PR #77](https://github.com/hexpm/hexpm/pull/77)", "merged 3 Dec"},
			not: []string{"does not back it"}},
		{name: "a fix its log contradicts", test: flakyTest(7, measuredFix(&fifty)), want: []string{
			"  - Run, ended on 2 Dec 2026: ⚠️ the answer claims a fix; its log does not back it: https://github.com/hexpm/hexpm/pull/78.\n",
			"  - Measured in the run's log: 2 of 4 runs failed before the fix (seeds `8`), 0 of 6 after\n    - the log shows 6 runs after the fix; the answer says 50\n"},
			not: []string{"✅", "fixed in", "✔️"}},
		{name: "a fix its log backs", test: flakyTest(8, measuredFix(&six)), want: []string{
			"  - Run, ended on 2 Dec 2026: ✅ fixed in https://github.com/hexpm/hexpm/pull/78.\n",
			"0 of 6 after · ✔️ the answer's counts are verified"},
			not: []string{"does not back it"}},
		{name: "back after a merged fix", test: flakyTest(5, &runs.Run{State: runs.Queued, PriorFix: &runs.PriorFix{Number: 77, URL: "https://github.com/hexpm/hexpm/pull/77", MergedAt: dashNow.AddDate(0, 0, -3)}}),
			want: []string{"↩️ came back after [PR #77](https://github.com/hexpm/hexpm/pull/77) (merged on 1 Dec 2026). Run: 🕓 queued"}},
		{name: "seen in an issue only", test: runs.FlakyTest{Key: "flaky:hexpm/hexpm:test/a_test.exs:9", Sighting: runs.Sighting{Count: 1, FirstSeen: dashNow, LastSeen: dashNow, Where: "https://github.com/hexpm/hexpm/issues/12"}},
			want: []string{"- [ ] `test/a_test.exs:9` <!--", "  - Seen 1 time, first on 4 Dec 2026, last on 4 Dec 2026 in [issue](https://github.com/hexpm/hexpm/issues/12)."}},
		{name: "hostile names from a CI log", test: func() runs.FlakyTest {
			f := flakyTest(6, nil)
			f.Sighting.Name, f.Sighting.Module = "closes #1 @everyone <img src=x> [x](javascript:alert(1))", "Mod` @admins"
			f.Sighting.Where = "javascript:alert(1)"
			return f
		}(), want: []string{"closes #\u200b1 @\u200beveryone \\<img src=x\\> \\[x\\](javascript:alert(1))", "(``Mod` @admins``)", "last on 4 Dec 2026 at `5779607`."}},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := RenderDashboard(DashboardView{Repo: "hexpm/hexpm", Tests: []runs.FlakyTest{c.test}, Total: 1})
			for _, w := range c.want {
				if !strings.Contains(body, w) {
					t.Errorf("lacks %q:\n%s", w, body)
				}
			}
			for _, w := range c.not {
				if strings.Contains(body, w) {
					t.Errorf("has %q:\n%s", w, body)
				}
			}
			if got := Ticks(strings.Replace(body, "- [ ]", "- [x]", 1)); len(got) != 1 || got[0] != TickID(c.test.Key) {
				t.Errorf("ticking the box reads %v, want [%s]", got, TickID(c.test.Key))
			}
		})
	}
}

func TestADashboardStaysUnderGitHubsLimit(t *testing.T) {
	var tests []runs.FlakyTest
	for i := range 2000 {
		f := flakyTest(i, nil)
		f.Sighting.Name = strings.Repeat("a long test name ", 12)
		tests = append(tests, f)
	}
	body := RenderDashboard(DashboardView{Tests: tests, Total: 2500})
	if len(body) > dashboardBudget+1000 || utf8.RuneCountInString(body) > 65536 {
		t.Fatalf("body of %d bytes", len(body))
	}
	shown := strings.Count(body, "- [ ] ")
	if !strings.Contains(body, fmt.Sprintf("and %d more, seen less recently.", 2500-shown)) || shown < 50 {
		t.Fatalf("%d shown; tail %q", shown, body[len(body)-200:])
	}
}

func TestOnlyTickedBoxesWithAMarkerAreRead(t *testing.T) {
	id := TickID("flaky:hexpm/hexpm:test/a_test.exs:1")
	other := TickID("flaky:hexpm/hexpm:test/b_test.exs:2")
	for _, c := range []struct {
		name, body string
		want       string
	}{
		{"ticked", "- [x] `test/a_test.exs:1` <!-- pitcrew:tick:" + id + " -->", id},
		{"ticked with a capital X, CRLF", "- [X] `a` <!-- pitcrew:tick:" + id + " -->\r\n", id},
		{"unticked", "- [ ] `a` <!-- pitcrew:tick:" + id + " -->", ""},
		{"no marker", "- [x] `test/a_test.exs:1`", ""},
		{"a marker in a quote", "> - [x] <!-- pitcrew:tick:" + id + " -->", ""},
		{"a marker in a code block", "    - [x] <!-- pitcrew:tick:" + id + " -->", ""},
		{"a forged marker", "- [x] <!-- pitcrew:tick:" + id + "ff -->", ""},
		{"twice, and another", "- [x] <!-- pitcrew:tick:" + id + " -->\n* [x] <!-- pitcrew:tick:" + id + " -->\n+ [x] b <!-- pitcrew:tick:" + other + " -->", id + " " + other},
	} {
		if got := strings.Join(Ticks(c.body), " "); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	var many strings.Builder
	for i := range 500 {
		fmt.Fprintf(&many, "- [x] <!-- pitcrew:tick:%012x -->\n", i)
	}
	if n := len(Ticks(many.String())); n != maxTicks {
		t.Fatalf("%d ticks read from one edit, want at most %d", n, maxTicks)
	}
}

func FuzzTicks(f *testing.F) {
	f.Add("- [x] `test/a_test.exs:1` <!-- pitcrew:tick:0123456789ab -->\n- [ ] b")
	f.Add(RenderDashboard(DashboardView{Tests: []runs.FlakyTest{flakyTest(1, nil)}, Total: 1}))
	f.Fuzz(func(t *testing.T, body string) {
		ids := Ticks(body)
		if len(ids) > maxTicks {
			t.Fatalf("%d ids", len(ids))
		}
		seen := map[string]bool{}
		for _, id := range ids {
			if len(id) != 12 || strings.Trim(id, "0123456789abcdef") != "" || seen[id] || !strings.Contains(body, "<!-- pitcrew:tick:"+id+" -->") {
				t.Fatalf("id %q read from %q", id, body)
			}
			seen[id] = true
		}
	})
}

// A test predicted to flake next has a row of its own until it is seen;
// once seen, its row says it was predicted, and from which fix. Its box is
// read like any other.
func TestAPredictedTestHasARowUntilItIsSeen(t *testing.T) {
	seen := flakyTest(1, nil)
	at := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	predicted := []runs.Predicted{
		{Key: "flaky:hexpm/hexpm:test/hexpm/web/assets_test.exs:4", Test: "test/hexpm/web/assets_test.exs:4", Name: "asset urls", Why: "reads :hexpm, :cdn_url (app-env) in a module that runs async", PR: 77, At: at,
			Commit: "9a1f0c3e5b7d2468ace13579bdf02468ace13579"},
		{Key: seen.Key, Test: seen.Test(), Why: "a sleep stands in for an asynchronous event before an assertion", PR: 76, At: at},
	}
	body := RenderDashboard(DashboardView{Repo: "hexpm/hexpm", Tests: []runs.FlakyTest{seen}, Total: 1, Predicted: predicted})
	for _, want := range []string{
		"  - Predicted on 3 Dec 2026 from [PR #76](https://github.com/hexpm/hexpm/pull/76): a sleep stands in for an asynchronous event before an assertion.\n",
		"### Predicted, not seen yet",
		"- [ ] `test/hexpm/web/assets_test.exs:4` asset urls <!-- pitcrew:tick:" + TickID(predicted[0].Key) + " -->\n" +
			"  - Predicted on 3 Dec 2026 from [PR #77](https://github.com/hexpm/hexpm/pull/77) ([the test](https://github.com/hexpm/hexpm/blob/9a1f0c3e5b7d2468ace13579bdf02468ace13579/test/hexpm/web/assets_test.exs#L4)): reads :hexpm, :cdn\\_url (app-env) in a module that runs async.\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("dashboard lacks %q:\n%s", want, body)
		}
	}
	if strings.Count(body, "Predicted on") != 2 {
		t.Errorf("a seen test is listed again under the predicted ones:\n%s", body)
	}
	ticked := strings.Replace(body, "- [ ] `test/hexpm/web/assets_test.exs:4`", "- [x] `test/hexpm/web/assets_test.exs:4`", 1)
	if ids := Ticks(ticked); len(ids) != 1 || ids[0] != TickID(predicted[0].Key) {
		t.Errorf("ticks %v", ids)
	}
}

// A test's row names its file's owners and says when its quarantine ran
// out, so a maintainer can tick it back in.
func TestADashboardRowNamesOwnersAndAnExpiredQuarantine(t *testing.T) {
	seen := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	test := runs.FlakyTest{Key: "flaky:hexpm/hexpm:test/a_test.exs:3", Sighting: runs.Sighting{Count: 2, FirstSeen: seen, LastSeen: seen}}
	body := RenderDashboard(DashboardView{Repo: "hexpm/hexpm", Tests: []runs.FlakyTest{test}, Total: 1,
		Owners:          map[string]runs.Owners{"test/a_test.exs": {Listed: []string{"@hexpm/core"}}},
		OutOfQuarantine: map[string]time.Time{test.Key: seen.Add(14 * 24 * time.Hour)}})
	for _, want := range []string{"  - Owners: `@hexpm/core`.\n", "  - ⏳ Out of quarantine since 15 Nov 2026: its CI failures are no longer re-run"} {
		if !strings.Contains(body, want) {
			t.Errorf("dashboard lacks %q:\n%s", want, body)
		}
	}
}
