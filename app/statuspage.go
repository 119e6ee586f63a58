package app

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	gogithub "github.com/google/go-github/v66/github"
	"github.com/hibiken/asynq"

	"github.com/pitcrew/pitcrew/internal/hostrule"
	"github.com/pitcrew/pitcrew/publish"
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
	data := publish.StatusPageData{App: p.AppSlug, Embedded: p.Embedded, Depth: queue.Depth(p.Inspector), Flaky: "/flaky"}
	if token := r.URL.Query().Get("token"); token != "" {
		data.Flaky = "/flaky?token=" + url.QueryEscape(token) // the way this page was reached
	}
	if client, err := p.AppClient(); err == nil {
		if insts, _, err := client.Apps.ListInstallations(ctx, &gogithub.ListOptions{PerPage: 100}); err == nil {
			var names []string
			for _, in := range insts {
				names = append(names, in.GetAccount().GetLogin())
			}
			data.Installations = names
		} else {
			data.InstallationsError = "GitHub did not list the installations"
		}
	}
	recent, err := p.Ledger.Recent(ctx, 50)
	if err != nil {
		http.Error(w, "Redis is unreachable", http.StatusServiceUnavailable)
		return
	}
	byKind := map[string][]publish.StatusRun{}
	for _, run := range recent {
		s := publish.DescribeForStatus(run, now)
		if p.SourceOf != nil && p.SourceOf(run.Kind) != "" {
			s.Subject = p.SourceOf(run.Kind) + ": " + s.Subject
		}
		byKind[string(run.Kind)] = append(byKind[string(run.Kind)], s)
	}
	data.Runs = byKind
	data.Deliveries, _ = p.Ledger.RecentDeliveries(ctx, 30)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	if err := publish.RenderStatusPage(w, data); err != nil {
		fmt.Fprintln(w, "page error")
	}
}
