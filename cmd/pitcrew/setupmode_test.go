package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// A port already taken is an error at start that says what to do, and
// neither "serving" nor a setup URL is said first.
func TestServingIsSaidOnlyOnceThePortIsBound(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	env := map[string]string{"PITCREW_ADDR": taken.Addr().String(), "PITCREW_CREDENTIALS_FILE": filepath.Join(t.TempDir(), "none.yml")} // setup mode
	cfg, err := LoadConfig(nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	var logs, said bytes.Buffer
	terminal = &said
	defer func() { terminal = os.Stderr }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = run(ctx, cfg, zerolog.New(&logs))
	if err == nil || !strings.Contains(err.Error(), "listening on PITCREW_ADDR") || !strings.Contains(err.Error(), "set PITCREW_ADDR to a free one") ||
		strings.Contains(logs.String(), "pitcrew is serving") || strings.Contains(logs.String(), "setup mode") {
		t.Fatalf("run = %v\nlogs: %s", err, logs.String())
	}
	if said.Len() != 0 {
		t.Fatalf("a pitcrew that could not bind its port printed %q", said.String())
	}
}

func TestSetupModeSaysWhereToOpenThePagesFromWhere(t *testing.T) {
	const token = "t0k3n"
	lan := func() string { return "192.168.1.20" }
	for _, tc := range []struct {
		name, publicURL, addr string
		lan                   func() string
		want, not             []string
	}{
		{name: "a public URL is the link from anywhere", publicURL: "https://pitcrew.example.com", addr: ":8080", lan: lan,
			want: []string{"Open https://pitcrew.example.com/?setup_token=t0k3n (the token starts one registration)"}, not: []string{"localhost"}},
		{name: "a public URL on the network is the link from elsewhere", publicURL: "http://192.168.1.20:8080", addr: ":8080", lan: lan,
			want: []string{"Open http://192.168.1.20:8080/?setup_token=t0k3n"}, not: []string{"localhost"}},
		{name: "localhost on every interface: the container's host, and what another machine needs", publicURL: "http://localhost:8080", addr: ":8080", lan: lan,
			want: []string{"Open http://localhost:8080/ from this machine", "http://localhost:8080/?setup_token=t0k3n from the host of its container",
				"From another machine, set PITCREW_PUBLIC_URL to the address that machine reaches pitcrew at, such as http://192.168.1.20:8080, and restart pitcrew"}},
		{name: "no address on a network", publicURL: "http://localhost:9000", addr: "0.0.0.0:9000", lan: func() string { return "" },
			want: []string{"such as http://<this machine's address>:9000"}},
		{name: "listening on loopback only: no link from elsewhere", publicURL: "http://127.0.0.1:8080", addr: "127.0.0.1:8080", lan: lan,
			want: []string{"Open http://127.0.0.1:8080/ in a browser on this machine (PITCREW_ADDR 127.0.0.1:8080 takes no connection from elsewhere)"}, not: []string{"setup_token", "192.168"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := setupMessage(tc.publicURL, tc.addr, token, tc.lan)
			for _, want := range tc.want {
				if !strings.Contains(got, want) {
					t.Errorf("%q lacks %q", got, want)
				}
			}
			for _, not := range tc.not {
				if strings.Contains(got, not) {
					t.Errorf("%q says %q", got, not)
				}
			}
		})
	}
}

func TestSetupModeWarnsInTheTerminalOfAWebhookURLGitHubCannotReach(t *testing.T) {
	for _, tc := range []struct {
		name  string
		env   map[string]string
		warns string
	}{
		{name: "the default public URL", env: map[string]string{}, warns: "http://localhost:8080/api/github/hook, which GitHub.com cannot reach (localhost is this machine's own name)"},
		{name: "a private public URL", env: map[string]string{"PITCREW_PUBLIC_URL": "http://10.0.0.7:8080"}, warns: "10.0.0.7 is a private address"},
		{name: "a relay channel", env: map[string]string{"PITCREW_WEBHOOK_PROXY_URL": "https://smee.io/AbCdEf"}},
		{name: "a public URL", env: map[string]string{"PITCREW_PUBLIC_URL": "https://pitcrew.example.com"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := LoadConfig(nil, func(k string) string { return tc.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			var said bytes.Buffer
			setupServer(cfg, zerolog.Nop(), &said, nil)
			warning := strings.Contains(said.String(), "pitcrew: warning:")
			if warning != (tc.warns != "") || !strings.Contains(said.String(), tc.warns) {
				t.Fatalf("printed %q, want a warning with %q", said.String(), tc.warns)
			}
			if warning && !strings.Contains(said.String(), "set PITCREW_WEBHOOK_PROXY_URL to its URL") {
				t.Errorf("the warning offers no relay: %q", said.String())
			}
		})
	}
}
