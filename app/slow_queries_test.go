package app

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/sandbox"
)

// slowQueriesSample is a slow-queries.json built from real PostgreSQL
// plans (evidence/testdata/slowq/make.sh), as measured on the merge
// commit.
func slowQueriesSample(t *testing.T, name string) string {
	b, err := os.ReadFile(testenv.Path("evidence", "testdata", "slowq", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), `"after_commit": "2222222222222222222222222222222222222222"`, `"after_commit": "`+testenv.MergeSHA+`"`)
}

// slowChecks are the "pitcrew / slow queries" check runs written.
func (h *harness) slowChecks() []map[string]any { return h.checkRunsNamed(publish.SlowCheckName) }

// A merged migration: the prompt follows the repository's own settings;
// the run's slow-queries.json, checked by pitcrew, becomes a neutral check
// run on the merge commit whose title says what the migration did, and
// the comment links it with the report folded.
func TestSlowQueriesAreMeasuredAndCheckedOnTheMergeCommit(t *testing.T) {
	for _, tc := range []struct {
		name, json, title string
		ectoFile          bool
		want              []string
	}{
		{"the numbers agree", "agrees.json", "1 page slower after this migration: /customers/3/orders 19 -> 34.7 ms", true,
			[]string{"| /customers/3/orders | 19 ms | 34.7 ms | slower |", "[Shop.Orders.list\\_open\\_orders/2](https://github.com/hexpm/hexpm/blob/" + testenv.MergeSHA + "/lib/shop/orders.ex#L42)", "| 13 ms → 28.7 ms | index | 0.1 ms | ✔️ |", "Seeded: customers 20000 · orders 300000"}},
		{"a time disagrees with its plan", "time_disagrees.json", "1 page slower after this migration: /customers/3/orders 19 -> 34.7 ms · 1 query's numbers or Ecto site do not check out", true,
			[]string{"⚠️ 1 problem", "the time after the migration (86 ms) disagrees with its plan's Execution Time (28.7 ms)"}},
		{"the Ecto site does not exist", "agrees.json", "1 page slower after this migration: /customers/3/orders 19 -> 34.7 ms · 1 query's numbers or Ecto site do not check out", false,
			[]string{"`lib/shop/orders.ex` does not exist at this commit"}},
		{"an index with no write cost", "index_no_write_cost.json", "1 page slower after this migration: /customers/3/orders 19 -> 34.7 ms", true,
			[]string{"| ✔️ write cost: not checked |"}},
		{"the report measured another commit", "other_commit", "1 page slower after this migration: /customers/3/orders 19 -> 34.7 ms · 1 query's numbers or Ecto site do not check out", true,
			[]string{"⚠️ the report says it measured commit `2222222222222222222222222222222222222222`, not the one profiled"}},
		{"malformed", "malformed.json", "Slow queries: not read (slow-queries.json does not fit its schema: /queries/0/ecto/line: minimum: got 0, want 1)", true,
			[]string{"⚠️ Not read"}},
		{"missing", "", "Slow queries: not read (the run left no slow-queries.json (or one larger than pitcrew reads))", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, true)
			h.gh.SetFile("hexpm/hexpm", ".github/pitcrew.yml", "migrations:\n  pages: [/customers/3/orders, /customers]\n  threshold_ms: 20\n")
			if tc.ectoFile {
				h.gh.SetFile("hexpm/hexpm", "lib/shop/orders.ex", strings.Repeat("# line\n", 60))
			}
			h.gh.SetPullFiles(12, "added priv/repo/migrations/20261201120000_add_order_status.exs")
			h.deliver("pull_request", testenv.DeliveryID(), testenv.MergedPullEvent(t, 12, testenv.MergeSHA))
			h.eventually("the started comment", h.commentContains(12, "A profiling run started"))
			reqs, _ := h.sandbox.StartRequests()
			for _, want := range []string{"- `/customers/3/orders`", "- `/customers`", "log_min_duration_statement = 20", "`git rev-parse " + testenv.MergeSHA + "^1`", "slow-queries.json"} {
				if !strings.Contains(reqs[0].Input, want) {
					t.Errorf("prompt lacks %q", want)
				}
			}
			h.sandbox.AddArtifact("ses_1", publish.ReportName, "# Slow queries\n\nOne page slower.\n")
			switch tc.json {
			case "":
			case "other_commit":
				b, _ := os.ReadFile(testenv.Path("evidence", "testdata", "slowq", "agrees.json"))
				h.sandbox.AddArtifact("ses_1", evidence.SlowQueriesName, string(b))
			default:
				h.sandbox.AddArtifact("ses_1", evidence.SlowQueriesName, slowQueriesSample(t, tc.json))
			}
			h.finish("ses_1", sandbox.StatusCompleted, "Report written.")
			h.eventually("the check run", func() bool { return len(h.slowChecks()) == 1 })
			c := h.slowChecks()[0]
			out := c["output"].(map[string]any)
			if c["head_sha"] != testenv.MergeSHA || c["conclusion"] != "neutral" || out["title"] != tc.title {
				t.Fatalf("check run: %v %v %q", c["head_sha"], c["conclusion"], out["title"])
			}
			for _, want := range tc.want {
				if !strings.Contains(fmt.Sprint(out["summary"]), want) {
					t.Errorf("summary lacks %q:\n%s", want, out["summary"])
				}
			}
			h.eventually("the report", h.commentContains(12, "One page slower."))
			if body := h.statusComment(12).Body; !strings.Contains(body, "Measured and checked: [pitcrew / slow queries](https://github.com/hexpm/hexpm/commit/"+testenv.MergeSHA+"/checks)") ||
				!strings.Contains(body, "<details><summary>The agent's report</summary>") {
				t.Fatalf("comment:\n%s", body)
			}
		})
	}
}

// /pitcrew open-pr on the report: the pull request the agent opens gets
// the same table on its head.
func TestThePullRequestOpenedFromTheReportGetsItsTable(t *testing.T) {
	h := newHarness(t, true)
	h.gh.SetFile("hexpm/hexpm", "lib/shop/orders.ex", strings.Repeat("# line\n", 60))
	h.gh.SetPullFiles(12, "added priv/repo/migrations/20261201120000_add_order_status.exs")
	h.deliver("pull_request", testenv.DeliveryID(), testenv.MergedPullEvent(t, 12, testenv.MergeSHA))
	h.eventually("the started comment", h.commentContains(12, "A profiling run started"))
	h.sandbox.AddArtifact("ses_1", publish.ReportName, "# Slow queries\n")
	h.sandbox.AddArtifact("ses_1", evidence.SlowQueriesName, slowQueriesSample(t, "agrees.json"))
	h.finish("ses_1", sandbox.StatusCompleted, "Report written.")
	h.eventually("the merge's check run", func() bool { return len(h.slowChecks()) == 1 })

	const fixHead = "3333333333333333333333333333333333333333"
	h.gh.SetPull(1400, fixHead, "open", false, "diff --git a/priv/repo/migrations/20261202090000_index_orders.exs b/priv/repo/migrations/20261202090000_index_orders.exs\n"+
		"new file mode 100644\n--- /dev/null\n+++ b/priv/repo/migrations/20261202090000_index_orders.exs\n@@ -0,0 +1,1 @@\n+# create index(:orders, [:customer_id, :status, :inserted_at])\n")
	h.deliver("issue_comment", testenv.DeliveryID(), testenv.CommentEvent(t, "alice", 12, 801, "/pitcrew open-pr", true))
	h.eventually("the follow-up", h.commentContains(12, "The agent is opening the change it measured as a pull request"))
	h.finish("ses_1", sandbox.StatusCompleted, "Added the index.\n\nhttps://github.com/hexpm/hexpm/pull/1400\n")
	h.eventually("the fix's check run", func() bool { return len(h.slowChecks()) == 2 })
	c := h.slowChecks()[1]
	if c["head_sha"] != fixHead || c["output"].(map[string]any)["title"] != "1 page slower after this migration: /customers/3/orders 19 -> 34.7 ms" {
		t.Fatalf("the fix's check run: %v %v", c["head_sha"], c["output"])
	}
}
