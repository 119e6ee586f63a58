package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	gogithub "github.com/google/go-github/v66/github"
	"github.com/hibiken/asynq"

	"github.com/pitcrew/pitcrew/internal/hostrule"
	"github.com/pitcrew/pitcrew/internal/weburl"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
)

// StatusPage is GET /: what pitcrew is doing, for an operator. It is
// reachable with the configured token (?token= or a bearer header), or,
// without one, from loopback only, addressed as localhost, 127.0.0.1 or
// [::1] on the port it came in on.
type StatusPage struct {
	Token     string
	AppSlug   string
	Embedded  bool // Redis is the in-process one
	Ledger    *runs.Ledger
	Inspector *asynq.Inspector
	AppClient func() (*gogithub.Client, error)
	// SourceOf names the outside service that starts a kind's runs
	// (handlers.SourceTitle); nil or "" for none.
	SourceOf func(runs.Kind) string
}

func (p *StatusPage) allowed(r *http.Request) bool {
	if p.Token == "" {
		return hostrule.FromLoopback(r)
	}
	got := r.URL.Query().Get("token")
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		got = strings.TrimPrefix(h, "Bearer ")
	}
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(p.Token))
	return got != "" && subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

type statusRun struct {
	Kind, State, Outcome, Repo, Subject, ID, SubjectURL, SessionURL, PullURL, Age string
}

// admit answers a request the page may not serve, and reports whether it
// may.
func (p *StatusPage) admit(w http.ResponseWriter, r *http.Request) bool {
	// Without a token only Host tells a local browser from a page whose
	// name was rebound to 127.0.0.1, and the page is for this machine: the
	// loopback names only, not PITCREW_PUBLIC_URL's host (a reverse proxy on
	// this host would pass that from anywhere). A token is never sent by a
	// browser on its own, so with one Host is not checked: behind a proxy
	// it is whatever the proxy sets.
	if p.Token == "" && !(hostrule.Rule{}).Check(w, r) {
		return false
	}
	if !p.allowed(r) {
		http.Error(w, "the status page needs PITCREW_STATUS_TOKEN (or a loopback address when none is set)", http.StatusForbidden)
		return false
	}
	return true
}

func (p *StatusPage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !p.admit(w, r) {
		return
	}
	ctx := r.Context()
	now := time.Now()
	data := map[string]any{"App": p.AppSlug, "Embedded": p.Embedded, "Depth": queue.Depth(p.Inspector), "Flaky": "/flaky"}
	if token := r.URL.Query().Get("token"); token != "" {
		data["Flaky"] = "/flaky?token=" + url.QueryEscape(token) // the way this page was reached
	}
	if client, err := p.AppClient(); err == nil {
		if insts, _, err := client.Apps.ListInstallations(ctx, &gogithub.ListOptions{PerPage: 100}); err == nil {
			var names []string
			for _, in := range insts {
				names = append(names, in.GetAccount().GetLogin())
			}
			data["Installations"] = names
		} else {
			data["InstallationsError"] = "GitHub did not list the installations"
		}
	}
	recent, err := p.Ledger.Recent(ctx, 50)
	if err != nil {
		http.Error(w, "Redis is unreachable", http.StatusServiceUnavailable)
		return
	}
	byKind := map[string][]statusRun{}
	for _, run := range recent {
		s := describeForStatus(run, now)
		if p.SourceOf != nil && p.SourceOf(run.Kind) != "" {
			s.Subject = p.SourceOf(run.Kind) + ": " + s.Subject
		}
		byKind[string(run.Kind)] = append(byKind[string(run.Kind)], s)
	}
	data["Runs"] = byKind
	data["Deliveries"], _ = p.Ledger.RecentDeliveries(ctx, 30)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	if err := statusTemplate.Execute(w, data); err != nil {
		fmt.Fprintln(w, "page error")
	}
}

func describeForStatus(r runs.Run, now time.Time) statusRun {
	s := statusRun{Kind: string(r.Kind), State: strings.ReplaceAll(string(r.State), "_", " "), Outcome: outcomeOf(r), Repo: r.Repo,
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
