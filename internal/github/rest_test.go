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
	g, repo := restOn(t, mux), Repo{"a", "b"}
	for n, want := range map[int]error{5: ErrIssueGone, 6: ErrIssueGone, 7: nil} {
		if err := g.EditIssueBody(context.Background(), repo, n, "new"); !errors.Is(err, want) {
			t.Errorf("#%d: %v, want %v", n, err, want)
		}
	}
}

// FileAt reads a file at a ref through the contents API; a missing file,
// a directory and one past MaxFileAt are said so, not read.
func TestFileAtReadsOneFileAtARef(t *testing.T) {
	var refs []string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /repos/a/b/contents/test/a_test.exs", func(w http.ResponseWriter, r *http.Request) {
		refs = append(refs, r.URL.Query().Get("ref"))
		w.Write([]byte(`{"type":"file","encoding":"base64","size":15,"path":"test/a_test.exs","content":"dXNlIEEuQ2FzZQpvawo="}`))
	})
	mux.HandleFunc("GET /repos/a/b/contents/test/big_test.exs", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"type":"file","encoding":"base64","size":2000000,"path":"test/big_test.exs","content":""}`))
	})
	mux.HandleFunc("GET /repos/a/b/contents/test", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`[{"type":"file","path":"test/a_test.exs"}]`))
	})
	g, repo := restOn(t, mux), Repo{"a", "b"}
	if got, err := g.FileAt(context.Background(), repo, "test/a_test.exs", "abc123"); err != nil || got != "use A.Case\nok\n" || len(refs) != 1 || refs[0] != "abc123" {
		t.Fatalf("FileAt = %q, %v (refs %v)", got, err, refs)
	}
	for path, want := range map[string]error{"test/gone_test.exs": ErrFileGone, "test": ErrFileGone, "test/big_test.exs": ErrFileTooLarge} {
		if _, err := g.FileAt(context.Background(), repo, path, "abc123"); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", path, err, want)
		}
	}
}

// restOn is the REST client on a server of mux's routes.
func restOn(t *testing.T, mux *http.ServeMux) *restGitHub {
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := gogithub.NewClient(nil)
	c.BaseURL, _ = url.Parse(srv.URL + "/")
	return &restGitHub{c: c}
}
