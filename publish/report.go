package publish

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/pitcrew/pitcrew/internal/weburl"
	"github.com/pitcrew/pitcrew/runs"
)

// ReportName is the artifact a profiling run leaves.
const ReportName = "slow-queries.md"

// MigrationData is what a profiling run keeps of its merge, as its
// runs.Run.Data: the migration files the prompt names.
type MigrationData struct {
	Files []string `json:"files"`
	// BeforeMerge: the run profiles an open pull request's head.
	BeforeMerge bool `json:"before_merge,omitempty"`
}

// MigrationOf reads a profiling run's data.
func MigrationOf(r runs.Run) MigrationData {
	var d MigrationData
	_ = json.Unmarshal(r.Data, &d)
	return d
}

// RenderReport writes the status comment of a merge's profiling run: that
// it started, or the agent's report under a header (run link, migration
// files, when materialized views were refreshed), or why there is none.
func RenderReport(v runs.View) string {
	st, byID, reports := v.Status, v.Runs, v.Reports
	b, e, r, link, ok := singleRunComment("slow-query report", "Not profiled", st, byID)
	if !ok {
		return b.String()
	}
	d := MigrationOf(r)
	fmt.Fprintf(b, "Migrations in `%.7s`: %s\n\n", e.About, CodeList(d.Files))
	if d.BeforeMerge {
		b.WriteString("Profiled on the pull request's head, before the change ships (`/pitcrew profile`).\n\n")
	}
	switch {
	case r.State == runs.Queued:
		b.WriteString("🕓 A profiling run is queued; the agent starts shortly.\n")
	case r.State == runs.Started && len(r.FollowUps) > 0:
		b.WriteString("🔄 The agent is opening the change it measured as a pull request" + link + "." + followUpLine(r) + "\n")
	case r.State == runs.Started && e.Relation != runs.ClaimNew:
		b.WriteString("🔄 This merge is already being profiled" + link + "; the report will appear where that run was started.\n")
	case r.State == runs.Started:
		fmt.Fprintf(b, "🔄 A profiling run started at %s UTC%s: the agent loads the schema, seeds realistic data, exercises the main pages and reports every query over 50 ms. This comment will hold its report.\n",
			r.StartedAt.UTC().Format("15:04"), link)
	case r.State == runs.Failed:
		fmt.Fprintf(b, "❌ The profiling run failed: %s%s. No report was produced.\n", orDefault(r.Error, "no reason was given"), link)
	case reports[e.RunID] == "":
		fmt.Fprintf(b, "⚠️ The profiling run ended without producing `%s`, so there is no report%s.\n", ReportName, link)
		b.WriteString(answerDetails("The agent's answer", r))
	default:
		report := reports[e.RunID]
		fmt.Fprintf(b, "The agent's report, `%s`%s", ReportName, link)
		if line := refreshLine(report); line != "" {
			b.WriteString(" · materialized views: " + line)
		}
		b.WriteString(opened(r))
		if len(r.FollowUps) == 0 {
			// The measurements, as pitcrew checked them, are in the check
			// run; the report stays folded below.
			fmt.Fprintf(b, "\n\nMeasured and checked: [%s](%s) on `%.7s`.\n\n<details><summary>The agent's report</summary>\n\n", SlowCheckName, SafeURL(weburl.Repo(r.Repo)+"/commit/"+e.About+"/checks"), e.About)
			budget := MaxCommentLen - b.Len() - 300
			b.WriteString(cutAtSection(Markdown(report), budget, r.SessionURL) + "\n\n</details>\n")
			break
		}
		b.WriteString("\n\n---\n\n")
		budget := MaxCommentLen - b.Len() - 300
		b.WriteString(cutAtSection(Markdown(report), budget, r.SessionURL))
	}
	return b.String()
}

// opened is what a report's follow-up (/pitcrew open-pr) came to: the
// pull request it opened, as pitcrew follows it, or that it named none.
func opened(r runs.Run) string {
	switch {
	case len(r.FollowUps) == 0:
		return ""
	case r.PR != nil:
		return pullLine(r)
	}
	return followUpLine(r) + ": the agent's answer named no pull request of this repository"
}

// CodeList is items as inline code, comma-separated (each capped at 200).
func CodeList(items []string) string {
	quoted := make([]string, len(items))
	for i, f := range items {
		quoted[i] = Code(f, 200)
	}
	return strings.Join(quoted, ", ")
}

var refreshed = regexp.MustCompile(`(?i)(materiali[sz]ed views?.*refresh|refresh.*materiali[sz]ed view)`)

// refreshLine is the report's line about refreshing materialized views.
func refreshLine(report string) string {
	for _, l := range strings.Split(report, "\n") {
		if refreshed.MatchString(l) {
			return Text(strings.TrimLeft(l, "-*# "), 200)
		}
	}
	return ""
}

// cutAtSection shortens a report to max bytes at the last section heading
// that fits, and says where the rest is.
func cutAtSection(report string, max int, runURL string) string {
	if len(report) <= max {
		return report
	}
	cut := strings.LastIndex(report[:max], "\n## ")
	if cut <= 0 {
		cut = strings.LastIndexByte(report[:max], '\n')
	}
	if cut <= 0 {
		cut = max
	}
	rest := "the run"
	if runURL != "" {
		rest = fmt.Sprintf("[the run](%s)", runURL)
	}
	return report[:cut] + fmt.Sprintf("\n\n---\n*The report is longer than a GitHub comment allows; the remaining sections are in %s.*\n", rest)
}

// singleRunComment starts the status comment of a subject that shows one
// run (a merge's report, an alert's fix). ok is false when the comment is
// complete already: no run, or none started (why, after notStarted).
func singleRunComment(title, notStarted string, st runs.Status, byID map[string]runs.Run) (b *strings.Builder, e runs.Entry, r runs.Run, link string, ok bool) {
	b = &strings.Builder{}
	b.WriteString(StatusMarker + "\n**pitcrew** · " + title + "\n\n")
	if st.Notice != "" {
		b.WriteString(st.Notice + "\n\n")
	}
	if len(st.Entries) == 0 {
		return b, e, r, "", false
	}
	e = st.Entries[0]
	if r, ok = byID[e.RunID]; !ok {
		if e.Note != "" {
			b.WriteString(notStarted + ": " + strings.TrimPrefix(e.Note, "not started: ") + ".\n")
		} else {
			b.WriteString("The run record has expired.\n")
		}
		return b, e, r, "", false
	}
	if r.SessionURL != "" {
		link = fmt.Sprintf(" ([run](%s))", r.SessionURL)
	}
	return b, e, r, link, true
}
