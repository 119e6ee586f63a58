package publish

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/pitcrew/pitcrew/internal/weburl"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/runs"
)

// The operator's pages, rendered: the status page (GET /) and the
// flaky-tests page (GET /flaky). The wiring serves them (who may see
// them, from which records); html/template escapes what they show.

// SparkDays is how many days of sightings the flaky-tests page draws.
const SparkDays = 30

// FlakyRow is one test on the flaky-tests page.
type FlakyRow struct {
	Test, Name, Module, Commit, Where, Run, RunURL, PR string
	Count, Commits                                     int64
	FirstSeen, LastSeen                                string
	Spark                                              template.HTML
}

// FlakyRepo is one repository's table on the flaky-tests page.
type FlakyRepo struct {
	Repo  string
	Total int
	Rows  []FlakyRow
}

// RenderFlakyPage writes the flaky-tests page.
func RenderFlakyPage(w io.Writer, repos []FlakyRepo) error {
	return flakyTemplate.Execute(w, map[string]any{"Repos": repos, "Days": SparkDays})
}

// DescribeFlaky is a test's row on the flaky-tests page.
func DescribeFlaky(t runs.FlakyTest, now time.Time) FlakyRow {
	s := t.Sighting
	row := FlakyRow{Test: t.Test(), Name: s.Name, Module: s.Module, Where: safeLink(s.Where), Count: s.Count, Commits: s.Commits,
		FirstSeen: s.FirstSeen.Format("2006-01-02"), LastSeen: s.LastSeen.Format("2006-01-02 15:04"), Spark: sparkline(t.Recent(now, SparkDays))}
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

// StatusRun is one run on the status page.
type StatusRun struct {
	Kind, State, Outcome, Repo, Subject, ID, SubjectURL, SessionURL, PullURL, Age string
}

// StatusPageData is what the status page shows.
type StatusPageData struct {
	App                string
	Embedded           bool // Redis is the in-process one
	Depth              float64
	Flaky              string // the flaky-tests page's link, as this page was reached
	Installations      []string
	InstallationsError string
	Runs               map[string][]StatusRun // by kind
	Deliveries         []runs.DeliveryRecord
}

// RenderStatusPage writes the status page.
func RenderStatusPage(w io.Writer, d StatusPageData) error { return statusTemplate.Execute(w, d) }

// DescribeForStatus is a run's row on the status page.
func DescribeForStatus(r runs.Run, now time.Time) StatusRun {
	s := StatusRun{Kind: string(r.Kind), State: strings.ReplaceAll(string(r.State), "_", " "), Outcome: outcomeOf(r), Repo: r.Repo,
		SessionURL: r.SessionURL, Age: now.Sub(r.CreatedAt).Round(time.Second).String()}
	s.Subject = r.About
	if r.Title != "" {
		// About is then an id: the title says what it is.
		s.Subject, s.ID = r.Title, r.About
	}
	if r.Origin != 0 {
		s.SubjectURL = weburl.Issue(r.Repo, r.Origin)
	}
	if u := r.PullRequest(); strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
		s.PullURL = u
	}
	return s
}

// outcomes word what an agent said it achieved.
var outcomes = map[prompts.Outcome]string{
	prompts.OutcomeFixed: "fixed", prompts.OutcomeNotFixed: "not fixed", prompts.OutcomeNotReproduced: "not reproduced",
	prompts.OutcomeOutsideCode: "the cause is outside the code",
}

// outcomeOf says how an ended run ended, beyond its state: the agent's
// stated outcome, a report kept, or why it failed; "" for a live run.
func outcomeOf(r runs.Run) string {
	switch {
	case !r.State.Terminal():
		return r.Waiting
	case r.State == runs.Failed:
		return r.Error
	case r.Result != nil && outcomes[r.Result.Outcome] != "":
		return outcomes[r.Result.Outcome]
	case r.Report:
		return "report kept"
	case r.PullRequest() != "":
		return "answered with a pull request, without a result block"
	case r.Answer != "":
		return "answered without a result block"
	}
	return "no answer kept"
}

var statusTemplate = template.Must(template.New("status").Parse(`<!doctype html><html><head><meta charset="utf-8"><title>pitcrew</title>
<style>body{font:14px/1.5 system-ui,sans-serif;margin:2em;color:#1f2328} table{border-collapse:collapse;margin-bottom:1.5em}
td,th{border-bottom:1px solid #d0d7de;padding:.2em .8em;text-align:left} h2{margin-top:1.5em} .muted{color:#59636e}</style></head><body>
<h1>pitcrew{{with .App}} · {{.}}{{end}}</h1>
<p>Installations: {{range $i, $n := .Installations}}{{if $i}}, {{end}}{{$n}}{{else}}<span class="muted">{{or .InstallationsError "none yet"}}</span>{{end}}</p>
<p>Redis: {{if .Embedded}}embedded (state is lost on restart){{else}}external{{end}} · queue depth: <span id="depth">{{.Depth}}</span></p>
<p><a href="{{.Flaky}}">Flaky tests</a> (the dashboards of every repository)</p>
<h2>Recent runs</h2>
{{range $kind, $runs := .Runs}}<h3>{{$kind}}</h3><table id="runs-{{$kind}}"><tr><th>state</th><th>outcome</th><th>repository</th><th>subject</th><th>age</th><th>links</th></tr>
{{range $runs}}<tr><td>{{.State}}</td><td>{{.Outcome}}</td><td>{{.Repo}}</td><td>{{.Subject}}{{with .ID}} <span class="muted">({{.}})</span>{{end}}</td><td>{{.Age}}</td><td>{{with .SubjectURL}}<a href="{{.}}">issue/PR</a>{{end}} {{with .PullURL}}<a href="{{.}}">pull request</a>{{end}} {{with .SessionURL}}<a href="{{.}}">session</a>{{end}}</td></tr>
{{end}}</table>{{else}}<p class="muted">No runs yet.</p>{{end}}
<h2>Recent deliveries</h2>
<table id="deliveries"><tr><th>delivery</th><th>event</th><th>outcome</th><th>at</th></tr>
{{range .Deliveries}}<tr><td>{{.ID}}</td><td>{{.Event}}</td><td>{{.Outcome}}</td><td>{{.At.Format "15:04:05"}}</td></tr>
{{else}}<tr><td colspan="4" class="muted">None yet.</td></tr>{{end}}</table>
</body></html>`))
