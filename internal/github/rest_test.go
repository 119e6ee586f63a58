package github

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	gogithub "github.com/google/go-github/v66/github"
)

// An edit of an issue that was transferred (GitHub answers 301, which the
// HTTP client follows with a GET) or deleted (410) edited nothing.
func TestEditingAMovedOrDeletedIssueSaysItIsGone(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("PATCH /repos/a/b/issues/5", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/repos/c/d/issues/9", http.StatusMovedPermanently)
	})
	mux.HandleFunc("GET /repos/c/d/issues/9", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"number":9,"repository_url":"https://api.github.com/repos/c/d","body":"old"}`))
	})
	mux.HandleFunc("PATCH /repos/a/b/issues/6", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"message":"This issue was deleted"}`, http.StatusGone)
	})
	mux.HandleFunc("PATCH /repos/a/b/issues/7", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"number":7,"repository_url":"https://api.github.com/repos/A/B","body":"new"}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := gogithub.NewClient(nil)
	c.BaseURL, _ = url.Parse(srv.URL + "/")
	g := &restGitHub{c: c}
	repo := Repo{"a", "b"}
	for n, want := range map[int]error{5: ErrIssueGone, 6: ErrIssueGone, 7: nil} {
		if err := g.EditIssueBody(context.Background(), repo, n, "new"); !errors.Is(err, want) {
			t.Errorf("#%d: %v, want %v", n, err, want)
		}
	}
}
