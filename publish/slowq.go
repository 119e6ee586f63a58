package publish

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/weburl"
)

// SlowCheckName is the check run a profiling run's measurements are shown
// in, on the commit it profiled.
const SlowCheckName = "pitcrew / slow queries"

// SlowReview is a profiling run's slow-queries.json as pitcrew read and
// checked it.
type SlowReview struct {
	Repo, Commit string
	// Unread says why there is nothing to show: the run left no
	// slow-queries.json, or one that does not fit its schema.
	Unread  string
	Report  evidence.SlowQueries
	Checks  []evidence.QueryCheck // by query
	Missing []string              // by query: why its Ecto site was not found at Commit, "" when it was
	// Problems are the report's own: it measured another commit.
	Problems []string
}

// SlowQueriesCheck is the "pitcrew / slow queries" check run: its title
// says whether the migration made a page slower, its summary is the table
// of slow queries, N+1 queries apart, each with what pitcrew checked. It
// is neutral: it informs, it never blocks.
func SlowQueriesCheck(r SlowReview) github.CheckOutput {
	out := github.CheckOutput{Name: SlowCheckName, Conclusion: "neutral"}
	var b strings.Builder
	b.WriteString("pitcrew read the profiling run's `slow-queries.json` and checked it: each time against the `Execution Time` of the plan quoted for it, each Ecto file and line at this commit. This check informs; it never blocks a merge.\n\n")
	if r.Unread != "" {
		out.Title = "Slow queries: not read (" + Line(r.Unread, 120) + ")"
		b.WriteString("⚠️ Not read: " + Text(r.Unread, 500) + ". The agent's Markdown report is on the pull request or commit it profiled.\n")
		out.Summary = b.String()
		return out
	}
	q := r.Report
	out.Title = slowTitle(q) + flaggedWords(r)
	for _, p := range r.Problems {
		b.WriteString("⚠️ " + p + "\n\n")
	}
	b.WriteString(seedLine(q) + "\n\n### Pages\n\n| page | before the migration | after | |\n|---|---|---|---|\n")
	for _, p := range q.Pages {
		mark := ""
		if p.Slower() {
			mark = "slower"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", Text(p.Page, 200), ms(p.BeforeMS), ms(p.AfterMS), mark)
	}
	var plain, nPlusOne []int
	for i, query := range q.Queries {
		if query.NPlusOne() {
			nPlusOne = append(nPlusOne, i)
		} else {
			plain = append(plain, i)
		}
	}
	r.table(&b, "Slow queries", plain)
	r.table(&b, "N+1 queries (run once per row of their page)", nPlusOne)
	out.Summary = Clip(b.String(), maxCheckSummary)
	return out
}

// slowTitle says the answer: which pages the migration made slower.
func slowTitle(q evidence.SlowQueries) string {
	var slower []evidence.PageTime
	for _, p := range q.Pages {
		if p.Slower() {
			slower = append(slower, p)
		}
	}
	if len(slower) == 0 {
		return fmt.Sprintf("No page slower after this migration; %d slow %s", len(q.Queries), Plural(len(q.Queries), "query", "queries"))
	}
	worst := slower[0]
	for _, p := range slower {
		if p.AfterMS-p.BeforeMS > worst.AfterMS-worst.BeforeMS {
			worst = p
		}
	}
	return fmt.Sprintf("%d %s slower after this migration: %s %s -> %s", len(slower), Plural(len(slower), "page", "pages"), Line(worst.Page, 80), strings.TrimSuffix(ms(worst.BeforeMS), " ms"), ms(worst.AfterMS))
}

func flaggedWords(r SlowReview) string {
	n := len(r.Problems)
	for i := range r.Report.Queries {
		if !r.Checks[i].Checked() || r.Missing[i] != "" {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" · %d %s numbers or Ecto site do not check out", n, Plural(n, "query's", "queries'"))
}

func seedLine(q evidence.SlowQueries) string {
	var parts []string
	for _, t := range q.Seed.Tables {
		parts = append(parts, Text(t.Table, 100)+" "+strconv.FormatInt(t.Rows, 10))
	}
	line := "Seeded: " + strings.Join(parts, " · ")
	if v := q.Seed.MaterializedViewsRefreshed; v != nil && *v {
		line += " · materialized views refreshed"
	}
	if p := q.Seed.Production; p != nil && *p != "" {
		line += "\n\nCompared with production: " + Text(*p, 500)
	} else {
		line += "\n\nCompared with production: not checked (the repository gives no row counts or pg_stat_statements export: `migrations.stats_file`)"
	}
	return line
}

// table writes the queries at index, with what pitcrew checked of each.
func (r SlowReview) table(b *strings.Builder, title string, index []int) {
	if len(index) == 0 {
		return
	}
	fmt.Fprintf(b, "\n### %s\n\n| page | query | Ecto site | before → after the migration | fix | its time | checked |\n|---|---|---|---|---|---|---|\n", title)
	var notes []string
	for _, i := range index {
		q, c := r.Report.Queries[i], r.Checks[i]
		site := Text(q.Ecto.Function, 120)
		if evidence.ValidEctoFile(q.Ecto.File) {
			site = "[" + site + "](" + SafeURL(weburl.Line(r.Repo, r.Commit, q.Ecto.File, q.Ecto.Line)) + ")"
		}
		fix, fixTime := "none tried", "–"
		if q.Fix != nil {
			fix, fixTime = Text(q.Fix.Kind, 20), ms(q.Fix.Measure.MS)
		}
		checked := "✔️"
		problems := append([]string(nil), c.Problems...)
		if r.Missing[i] != "" {
			problems = append(problems, r.Missing[i])
		}
		switch {
		case len(problems) > 0:
			checked = fmt.Sprintf("⚠️ %d %s", len(problems), Plural(len(problems), "problem", "problems"))
		case len(c.NotChecked) > 0:
			checked = "✔️ " + strings.Join(c.NotChecked, ", ")
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s → %s | %s | %s | %s |\n", Text(strings.Join(q.Pages, ", "), 200), Text(q.Fingerprint, 120), site, ms(q.Before.MS), ms(q.After.MS), fix, fixTime, checked)
		for _, p := range problems {
			notes = append(notes, "- "+Text(q.Fingerprint, 120)+": "+p)
		}
	}
	if len(notes) > 0 {
		b.WriteString("\n" + strings.Join(notes, "\n") + "\n")
	}
}

func ms(v float64) string { return evidence.FormatMS(v) }
