package sandbox_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/sandbox"
)

// keyWatcher is a server that records whether it was sent the API key and
// serves a body of its own.
type keyWatcher struct {
	*httptest.Server
	mu      sync.Mutex
	gotKeys int
}

func newKeyWatcher(t *testing.T, body string) *keyWatcher {
	k := &keyWatcher{}
	k.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			k.mu.Lock()
			k.gotKeys++
			k.mu.Unlock()
		}
		w.Write([]byte(body))
	}))
	t.Cleanup(k.Close)
	return k
}

func TestDownloadNeverLeavesTheSandboxOrigin(t *testing.T) {
	elsewhere := newKeyWatcher(t, "# a report written by someone else")
	// The same host on another port: another origin.
	otherPort := newKeyWatcher(t, "# served by another port")
	var api *httptest.Server
	api = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer key" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/a/own":
			w.Write([]byte("# slow queries"))
		case "/a/moved":
			http.Redirect(w, r, api.URL+"/a/own", http.StatusFound)
		case "/a/other-port":
			http.Redirect(w, r, otherPort.URL+"/a/own", http.StatusFound)
		case "/a/other-host":
			http.Redirect(w, r, strings.Replace(elsewhere.URL, "127.0.0.1", "localhost", 1)+"/a/own", http.StatusFound)
		}
	}))
	t.Cleanup(api.Close)
	c, err := sandbox.NewClient(sandbox.Config{BaseURL: api.URL, Org: "o", APIKey: "key", BaseDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(api.URL)
	for _, tc := range []struct {
		name, url, want string
	}{
		{"an artifact on the API's origin", api.URL + "/a/own", "# slow queries"},
		{"a redirect within the origin", api.URL + "/a/moved", "# slow queries"},
		{"the origin with the host in capitals", "http://" + strings.ToUpper(u.Hostname()) + ":" + u.Port() + "/a/own", "# slow queries"},
		{"a redirect to another port of the same host", api.URL + "/a/other-port", ""},
		{"a redirect to another host", api.URL + "/a/other-host", ""},
		{"an artifact URL on another port", otherPort.URL + "/a/own", ""},
		{"an artifact URL over another scheme", strings.Replace(api.URL, "http://", "https://", 1) + "/a/own", ""},
		{"an artifact URL without a host", "http:///a/own", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.Download(context.Background(), tc.url)
			if tc.want != "" {
				if err != nil || string(got) != tc.want {
					t.Fatalf("got %q, %v", got, err)
				}
				return
			}
			if err == nil || !sandbox.IsPermanent(err) || len(got) != 0 {
				t.Fatalf("got %q, %v; want a permanent refusal", got, err)
			}
		})
	}
	if elsewhere.gotKeys+otherPort.gotKeys != 0 {
		t.Fatalf("the API key reached another origin %d times", elsewhere.gotKeys+otherPort.gotKeys)
	}
}

// An artifact longer than pitcrew reads comes back cut, and says so: a
// reader never takes its first 8 MiB for the whole.
func TestAnArtifactOverTheCapComesBackCutAndSaysSo(t *testing.T) {
	for _, size := range []int{sandbox.MaxArtifact, sandbox.MaxArtifact + 1, sandbox.MaxArtifact + 5<<20} {
		srv := newKeyWatcher(t, strings.Repeat("x", size))
		c, err := sandbox.NewClient(sandbox.Config{BaseURL: srv.URL, Org: "o", APIKey: "k", BaseDelay: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		data, err := c.Download(context.Background(), srv.URL+"/a/pitcrew-evidence.log")
		cut := size > sandbox.MaxArtifact
		if len(data) != min(size, sandbox.MaxArtifact) || errors.Is(err, sandbox.ErrArtifactCut) != cut || !cut && err != nil {
			t.Fatalf("%d bytes: got %d, %v", size, len(data), err)
		}
		if srv.gotKeys != 1 {
			t.Fatalf("%d bytes: downloaded %d times; a cut artifact is not fetched again", size, srv.gotKeys)
		}
	}
}
