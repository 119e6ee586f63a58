package app

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/sandbox"
)

// evidenceRuns are the "pitcrew / evidence" check runs, in order.
func (h *harness) evidenceRuns() []map[string]any { return h.checkRunsNamed(publish.EvidenceCheckName) }

// checkRunsNamed are the check runs of that name, in order.
func (h *harness) checkRunsNamed(name string) []map[string]any {
	var out []map[string]any
	for _, c := range h.gh.CheckRuns() {
		if c["name"] == name {
			out = append(out, c)
		}
	}
	return out
}

// handled reports whether n deliveries of the event type were handled.
func (h *harness) handled(event string, n int) func() bool {
	re := regexp.MustCompile(`"github_event_type":"` + event + `"[^\n]*"delivery handled"`)
	return func() bool { return len(re.FindAllString(h.logs.String(), -1)) == n }
}

func diffSample(t *testing.T, name string) string {
	b, err := os.ReadFile(testenv.Path("evidence", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The pull request a fix run opened is followed from the run's end to its
// merge: its diff checked on each head (a check run with annotations),
// its CI, its reviews and its merge shown on the status comment.
func TestTheAgentsPullRequestIsFollowedToItsMerge(t *testing.T) {
	h := newHarness(t, true)
	const head1, head2 = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	h.gh.SetPull(1234, head1, "open", false, diffSample(t, "flaky/sleep_added.diff"))
	h.gh.SetHeadSuite(head1, "github-actions", "")
	h.startOne(30)
	before := len(h.gh.Requests())
	h.finish("ses_1", sandbox.StatusCompleted, fixedAnswer)
	h.eventually("the pull request on the status comment", h.commentContains(30, "· CI running · evidence: 1 concern"))

	body := h.statusComment(30).Body
	for _, want := range []string{"[PR #1234](https://github.com/hexpm/hexpm/pull/1234)", "`test/hexpm/repository/package_search_test.exs:42` concern `+ Process.sleep(200)`: a sleep waits"} {
		if !strings.Contains(body, want) {
			t.Fatalf("status comment lacks %q:\n%s", want, body)
		}
	}
	checks := h.evidenceRuns()
	if len(checks) != 1 || checks[0]["head_sha"] != head1 || checks[0]["conclusion"] != "neutral" {
		t.Fatalf("evidence check runs: %+v", checks)
	}
	out, _ := json.Marshal(checks[0]["output"])
	if !strings.Contains(string(out), `"annotation_level":"warning"`) || !strings.Contains(string(out), `"start_line":42`) || !strings.Contains(string(out), `"title":"sleep-added"`) {
		t.Fatalf("evidence output: %s", out)
	}
	// Each step's GitHub calls: reading the pull request, its diff and its
	// head's suites and posting the check run only on a head not seen.
	const (
		getPull, getSuites, postCheck = "GET /repos/{owner}/{repo}/pulls/{pull_number}", "GET /repos/{owner}/{repo}/commits/{ref}/check-suites", "POST /repos/{owner}/{repo}/check-runs"
		editComment                   = "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}"
		// Each changed Elixir file is read at the base and at the head.
		getFile = "GET /repos/{owner}/{repo}/contents/{path}"
	)
	step := func(name string, want map[string]int) {
		t.Helper()
		got := h.callsSince(before)
		before = len(h.gh.Requests())
		t.Logf("GitHub calls for %s: %v", name, got)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("GitHub calls for %s: %v, want %v", name, got, want)
		}
	}
	// The changed file read whole at the head (2), and CODEOWNERS looked for
	// where GitHub looks (3), for the review of the test file's owners.
	step("the outcome, following the pull request", map[string]int{getPull: 2, getSuites: 1, getFile: 2 + 3, postCheck: 1, editComment: 1})

	// The CI finishes on the head: the comment says so.
	h.deliver("check_suite", testenv.DeliveryID(), testenv.CheckSuiteEvent(t, head1, "github-actions", "success", 1234))
	h.eventually("CI passed", h.commentContains(30, "· CI passed · evidence: 1 concern"))
	step("a CI verdict", map[string]int{editComment: 1})
	// A suite of pitcrew's own check runs is not the CI: nothing to read or write.
	h.deliver("check_suite", testenv.DeliveryID(), testenv.CheckSuiteEvent(t, head1, "pitcrew", "neutral", 1234))
	h.eventually("pitcrew's suite handled", h.handled("check_suite", 2))
	step("pitcrew's own suite", map[string]int{})

	// A push replaces the sleep with a real fix: checked again, on the new head.
	h.gh.SetPull(1234, head2, "open", false, diffSample(t, "flaky/real_fix_sync.diff"))
	h.deliver("pull_request", testenv.DeliveryID(), testenv.PullSyncEvent(t, 1234, head2))
	h.eventually("the new head checked", h.commentContains(30, "· CI not reported yet · evidence: clean"))
	if checks := h.evidenceRuns(); len(checks) != 2 || checks[1]["head_sha"] != head2 || checks[1]["conclusion"] != "success" {
		t.Fatalf("evidence check runs after the push: %+v", checks)
	}
	// The new head's fix removes a sleep: the default branch's tests are
	// scanned for siblings, from one tarball.
	step("a push", map[string]int{getPull: 2, getSuites: 1, getFile: 4, "GET /repos/{owner}/{repo}/tarball/{ref}": 1, postCheck: 1, editComment: 1})

	h.deliver("pull_request_review", testenv.DeliveryID(), testenv.ReviewEvent(t, 1234, "alice", "approved"))
	h.eventually("approved", h.commentContains(30, "· evidence: clean · approved"))
	step("a review", map[string]int{editComment: 1})

	h.gh.SetPull(1234, head2, "closed", true, diffSample(t, "flaky/real_fix_sync.diff"))
	h.deliver("pull_request", testenv.DeliveryID(), testenv.Event(t, "pull_request.closed.json", func(ev map[string]any) {
		pr := ev["pull_request"].(map[string]any)
		pr["number"], pr["merged"] = 1234, true
	}))
	h.eventually("merged", h.commentContains(30, "· approved · merged 2 Dec"))
	// The comment is edited before the merge's files are read: wait for the
	// whole delivery, the push's and the merge's.
	h.eventually("the merge handled", h.handled("pull_request", 2))
	// The merge reads the pull request again; the list of its files is the
	// migration job's look at every merge.
	step("the merge", map[string]int{getPull: 1, "GET /repos/{owner}/{repo}/pulls/{pull_number}/files": 1, editComment: 1})
	if n := len(h.evidenceRuns()); n != 2 {
		t.Fatalf("%d evidence check runs: a merge of a checked head checks nothing again", n)
	}
}

// A pull request that does not exist is said plainly; one of a pull
// request no run opened costs nothing.
func TestAPullRequestThatIsGoneOrNotOursIsHandledQuietly(t *testing.T) {
	h := newHarness(t, true)
	h.startOne(31)
	h.finish("ses_1", sandbox.StatusCompleted, fixedAnswer)
	h.eventually("the pull request gone", h.commentContains(31, "[PR #1234](https://github.com/hexpm/hexpm/pull/1234) no longer exists."))
	before := len(h.gh.Requests())
	h.deliver("pull_request", testenv.DeliveryID(), testenv.PullSyncEvent(t, 999, "3333333333333333333333333333333333333333"))
	h.deliver("check_suite", testenv.DeliveryID(), testenv.CheckSuiteEvent(t, "3333333333333333333333333333333333333333", "github-actions", "failure", 999))
	h.eventually("both handled", func() bool { return strings.Count(h.logs.String(), `"message":"delivery handled"`) >= 3 })
	if n := len(h.gh.Requests()) - before; n != 0 {
		t.Fatalf("%d GitHub calls for events of a pull request pitcrew does not follow", n)
	}
}

// A test that flakes again after its fix was merged starts a run whose
// prompt names that fix, and the issue says it came back.
func TestAFlakeThatComesBackAfterItsMergedFix(t *testing.T) {
	h := newHarness(t, true)
	h.gh.SetFile("hexpm/hexpm", ".github/pitcrew.yml", "flaky:\n  cooldown: 0s\n")
	const head = "1111111111111111111111111111111111111111"
	h.gh.SetPull(1234, head, "closed", true, diffSample(t, "flaky/real_fix_sync.diff"))
	h.startOne(32)
	h.finish("ses_1", sandbox.StatusCompleted, fixedAnswer)
	h.eventually("the merged fix", h.commentContains(32, "· evidence: clean · merged 2 Dec"))

	h.deliver("issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky", "alice", 33, flakyTest, ""))
	h.eventually("the new run", h.commentContains(33, "↩️ came back after [PR #1234](https://github.com/hexpm/hexpm/pull/1234) (merged on 2 Dec). 🔄 the agent is working on it"))
	starts, _ := h.sandbox.StartRequests()
	if len(starts) != 2 || !strings.Contains(starts[1].Input, "This test was fixed before, by https://github.com/hexpm/hexpm/pull/1234 (merged on 2 December 2026)") {
		t.Fatalf("%d sessions; the second prompt:\n%s", len(starts), starts[len(starts)-1].Input)
	}
}
