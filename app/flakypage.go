package app

import (
	"fmt"
	"net/http"
	"time"

	"github.com/pitcrew/pitcrew/publish"
)

// The flaky-tests page (GET /flaky): the dashboards' view for an operator,
// a table per repository with each test's sightings per day as a small
// inline SVG. Token rules as the status page's.

const (
	flakyReposShown = 50  // repositories, most recently seen first
	flakyTestsShown = 100 // tests per repository
)

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
	var repos []publish.FlakyRepo
	for _, name := range names {
		tests, total, err := p.Ledger.FlakyTests(ctx, name, flakyTestsShown)
		if err != nil {
			http.Error(w, "Redis is unreachable", http.StatusServiceUnavailable)
			return
		}
		repo := publish.FlakyRepo{Repo: name, Total: total}
		for _, t := range tests {
			repo.Rows = append(repo.Rows, publish.DescribeFlaky(t, now))
		}
		repos = append(repos, repo)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	if err := publish.RenderFlakyPage(w, repos); err != nil {
		fmt.Fprintln(w, "page error")
	}
}
