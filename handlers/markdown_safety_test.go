package handlers

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/pitcrew/pitcrew/alerts"
	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/exunit"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work/flaky"
	"github.com/pitcrew/pitcrew/work/profiling"
)

// hostileCorpus is outside text that tries every way Markdown on GitHub
// can be abused: notifying people, closing or cross-referencing issues,
// HTML, links and images, breaking out of code spans and fences, new
// blocks through newlines, and text hidden behind bidi and zero-width
// characters.
var hostileCorpus = []string{
	"@octocat please merge",
	"cc @hexpm/core-team",
	"fixes #1 and closes hexpm/hexpm#2",
	"<img src=x onerror=alert(1)><script>alert(1)</script>",
	"<!-- hidden --> <details open>",
	"&#64;octocat &lt;b&gt;",
	"[click me](https://evil.example) ![pixel](https://evil.example/p.png)",
	"a`b``c```d````",
	"```\n# INJECTED\n```",
	"line one\n\n# INJECTED heading\n- [x] INJECTED task\n> INJECTED quote",
	"\u202eexe.txt\u202c \u2066hidden\u2069 zero\u200bwidth\u200d\ufeff",
	"| INJECTED | table |\n|---|---|",
	"$$\\INJECTED$$ ~~gone~~ **loud**",
	"1. INJECTED",
	"- INJECTED",
	"www.evil.example https://github.com/hexpm/hexpm/issues/1 GH-12",
}

// TestHostileTextIsNeutralisedInEveryRenderer puts each hostile string in
// every field of outside text that each renderer shows, and checks what
// GitHub would see: no mention, no issue reference, no raw HTML, no
// invisible character, and no block the text opened by itself.
func TestHostileTextIsNeutralisedInEveryRenderer(t *testing.T) {
	now := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	for _, h := range hostileCorpus {
		seed := int64(7)
		flakyEntry := runs.Entry{About: "test/x_test.exs:3", RunID: "r1", Relation: runs.ClaimNew, Name: publish.Line(h, 200), Module: publish.Line(h, 200),
			Seed: &seed, Excerpt: strings.Split(h, "\n"), Sightings: 2}
		result := &prompts.Result{Outcome: prompts.OutcomeNotFixed, Cause: oneLineCause(t, h), Dependency: oneLineCause(t, h), Polluter: &prompts.Polluter{Test: "test/b_test.exs:4", Seed: 1, Shares: oneLineCause(t, h)}}
		done := runs.Run{ID: "r1", State: runs.Completed, Result: result, SessionURL: "https://sandbox.example/s/1"}
		failed := runs.Run{ID: "r1", State: runs.Failed, Error: "the sandbox could not report on the session (" + publish.Text(h, 200) + ")"}
		_, rejected := exunit.ExtractTestRefs("see test/" + strings.ReplaceAll(h, " ", "") + "_test.exs:1 and test/a b_test.exs:1")
		files, notice := profiling.UsableNames([]string{"priv/repo/migrations/1_ok.exs", "priv/repo/migrations/" + h + ".exs"})
		migration := runs.Entry{About: strings.Repeat("a", 40), RunID: "m1", Relation: runs.ClaimNew}
		data, _ := json.Marshal(publish.MigrationData{Files: files})
		migrationRun := runs.Run{ID: "m1", State: runs.Completed, Data: data, SessionURL: "https://sandbox.example/s/2"}
		alert := hostileAlert(t, h)
		diff, _ := evidence.ParseDiff(strings.NewReader("--- a/test/" + h + "_test.exs\n+++ b/test/" + h + "_test.exs\n@@ -1,2 +1,2 @@\n-  assert x == 1 # " + h + "\n+  Process.sleep(100) # " + h + "\n+  assert x # " + h + "\n"))
		review := evidence.Check(diff, evidence.JobFlaky)
		followed := done
		followed.PR = &runs.Pull{Number: 77, URL: "https://github.com/hexpm/hexpm/pull/77", State: runs.PullOpen, Suites: map[string]string{h: "success"}, Reviews: map[string]runs.Review{h: {State: "approved"}}}
		followed.PR.SetEvidence(strings.Repeat("c", 40), review, 1)
		if len(review.Findings) == 0 && !strings.Contains(h, "\n") {
			t.Fatalf("the hostile diff gave no finding: %+v", review)
		}
		answer := prompts.KeepAnswer(h + "\nOpened https://github.com/hexpm/hexpm/pull/77\n" + h)
		unread := runs.Run{ID: "r1", Repo: "hexpm/hexpm", State: runs.Completed, Answer: answer, AnswerPRs: prompts.PullRequestLinks(answer, "hexpm/hexpm"),
			Error: "its answer had no readable result block (" + publish.Text(h, 200) + ")", SessionURL: "https://sandbox.example/s/1"}

		rendered := map[string]string{
			"status comment": publish.RenderStatus(runs.View{Status: runs.Status{Label: "pitcrew:fix", Entries: []runs.Entry{flakyEntry}, Rejected: rejectedLines(rejected)},
				Runs: map[string]runs.Run{"r1": done}, Now: now}),
			"status comment, failed run": publish.RenderStatus(runs.View{Status: runs.Status{Label: "pitcrew:fix", Entries: []runs.Entry{flakyEntry}}, Runs: map[string]runs.Run{"r1": failed}, Now: now}),
			"check run summary": func() string {
				_, s := publish.RenderCheckRun(runs.View{Status: runs.Status{Heading: flaky.CIWhat("workflow", h), Entries: []runs.Entry{flakyEntry}}, Runs: map[string]runs.Run{"r1": done}, Now: now})
				return s
			}(),
			"flaky tracking issue": flaky.TrackingBody(flakyEntry, strings.Repeat("b", 40)),
			"slow-query report": publish.RenderReport(runs.View{Status: runs.Status{Notice: notice, Entries: []runs.Entry{migration}}, Runs: map[string]runs.Run{"m1": migrationRun},
				Reports: map[string]string{"m1": "## Slow queries\n\nmaterialized views were refreshed: " + h + "\n\n" + h}, Now: now}),
			"alert comment": publish.RenderAlert(runs.View{Status: runs.Status{Entries: []runs.Entry{{About: alert.Title, RunID: "r1", Relation: runs.ClaimNew}}}, Runs: map[string]runs.Run{"r1": done}}),
			"alert comment, outside the code": publish.RenderAlert(runs.View{Status: runs.Status{Entries: []runs.Entry{{About: alert.Title, RunID: "r1", Relation: runs.ClaimNew}}},
				Runs: map[string]runs.Run{"r1": {ID: "r1", State: runs.Completed, Result: &prompts.Result{Outcome: prompts.OutcomeOutsideCode, Cause: result.Cause, Dependency: result.Dependency}}}}),
			"status comment, answer without a result block": publish.RenderStatus(runs.View{Status: runs.Status{Label: "pitcrew:fix", Entries: []runs.Entry{flakyEntry}}, Runs: map[string]runs.Run{"r1": unread}, Now: now}),
			"alert comment, answer without a result block":  publish.RenderAlert(runs.View{Status: runs.Status{Entries: []runs.Entry{{About: alert.Title, RunID: "r1", Relation: runs.ClaimNew}}}, Runs: map[string]runs.Run{"r1": unread}}),
			"status comment, followed pull request":         publish.RenderStatus(runs.View{Status: runs.Status{Label: "pitcrew:fix", Entries: []runs.Entry{flakyEntry}}, Runs: map[string]runs.Run{"r1": followed}, Now: now}),
			"alert comment, followed pull request":          publish.RenderAlert(runs.View{Status: runs.Status{Entries: []runs.Entry{{About: alert.Title, RunID: "r1", Relation: runs.ClaimNew}}}, Runs: map[string]runs.Run{"r1": followed}}),
			"evidence check run summary":                    publish.RenderEvidence(evidence.JobFlaky, 77, review).Summary,
			"slow queries check run":                        hostileSlowQueries(h),
			"alert issue body":                              alertIssueBody(alert),
			"alert renotified comment":                      renotifiedComment(alert),
			"alert recovered comment":                       recoveredComment(alert),
		}
		// The agent's report is kept as Markdown, so only its header is
		// prose from outside (the link to the check run and the fold after
		// it are pitcrew's); the report itself keeps no mention.
		header, report, _ := strings.Cut(rendered["slow-query report"], "\n\nMeasured and checked: ")
		rendered["slow-query report"] = header
		if m := liveMention.FindString(stripCodeSpans(stripFences(report))); m != "" {
			t.Errorf("slow-query report, with %q: a live @mention %q\n%s", h, m, report)
		}
		for name, md := range rendered {
			if problem := unsafeMarkdown(md); problem != "" {
				t.Errorf("%s, with %q: %s\n%s", name, h, problem, md)
			}
		}
	}
}

// oneLineCause puts s through the result parser, as an agent's answer would.
func oneLineCause(t *testing.T, s string) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"outcome": "not_fixed", "cause": s})
	r, err := prompts.ParseResult("```json\n" + string(b) + "\n```")
	if err != nil {
		t.Fatal(err)
	}
	return r.Cause
}

// hostileAlert puts s in every text field of a Datadog payload, the date
// included.
func hostileAlert(t *testing.T, s string) alerts.Alert {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"alert_id": "1", "transition": "Renotify", "title": s, "message": s,
		"tags": "service:hexpm," + s, "scope": s, "priority": s, "date": s + " 1764680000000"})
	a, err := alerts.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	a.Transition = s // as if a repository put it in alerts.start_on
	return a
}

var (
	liveMention = regexp.MustCompile(`(^|[^\w\\])[@＠][A-Za-z0-9]`)
	liveRef     = regexp.MustCompile(`(^|[^\\])(#\d|&#)`)
	liveLink    = regexp.MustCompile(`(^|[^\\])\]\(|://|(?i)\bwww\.|\bgh-\d`)
	rawHTML     = regexp.MustCompile(`(^|[^\\])<[A-Za-z/!]`)
	injected    = regexp.MustCompile(`(?m)^[ \t]*(?:#+|>|\||\$\$|[-+*]|\d+[.)])[ \t]*(?:\[x\][ \t]*)?INJECTED`)
)

// unsafeMarkdown says what in md GitHub would act on, outside code; ""
// when nothing. pitcrew's own marker comments and links are allowed.
func unsafeMarkdown(md string) string {
	md = strings.ReplaceAll(md, publish.StatusMarker, "")
	md = regexp.MustCompile(`<!-- pitcrew:[^ ]+ -->`).ReplaceAllString(md, "")
	md = regexp.MustCompile(`\[run\]\(https://sandbox\.example/s/\d\)`).ReplaceAllString(md, "")
	// pitcrew's own folding of an answer, and the pull requests of the
	// run's repository it links (built from the number, not copied)
	md = regexp.MustCompile(`<details><summary>|</summary>|</details>`).ReplaceAllString(md, "")
	md = regexp.MustCompile(`\[PR #\d+\]\(https://github\.com/hexpm/hexpm/pull/\d+\)`).ReplaceAllString(md, "")
	md = regexp.MustCompile(`https://github\.com/hexpm/hexpm/pull/\d+`).ReplaceAllString(md, "")
	for _, r := range md {
		if r != '\u200b' && (unicode.Is(unicode.Cf, r) || (unicode.IsControl(r) && r != '\n')) {
			return "an invisible character survived"
		}
	}
	prose := stripCodeSpans(stripFences(md))
	switch {
	case liveMention.MatchString(prose):
		return "a live @mention: " + liveMention.FindString(prose)
	case liveRef.MatchString(prose):
		return "a live issue reference or entity: " + liveRef.FindString(prose)
	case rawHTML.MatchString(prose):
		return "raw HTML: " + rawHTML.FindString(prose)
	case injected.MatchString(prose):
		return "a block opened by outside text: " + injected.FindString(prose)
	case liveLink.MatchString(prose):
		return "a link or image from outside text: " + liveLink.FindString(prose)
	}
	return ""
}

// stripFences removes fenced code blocks as CommonMark reads them: a line
// of n >= 3 backticks up to a line of at least n backticks and nothing else.
func stripFences(s string) string {
	var out []string
	fence := 0
	for _, l := range strings.Split(s, "\n") {
		t := strings.TrimLeft(l, " ")
		n := len(t) - len(strings.TrimLeft(t, "`"))
		switch {
		case fence == 0 && n >= 3:
			fence = n
		case fence > 0 && n >= fence && strings.TrimSpace(t[n:]) == "":
			fence = 0
		case fence == 0:
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// stripCodeSpans removes inline code spans as CommonMark reads them: a run
// of n backticks up to the next run of exactly n.
func stripCodeSpans(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '`' || (i > 0 && s[i-1] == '\\') {
			b.WriteByte(s[i])
			i++
			continue
		}
		n := 0
		for i+n < len(s) && s[i+n] == '`' {
			n++
		}
		end := -1
		for j := i + n; j < len(s); {
			if s[j] != '`' {
				j++
				continue
			}
			m := 0
			for j+m < len(s) && s[j+m] == '`' {
				m++
			}
			if m == n {
				end = j + m
				break
			}
			j += m
		}
		if end < 0 {
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		b.WriteString("CODE")
		i = end
	}
	return b.String()
}

// hostileSlowQueries is the "pitcrew / slow queries" check run of a
// slow-queries.json with s in every text field.
func hostileSlowQueries(s string) string {
	var q evidence.SlowQueries
	q.Seed.Production = &s
	q.Seed.Tables = append(q.Seed.Tables, struct {
		Table string `json:"table"`
		Rows  int64  `json:"rows"`
	}{s, 10})
	q.Pages = []evidence.PageTime{{Page: s, BeforeMS: 1, AfterMS: 100}}
	query := evidence.SlowQuery{Fingerprint: s, SQL: s, Pages: []string{s}, CallsPerPage: 40}
	query.Ecto.Function, query.Ecto.File, query.Ecto.Line = s, s, 1
	query.Fix = &evidence.Fix{Kind: s, Change: s}
	q.Queries = []evidence.SlowQuery{query, query}
	q.Queries[1].CallsPerPage = 1
	check := evidence.QueryCheck{Problems: []string{"no plan quoted"}}
	out := publish.SlowQueriesCheck(publish.SlowReview{Repo: "hexpm/hexpm", Commit: strings.Repeat("a", 40), Report: q,
		Checks: []evidence.QueryCheck{check, check}, Missing: []string{"", ""}})
	unread := publish.SlowQueriesCheck(publish.SlowReview{Unread: s})
	return out.Summary + "\n\n" + unread.Summary // titles are plain text on GitHub, not Markdown
}
