package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/sandbox"
)

const (
	demoRepo      = "hexpm/hexpm"
	demoFlakyTest = "test/hexpm/web/controllers/package_controller_test.exs:42"
	demoMigration = 12
	demoReport    = "# Slow queries after 20261201_add_downloads_index\n\n" +
		"Seeded: 40,000 packages, 180,000 releases. Materialized views refreshed at 10:42 UTC after seeding.\n\n" +
		"## 1. Package list sorted by downloads (412 ms)\n\n```sql\nSELECT p0.* FROM packages p0 ORDER BY downloads DESC LIMIT 30\n```\n\n" +
		"Built by Hexpm.Repository.Packages.all/4 (lib/hexpm/repository/packages.ex:88): the new index is not used.\n"
)

// answer is the scripted agent's answer: some prose and its result block.
func answer(prose, result string) string { return prose + "\n```json\n" + result + "\n```" }

// play runs every story in order, each under its heading.
func (d *demo) play() (err error) {
	defer recoverFailure(&err)
	fmt.Fprintf(d.out, "# pitcrew demo\n\npitcrew's real routes and queue worker on %s, against built-in fakes of GitHub and the sandbox, an embedded Redis and a scripted agent.\n\n", d.url)
	for _, story := range []func(){d.flakyLabel, d.rerunPassed, d.inJobRetry, d.migration, d.datadog, d.sentry, d.openPR, d.dashboardTick} {
		story()
	}
	return nil
}

func (d *demo) story(n int, title, sent string) {
	fmt.Fprintf(d.out, "## %d. %s\n\nSent: %s\n\nGitHub shows:\n\n", n, title, sent)
}

func (d *demo) showComments(issue int) {
	for _, c := range d.gh.Comments(demoRepo, issue) {
		fmt.Fprintf(d.out, "#### Comment on %s#%d\n\n%s\n\n", demoRepo, issue, strings.TrimSpace(c.Body))
	}
}

func (d *demo) showIssue(n int) {
	is := d.gh.Issues()[n]
	fmt.Fprintf(d.out, "#### Issue %s#%d: %v\n\n%s\n\n", demoRepo, n, is["title"], strings.TrimSpace(fmt.Sprint(is["body"])))
}

// checkRun is pitcrew's check run on a commit, when there is one.
func (d *demo) checkRun(sha string) map[string]any {
	for _, c := range d.gh.CheckRuns() {
		if c["head_sha"] == sha {
			return c
		}
	}
	return nil
}

func summaryOf(c map[string]any) string {
	if c == nil {
		return ""
	}
	s, _ := c["output"].(map[string]any)["summary"].(string)
	return s
}

func (d *demo) showCheckRun(sha string) {
	c := d.checkRun(sha)
	out := c["output"].(map[string]any)
	fmt.Fprintf(d.out, "#### Check run %q on %s (%v): %v\n\n%s\n\n", c["name"], sha[:7], c["conclusion"], out["title"], strings.TrimSpace(summaryOf(c)))
}

// session is the id the sandbox gave the first session started under an
// idempotency key that contains key (ses_N, N counting distinct keys) and
// not ended by the demo yet, waiting for its start.
func (d *demo) session(key string) string {
	var id string
	d.eventually("the session of "+key, func() bool {
		_, keys := d.sandbox.StartRequests()
		var seen []string
		for _, k := range keys {
			if !slices.Contains(seen, k) {
				seen = append(seen, k)
			}
			id = "ses_" + strconv.Itoa(slices.Index(seen, k)+1)
			if strings.Contains(k, key) && !d.ended[id] {
				return true
			}
		}
		return false
	})
	return id
}

// verify ends the next independent verification of a fix as the agent
// would: the seed fails on the base and passes on the head, as the run's
// evidence log shows.
func (d *demo) verify() {
	ses := d.session("verify:")
	d.sandbox.AddArtifact(ses, "pitcrew-evidence.log", d.runLog("verify_agrees.log"))
	d.finish(ses, sandbox.StatusCompleted, "Ran it.")
}

// runLog is a run's evidence log from evidence/testdata/runlogs.
func (d *demo) runLog(name string) string {
	b, err := os.ReadFile(testenv.Path("evidence", "testdata", "runlogs", name))
	if err != nil {
		d.Fatal(err)
	}
	return string(b)
}

func (d *demo) commentHas(issue int, text string) func() bool {
	return func() bool {
		cs := d.gh.Comments(demoRepo, issue)
		return len(cs) > 0 && strings.Contains(cs[len(cs)-1].Body, text)
	}
}

// issueTitled is the issue whose title starts with prefix, or 0.
func (d *demo) issueTitled(prefix string) int {
	for n, is := range d.gh.Issues() {
		if t, _ := is["title"].(string); strings.HasPrefix(t, prefix) {
			return n
		}
	}
	return 0
}

// pull puts the pull request the scripted agent opened on the GitHub
// fake, with a change from evidence/testdata (or diff itself, when it is
// one).
func (d *demo) pull(n int, diff string) {
	if !strings.HasPrefix(diff, "diff --git ") {
		b, err := os.ReadFile(testenv.Path("evidence", "testdata", diff))
		if err != nil {
			d.Fatal(err)
		}
		diff = string(b)
	}
	d.gh.SetPull(n, fmt.Sprintf("%040x", n), "open", false, diff)
}

// demoMigrationFix is the change the profiling session opens on /pitcrew open-pr.
const demoMigrationFix = "diff --git a/priv/repo/migrations/20261202090000_index_packages_downloads.exs b/priv/repo/migrations/20261202090000_index_packages_downloads.exs\n" +
	"new file mode 100644\nindex 0000000..1a2b3c4\n--- /dev/null\n+++ b/priv/repo/migrations/20261202090000_index_packages_downloads.exs\n@@ -0,0 +1,7 @@\n" +
	"+defmodule Hexpm.RepoBase.Migrations.IndexPackagesDownloads do\n+  use Ecto.Migration\n+\n+  def change do\n+    create index(:packages, [:downloads])\n+  end\n+end\n"

func (d *demo) flakyLabel() {
	d.story(1, "A `flaky` label on an issue", "issues.labeled (`flaky`, by alice) on #7, which names `"+demoFlakyTest+"`; the agent answers that it fixed it.")
	d.deliver("issues", testenv.LabeledEvent(d, "flaky", "alice", 7, "Flaky package controller test", "Fails about once in 30 CI runs:\n\n    "+demoFlakyTest))
	d.eventually("the status comment with the run", d.commentHas(7, "/s/"))
	d.pull(1234, "flaky/real_fix_sync.diff")
	ses := d.session(demoFlakyTest)
	d.sandbox.AddArtifact(ses, "pitcrew-evidence.log", d.runLog("backed.log"))
	d.finish(ses, sandbox.StatusCompleted, answer("Seed 8 failed.",
		`{"outcome": "fixed", "pr_url": "https://github.com/hexpm/hexpm/pull/1234", "cause": "The test raced the async indexer; it now waits for its :indexed message.", "seed": 8, "failures_before": 2, "failures_after": 0, "runs": 6}`))
	d.verify()
	d.eventually("the outcome, verified, in the status comment", d.commentHas(7, "agrees with the fix"))
	d.showComments(7)
}

func (d *demo) rerunPassed() {
	d.story(2, "A CI re-run that passed", "workflow_run.completed: run 111 of CI failed in two jobs, then passed on re-run (attempt 2); the agent fixes one test and cannot reproduce the other.")
	d.gh.SetJob(111, 1, 11, "test (seed 1)", "failure", testenv.ExUnitLog(d, "gha_fail_seed_1.txt"))
	d.gh.SetJob(111, 2, 110, "test (seed 1)", "success", testenv.ExUnitLog(d, "gha_pass_seed_2.txt"))
	d.gh.SetJob(111, 1, 12, "test (seed 33)", "failure", testenv.ExUnitLog(d, "fail_seed_33.txt"))
	d.gh.SetJob(111, 2, 120, "test (seed 33)", "success", testenv.ExUnitLog(d, "gha_pass_seed_2.txt"))
	d.deliver("workflow_run", testenv.RerunPassedEvent(d, 111, testenv.HeadSHA))
	d.eventually("the check run", func() bool {
		return strings.Contains(summaryOf(d.checkRun(testenv.HeadSHA)), "the agent is working on it")
	})
	d.pull(1301, "flaky/real_fix_sync.diff")
	ses := d.session("test/racy_b_test.exs:25")
	d.sandbox.AddArtifact(ses, "pitcrew-evidence.log", d.runLog("backed.log"))
	d.finish(ses, sandbox.StatusCompleted, answer("Seed 8 failed.",
		`{"outcome": "fixed", "pr_url": "https://github.com/hexpm/hexpm/pull/1301", "cause": "RacyBTest is async and another async test sets the same application env.", "seed": 8, "failures_before": 2, "failures_after": 0, "runs": 6}`))
	d.finish(d.session("test/racy_b_test.exs:20"), sandbox.StatusCompleted, answer("No failure in 500 runs.", `{"outcome":"not_reproduced","pr_url":null,"runs":500}`))
	d.verify()
	d.eventually("both outcomes on the check run", func() bool {
		s := summaryOf(d.checkRun(testenv.HeadSHA))
		return strings.Contains(s, "pull/1301") && strings.Contains(s, "agrees with the fix") && !strings.Contains(s, "the agent is working on it")
	})
	d.showCheckRun(testenv.HeadSHA)
}

func (d *demo) inJobRetry() {
	sha := strings.Repeat("b", 40)
	d.story(3, "An in-job retry", "workflow_run.completed: run 601 passed on its first attempt, but its job ran `mix test || mix test --failed` and a test failed before passing: the test story 2 fixed, so pitcrew counts the sighting and starts no new run.")
	d.gh.SetJob(601, 1, 61, "test", "success", testenv.ExUnitLog(d, "gha_pm_in_job_retry.txt"))
	d.gh.Annotate(61, "test/racy_b_test.exs", 25, "failure", "test get_env/2 sees mode b after work (RacyBTest)")
	d.gh.SetCheckSuite(880001, 601)
	d.deliver("workflow_run", testenv.WorkflowRunEvent(d, 601, 1, 880001, sha))
	d.eventually("the check run", func() bool { return d.checkRun(sha) != nil })
	d.showCheckRun(sha)
}

func (d *demo) migration() {
	d.story(4, "A merged migration (slow-query report)", fmt.Sprintf("pull_request.closed: #%d, which adds a migration, merged; the agent profiles it and leaves `%s`.", demoMigration, publish.ReportName))
	d.gh.SetPullFiles(demoMigration, "modified lib/hexpm/repository/packages.ex", "added priv/repo/migrations/20261201120000_add_downloads_index.exs")
	d.deliver("pull_request", testenv.MergedPullEvent(d, demoMigration, testenv.MergeSHA))
	d.eventually("the started comment", d.commentHas(demoMigration, "A profiling run started"))
	d.profiling = d.session("migration:" + demoRepo + ":" + testenv.MergeSHA)
	d.sandbox.AddArtifact(d.profiling, publish.ReportName, demoReport)
	d.finish(d.profiling, sandbox.StatusCompleted, "Report written.")
	d.eventually("the report", d.commentHas(demoMigration, "Package list sorted by downloads"))
	d.showComments(demoMigration)
}

func (d *demo) datadog() {
	d.story(5, "A Datadog alert", "a Datadog monitor's webhook (Triggered, tagged `pitcrew_repo:hexpm/hexpm`); the agent fixes the bug behind it.")
	before := d.sandbox.SessionIDs()
	body := testenv.DatadogAlert("1234567", "cycle-1", "Triggered", testenv.DatadogTags, "Error rate 7% on PackageController.show")
	d.post("/api/datadog/hook", map[string]string{"Content-Type": "application/json", "X-Pitcrew-Token": demoDatadogToken}, body)
	d.alertFixed("Datadog alert: ", before, 77, "Nil release in PackageController.show.")
}

// alertFixed waits for the tracking issue titled with prefix and its run
// (a session beyond before), has the agent answer that pull request pr
// fixes it for cause, and shows the issue once the answer is on it.
func (d *demo) alertFixed(prefix string, before []string, pr int, cause string) {
	var n int
	d.eventually("the tracking issue with its run", func() bool {
		n = d.issueTitled(prefix)
		return n != 0 && d.commentHas(n, "The agent is reading")()
	})
	d.pull(pr, "alert/nil_guard_clean.diff")
	url := fmt.Sprintf("https://github.com/hexpm/hexpm/pull/%d", pr)
	d.finish(d.newSession("the alert's run", before), sandbox.StatusCompleted, answer("Found it.", fmt.Sprintf(`{"outcome":"fixed","pr_url":%q,"cause":%q}`, url, cause)))
	d.eventually("the answer", d.commentHas(n, "Fixed in "+url))
	d.showIssue(n)
	d.showComments(n)
}

func (d *demo) sentry() {
	d.story(6, "A Sentry issue alert", "a Sentry issue alert (`event_alert`) of project hexpm-web, mapped to hexpm/hexpm; the agent fixes the bug behind it.")
	before := d.sandbox.SessionIDs()
	body := testenv.SentryReceived(d, "event_alert_phoenix.json", time.Now())
	d.post("/api/sentry/hook", map[string]string{"Content-Type": "application/json", "Sentry-Hook-Resource": "event_alert",
		"Sentry-Hook-Timestamp": strconv.FormatInt(time.Now().Unix(), 10), "Sentry-Hook-Signature": testenv.HMACHex(demoSentrySecret, body)}, body)
	d.alertFixed("Sentry issue: ", before, 81, "validate_metadata/2 had no clause for a nil name.")
}

func (d *demo) openPR() {
	d.story(7, "`/pitcrew open-pr` on the migration's pull request", fmt.Sprintf("issue_comment.created: alice writes `/pitcrew open-pr` on #%d; the profiling session is asked to open the change it measured.", demoMigration))
	d.deliver("issue_comment", testenv.CommentEvent(d, "alice", demoMigration, 801, "/pitcrew open-pr", true))
	d.eventually("the follow-up in the status comment", d.commentHas(demoMigration, "The agent is opening the change it measured as a pull request"))
	d.pull(1400, demoMigrationFix)
	d.finish(d.profiling, sandbox.StatusCompleted,
		"Added the index on packages.downloads: the package list sorted by downloads went from 412 ms to 9 ms.\n\nhttps://github.com/hexpm/hexpm/pull/1400\n")
	d.eventually("the pull request in the status comment", d.commentHas(demoMigration, "pull/1400"))
	d.showComments(demoMigration)
}

func (d *demo) dashboardTick() {
	const test = "`test/racy_b_test.exs:20`"
	var n int
	var body string
	dashboard := func() bool {
		for num, is := range d.gh.Issues() {
			if b, _ := is["body"].(string); strings.Contains(b, publish.DashboardMarker) {
				n, body = num, b
				return true
			}
		}
		return false
	}
	d.story(8, "A dashboard tick", "issues.edited: alice ticks "+test+" (not reproduced in story 2) on the flaky tests dashboard; a fix run starts.")
	d.eventually("the dashboard", func() bool { return dashboard() && strings.Contains(body, test) })
	before := d.sandbox.SessionIDs()
	ticked := strings.Replace(body, "- [ ] "+test, "- [x] "+test, 1)
	d.gh.EditIssue(n, ticked)
	d.deliver("issues", testenv.DashboardEditEvent(d, "alice", n, ticked))
	d.newSession("the ticked test's run", before)
	d.eventually("the box unticked, with its run", func() bool {
		if !dashboard() || strings.Contains(body, "- [x]") {
			return false
		}
		i := strings.Index(body, test)
		return i > 0 && strings.Contains(body[i:min(len(body), i+600)], "the agent is working on it")
	})
	d.showIssue(n)
}
