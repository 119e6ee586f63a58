package setup

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew"
)

func TestUnreachableNamesWhyTheInternetCannotReachAWebhookURL(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"http://127.0.0.1:8080/api/github/hook", "127.0.0.1 is a loopback address"},
		{"http://[::1]:8080/api/github/hook", "::1 is a loopback address"},
		{"http://localhost:8080/api/github/hook", "localhost is this machine's own name"},
		{"http://pitcrew.localhost/api/github/hook", "pitcrew.localhost is this machine's own name"},
		{"http://0.0.0.0:8080/api/github/hook", "0.0.0.0 is no address anyone can connect to"},
		{"http://10.1.2.3/api/github/hook", "10.1.2.3 is a private address"},
		{"http://172.20.0.5/api/github/hook", "172.20.0.5 is a private address"},
		{"http://192.168.1.20:8080/api/github/hook", "192.168.1.20 is a private address"},
		{"http://100.101.102.103/api/github/hook", "100.101.102.103 is a private address"},
		{"http://[fd00::1]/api/github/hook", "fd00::1 is a private address"},
		{"http://169.254.10.1/api/github/hook", "169.254.10.1 is a link-local address"},
		{"http://[fe80::1]/api/github/hook", "fe80::1 is a link-local address"},
		{"http://laptop.local:8080/api/github/hook", "laptop.local is a .local name"},
		{"http://pitcrew.internal/api/github/hook", "pitcrew.internal is a .internal name"},
		{"http://pitcrew:8080/api/github/hook", "pitcrew is a name without a domain"},
		{"https://pitcrew.example.com/api/github/hook", ""},
		{"https://smee.io/AbCdEf", ""},
		{"http://203.0.113.7:8080/api/github/hook", ""},
		{"not a url", "is not a URL with a host"},
	} {
		if got := Unreachable(tc.url); tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("Unreachable(%q) = %q, want %q", tc.url, got, tc.want)
		}
	}
}

func TestTheSetupPageWarnsOfAWebhookURLGitHubCannotReach(t *testing.T) {
	for _, tc := range []struct {
		name               string
		publicURL, relay   string
		warned             bool
		page, terminalText []string
	}{
		{name: "the default public URL and no relay", publicURL: "http://localhost:8080", warned: true,
			page: []string{`id="webhook-warning"`, "<code>http://localhost:8080/api/github/hook</code>", "localhost is this machine&#39;s own name",
				`<a href="https://smee.io">smee.io</a>`, "<code>PITCREW_WEBHOOK_PROXY_URL</code>"},
			terminalText: []string{"http://localhost:8080/api/github/hook", "cannot reach (localhost is this machine's own name)", "PITCREW_WEBHOOK_PROXY_URL", "https://smee.io"}},
		{name: "a private address", publicURL: "http://192.168.1.20:8080", warned: true,
			page: []string{"192.168.1.20 is a private address"}, terminalText: []string{"192.168.1.20 is a private address"}},
		{name: "a relay channel", publicURL: "http://localhost:8080", relay: "https://smee.io/AbCdEf"},
		{name: "a public address", publicURL: "https://pitcrew.example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			manifest, err := BuildManifest(pitcrew.AppManifest, tc.publicURL, tc.relay)
			if err != nil {
				t.Fatal(err)
			}
			s := &Server{Manifest: manifest, GitHubWebURL: "https://github.com"}
			rec := serve(s, http.MethodGet, "/", "", "127.0.0.1:40000", "localhost:8080")
			page := rec.Body.String()
			if rec.Code != http.StatusOK || strings.Contains(page, "webhook-warning") != tc.warned || !strings.Contains(page, `id="register"`) {
				t.Fatalf("answered %d, warned %v, want %v:\n%s", rec.Code, !tc.warned, tc.warned, page)
			}
			for _, want := range tc.page {
				if !strings.Contains(page, want) {
					t.Errorf("the page lacks %q:\n%s", want, page)
				}
			}
			terminal := WebhookWarning(manifest)
			if (terminal != "") != tc.warned {
				t.Errorf("terminal warning %q, want one: %v", terminal, tc.warned)
			}
			for _, want := range tc.terminalText {
				if !strings.Contains(terminal, want) {
					t.Errorf("the terminal warning lacks %q: %s", want, terminal)
				}
			}
		})
	}
}
