package server

import (
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/pitcrew/pitcrew/runs"
)

// The flaky-tests page (GET /flaky): the dashboards' view for an operator,
// a table per repository with each test's sightings per day as a small
// inline SVG. Token rules as the status page's.

const (
	flakyReposShown = 50  // repositories, most recently seen first
	flakyTestsShown = 100 // tests per repository
	sparkDays       = 30
)

type flakyRow struct {
	Test, Name, Module, Commit, Where, Run, RunURL, PR string
	Count, Commits                                     int64
	FirstSeen, LastSeen                                string
	Spark                                              template.HTML
}

type flakyRepo struct {
	Repo  string
	Total int
	Rows  []flakyRow
}

// Flaky serves GET /flaky.
func (p *StatusPage) Flaky(w http.ResponseWriter, r *http.Request) {
	if !p.admit(w, r) {
		return
	}
	ctx := r.Context()
	now := time.Now()
	names, err := p.Ledger.FlakyRepos(ctx, flakyReposShown)
	if err != nil {
		http.Error(w, "Redis is unreachable", http.StatusServiceUnavailable)
		return
	}
	var repos []flakyRepo
	for _, name := range names {
		tests, total, err := p.Ledger.FlakyTests(ctx, name, flakyTestsShown)
		if err != nil {
			http.Error(w, "Redis is unreachable", http.StatusServiceUnavailable)
			return
		}
		repo := flakyRepo{Repo: name, Total: total}
		for _, t := range tests {
			repo.Rows = append(repo.Rows, describeFlaky(t, now))
		}
		repos = append(repos, repo)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	if err := flakyTemplate.Execute(w, map[string]any{"Repos": repos, "Days": sparkDays}); err != nil {
		fmt.Fprintln(w, "page error")
	}
}

func describeFlaky(t runs.FlakyTest, now time.Time) flakyRow {
	s := t.Sighting
	row := flakyRow{Test: t.Test(), Name: s.Name, Module: s.Module, Where: safeLink(s.Where), Count: s.Count, Commits: s.Commits,
		FirstSeen: s.FirstSeen.Format("2006-01-02"), LastSeen: s.LastSeen.Format("2006-01-02 15:04"), Spark: sparkline(t.Recent(now, sparkDays))}
	if len(s.Commit) >= 7 {
		row.Commit = s.Commit[:7]
	}
	row.Run = "none"
	if run := t.Run; run != nil {
		row.Run, row.RunURL = string(run.State), safeLink(run.SessionURL)
		if run.PR != nil {
			row.PR = fmt.Sprintf("#%d %s", run.PR.Number, run.PR.State)
		}
	}
	return row
}

// safeLink keeps only web links (html/template escapes the rest of it).
func safeLink(u string) string {
	if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
		return u
	}
	return ""
}

// sparkline draws counts (oldest first) as bars in a small SVG; a day
// without sightings is a baseline tick. It writes numbers only.
func sparkline(counts []int64) template.HTML {
	const barW, height = 4, 20
	peak := int64(1)
	for _, c := range counts {
		peak = max(peak, c)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img"><title>sightings per day, last %d days (peak %d)</title>`,
		len(counts)*barW, height, len(counts), peak)
	for i, c := range counts {
		h := int64(1)
		fill := "#d0d7de"
		if c > 0 {
			h, fill = max(2, c*height/peak), "#cf222e"
		}
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`, i*barW, height-h, barW-1, h, fill)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

var flakyTemplate = template.Must(template.New("flaky").Parse(`<!doctype html><html><head><meta charset="utf-8"><title>pitcrew · flaky tests</title>
<style>body{font:14px/1.5 system-ui,sans-serif;margin:2em;color:#1f2328} table{border-collapse:collapse;margin-bottom:1.5em}
td,th{border-bottom:1px solid #d0d7de;padding:.2em .8em;text-align:left;vertical-align:middle} .muted{color:#59636e} code{font-size:12px}</style></head><body>
<h1>Flaky tests</h1>
<p class="muted">Tests seen failing and then passing, over the last 90 days; bars are sightings per day over the last {{.Days}} days.</p>
{{range .Repos}}<h2>{{.Repo}}</h2><table class="flaky"><tr><th>test</th><th>sightings</th><th>last {{$.Days}} days</th><th>first seen</th><th>last seen</th><th>run</th></tr>
{{range .Rows}}<tr><td><code>{{.Test}}</code>{{with .Name}}<br><span class="muted">{{.}}</span>{{end}}{{with .Module}} <code class="muted">{{.}}</code>{{end}}</td>
<td>{{.Count}}{{if .Commits}} on {{.Commits}} commit{{if ne .Commits 1}}s{{end}}{{end}}</td><td>{{.Spark}}</td><td>{{.FirstSeen}}</td>
<td>{{.LastSeen}}{{with .Commit}} <code>{{.}}</code>{{end}}{{with .Where}} <a href="{{.}}">where</a>{{end}}</td>
<td>{{if .RunURL}}<a href="{{.RunURL}}">{{.Run}}</a>{{else}}{{.Run}}{{end}}{{with .PR}} · PR {{.}}{{end}}</td></tr>
{{end}}</table>{{if gt .Total (len .Rows)}}<p class="muted">and {{.Total}} in all</p>{{end}}
{{else}}<p class="muted">No flaky test seen yet.</p>{{end}}
</body></html>`))
