package app

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/sandbox"
)

const report = `# Slow queries after 20261201_add_downloads_index

Seeded: 40,000 packages, 180,000 releases, 95,000 dependencies. Materialized views refreshed at 10:42 UTC after seeding.

Pages: /packages?sort=name, /packages?sort=recent_downloads, /packages/phoenix, /packages/phoenix/dependents.

## 1. Package list sorted by downloads (412 ms)

` + "```sql\nSELECT p0.* FROM packages p0 ORDER BY downloads DESC LIMIT 30\n```" + `

Built by Hexpm.Repository.Packages.all/4 (lib/hexpm/repository/packages.ex:88). Thanks @ericmj — this fixes #123 and closes hexpm/hexpm#45.

## 2. N+1 on the dependants page

One query per release for its requirements: preload :requirements in Hexpm.Repository.Releases.
`

func TestMergedMigrationReportOnThePullRequest(t *testing.T) {
	h := newHarness(t, true)
	files := []string{"modified lib/hexpm/repository/packages.ex"}
	for i := 0; i < 120; i++ { // more than a page of files
		files = append(files, fmt.Sprintf("modified lib/hexpm/file_%03d.ex", i))
	}
	files = append(files,
		"added priv/repo/migrations/20261201120000_add_downloads_index.exs",
		"renamed priv/repo/drafts/change_releases.exs -> priv/repo/migrations/20261201130000_change_releases.exs",
		"removed priv/repo/migrations/20200101000000_old.exs")
	h.gh.SetPullFiles(12, files...)
	payload := testenv.MergedPullEvent(t, 12, testenv.MergeSHA)
	var wg sync.WaitGroup
	for i := 0; i < 5; i++ { // redelivered and replayed
		wg.Add(1)
		go func() { defer wg.Done(); h.deliver("pull_request", testenv.DeliveryID(), payload) }()
	}
	wg.Wait()
	h.eventually("the started comment", h.commentContains(12, "A profiling run started"))
	reqs, keys := h.sandbox.StartRequests()
	if h.sandbox.SessionCount() != 1 || keys[0] != "migration:hexpm/hexpm:"+testenv.MergeSHA+"#1" {
		t.Fatalf("%d sessions, keys %q", h.sandbox.SessionCount(), keys)
	}
	for _, want := range []string{"`priv/repo/migrations/20261201120000_add_downloads_index.exs`", "`priv/repo/migrations/20261201130000_change_releases.exs`", "pull request #12"} {
		if !strings.Contains(reqs[0].Input, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if strings.Contains(reqs[0].Input, "20200101000000_old") {
		t.Error("a removed migration is in the prompt")
	}

	h.sandbox.AddArtifact("ses_1", publish.ReportName, report)
	h.finish("ses_1", sandbox.StatusCompleted, "Report written.")
	h.eventually("the report", h.commentContains(12, "Package list sorted by downloads"))
	c := h.statusComment(12).Body
	for _, want := range []string{"materialized views: Seeded: 40,000 packages", "## 2. N+1 on the dependants page", "@\u200bericmj", "fixes #\u200b123", "closes hexpm/hexpm#\u200b45"} {
		if !strings.Contains(c, want) {
			t.Errorf("comment lacks %q:\n%s", want, c)
		}
	}
	if strings.Contains(c, " @ericmj") || strings.Contains(c, "fixes #123") {
		t.Error("a mention or closing keyword survived")
	}
	if n := h.gh.Count(opCreateComment); n != 1 {
		t.Fatalf("%d comments created", n)
	}
}

// A migration named with a backtick is skipped with a note, in a code
// span it cannot break out of; the merge's other migrations are profiled.
func TestAMigrationNameWithABacktickIsSkippedNotFatal(t *testing.T) {
	h := newHarness(t, true)
	h.gh.SetPullFiles(14, "added priv/repo/migrations/20261201120000_add_index.exs",
		"added priv/repo/migrations/20261201130000_`@octocat`<b>x.exs")
	h.deliver("pull_request", testenv.DeliveryID(), testenv.MergedPullEvent(t, 14, testenv.MergeSHA))
	h.eventually("the started comment", h.commentContains(14, "A profiling run started"))
	reqs, _ := h.sandbox.StartRequests()
	if h.sandbox.SessionCount() != 1 || !strings.Contains(reqs[0].Input, "20261201120000_add_index.exs") || strings.Contains(reqs[0].Input, "octocat") {
		t.Fatalf("%d sessions; the prompt must name the good migration only", h.sandbox.SessionCount())
	}
	c := h.statusComment(14).Body
	if !strings.Contains(c, "1 migration file was skipped") || !strings.Contains(c, "``priv/repo/migrations/20261201130000_`@octocat`<b>x.exs``") {
		t.Fatalf("comment:\n%s", c)
	}

	// Only such names: nothing is profiled, and the comment says why.
	h.gh.SetPullFiles(15, "added priv/repo/migrations/2_`x`.exs")
	h.deliver("pull_request", testenv.DeliveryID(), testenv.MergedPullEvent(t, 15, strings.Repeat("d", 40)))
	h.eventually("the notice", h.commentContains(15, "Not profiled: 1 migration file was skipped"))
	if h.sandbox.SessionCount() != 1 {
		t.Fatalf("%d sessions", h.sandbox.SessionCount())
	}
}

func TestMergeWithoutMigrationsCostsOneCall(t *testing.T) {
	h := newHarness(t, true)
	h.gh.SetPullFiles(13, "modified lib/hexpm.ex", "added test/hexpm_test.exs")
	h.deliver("pull_request", testenv.DeliveryID(), testenv.MergedPullEvent(t, 13, testenv.MergeSHA))
	h.eventually("the delivery handled", func() bool { return strings.Contains(h.logs.String(), "delivery handled") })
	calls := 0
	for _, r := range h.gh.Requests() {
		if !strings.HasSuffix(r.Operation, "/access_tokens") {
			calls++
		}
	}
	if calls != 1 || h.sandbox.SessionCount() != 0 {
		t.Fatalf("%d calls, %d sessions", calls, h.sandbox.SessionCount())
	}
}

func TestLongReportIsCutAtASection(t *testing.T) {
	h := newHarness(t, true)
	h.gh.SetPullFiles(14, "added apps/hexpm_core/priv/repo/migrations/20261201_x.exs")
	h.deliver("pull_request", testenv.DeliveryID(), testenv.MergedPullEvent(t, 14, testenv.MergeSHA))
	h.eventually("the run", h.commentContains(14, "A profiling run started"))
	var long strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&long, "## Query %d\n\n%s\n\n", i, strings.Repeat("EXPLAIN line with buffers\n", 20))
	}
	h.sandbox.AddArtifact("ses_1", publish.ReportName, long.String())
	h.finish("ses_1", sandbox.StatusCompleted, "done")
	h.eventually("the cut report", h.commentContains(14, "the remaining sections are in [the run]("))
	c := h.statusComment(14).Body
	if len(c) > publish.MaxCommentLen || !strings.Contains(c, "## Query 0\n") {
		t.Fatalf("comment of %d bytes", len(c))
	}
	before := c[:strings.Index(c, "\n\n---\n*The report is longer")]
	if !strings.HasSuffix(strings.TrimRight(before, "\n"), "EXPLAIN line with buffers") || strings.HasSuffix(strings.TrimRight(before, "\n"), "## Query") {
		t.Fatalf("not cut at a section boundary: %q", before[len(before)-80:])
	}
}

func TestRunWithoutReportAndFailedRun(t *testing.T) {
	h := newHarness(t, true)
	h.gh.SetPullFiles(15, "added priv/repo/migrations/20261201_a.exs")
	h.gh.SetPullFiles(16, "added priv/repo/migrations/20261201_b.exs")
	h.deliver("pull_request", testenv.DeliveryID(), testenv.MergedPullEvent(t, 15, testenv.MergeSHA))
	h.deliver("pull_request", testenv.DeliveryID(), testenv.MergedPullEvent(t, 16, strings.Repeat("d", 40)))
	h.eventually("two runs", func() bool { return h.sandbox.SessionCount() == 2 })
	h.eventually("two comments", func() bool { return h.gh.Count(opCreateComment) == 2 })
	for _, id := range h.sandbox.SessionIDs() {
		status := sandbox.StatusCompleted
		if id == "ses_2" {
			status = sandbox.StatusFailed
		}
		h.finish(id, status, "Postgres did not start.")
	}
	h.eventually("both outcomes", func() bool {
		all := ""
		for _, n := range []int{15, 16} {
			if cs := h.gh.Comments("hexpm/hexpm", n); len(cs) == 1 {
				all += cs[0].Body
			}
		}
		return strings.Contains(all, "ended without producing `slow-queries.md`") && strings.Contains(all, "The profiling run failed: Postgres did not start.")
	})
}

func TestPushWithoutPullRequestCommentsOnTheCommit(t *testing.T) {
	h := newHarness(t, true)
	push := func(after string) []byte {
		return testenv.PushEvent(t, after, []any{"priv/repo/migrations/20261202_hotfix.exs"}, []any{})
	}
	direct, merged := strings.Repeat("e", 40), strings.Repeat("f", 40)
	h.gh.SetMergedPullFor(merged, 20)
	h.deliver("push", testenv.DeliveryID(), push(direct))
	h.deliver("push", testenv.DeliveryID(), push(merged))
	h.eventually("the commit comment", func() bool {
		cs := h.gh.CommitComments(direct)
		return len(cs) == 1 && strings.Contains(cs[0].Body, "A profiling run started")
	})
	h.eventually("both pushes handled", func() bool { return strings.Count(h.logs.String(), "delivery handled") == 2 })
	if h.sandbox.SessionCount() != 1 || len(h.gh.CommitComments(merged)) != 0 {
		t.Fatalf("%d sessions; the merged PR's push must be left to its pull_request event", h.sandbox.SessionCount())
	}
}
