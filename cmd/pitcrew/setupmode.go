package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"

	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew"
	"github.com/pitcrew/pitcrew/internal/hostrule"
	"github.com/pitcrew/pitcrew/setup"
)

// terminal is where pitcrew writes what is for the person who started it
// (setup mode's URLs and warnings) rather than for its log.
var terminal io.Writer = os.Stderr

// listen binds PITCREW_ADDR, saying what to do when the port is taken.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("listening on PITCREW_ADDR %s: %w (another pitcrew or another server holds the port: stop it, or set PITCREW_ADDR to a free one such as :8081)", addr, err)
	}
	if err != nil {
		return nil, fmt.Errorf("listening on PITCREW_ADDR %s: %w", addr, err)
	}
	return ln, nil
}

// setupServer serves the registration pages; registered gets the
// configuration re-read with the new credentials. What the person at the
// terminal needs (the URLs, a webhook URL GitHub cannot reach) goes to out.
func setupServer(cfg Config, log zerolog.Logger, out io.Writer, registered func(Config) error) http.Handler {
	manifest, err := setup.BuildManifest(pitcrew.AppManifest, cfg.PublicURL, cfg.WebhookProxyURL)
	if err != nil {
		panic(err) // app.yml is embedded: a broken one fails every test
	}
	hosts, err := hostrule.New(cfg.PublicURL, cfg.Addr)
	if err != nil {
		log.Warn().Err(err).Msg("the setup pages answer localhost, 127.0.0.1 and [::1] only")
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	// Printed, not logged: it is for the person at this terminal.
	fmt.Fprintln(out, setupMessage(cfg.PublicURL, cfg.Addr, token, lanAddress))
	if warning := setup.WebhookWarning(manifest); warning != "" {
		fmt.Fprintln(out, "pitcrew: warning: "+warning)
	}
	return &setup.Server{
		Manifest: manifest, GitHubWebURL: cfg.GitHubWebURL, GitHubAPIURL: cfg.GitHubAPIURL, CredentialsPath: cfg.CredentialsFile, Token: token, Hosts: hosts,
		Missing: cfg.sandboxProblems(),
		Registered: func(setup.Credentials) error {
			next, err := LoadConfig(cfg.ConfigFiles(), os.Getenv)
			if err != nil {
				return err
			}
			next.flagFile = cfg.flagFile
			return registered(next)
		},
	}
}

// setupMessage says where to open the setup pages. A browser elsewhere
// needs a URL that names this machine as it reaches it, since the pages
// answer only the public URL's host or the loopback names, and GitHub
// sends the browser back to the public URL: a public URL of localhost
// serves this machine and a container's host only, and the message says
// what a browser on another machine needs instead of a link that cannot
// work there. lan finds this machine's address on its network, "" for none.
func setupMessage(publicURL, addr, token string, lan func() string) string {
	base := strings.TrimRight(publicURL, "/")
	tokenURL := base + "/?setup_token=" + token
	if !loopbackName(hostOf(publicURL)) {
		return fmt.Sprintf("pitcrew: setup mode. Open %s (the token starts one registration), or %s/ from this machine.", tokenURL, base)
	}
	if host, _, err := net.SplitHostPort(addr); err == nil && loopbackName(host) {
		return fmt.Sprintf("pitcrew: setup mode. Open %s/ in a browser on this machine (PITCREW_ADDR %s takes no connection from elsewhere).", base, addr)
	}
	port := "8080"
	if u, err := url.Parse(publicURL); err == nil && u.Port() != "" {
		port = u.Port()
	}
	example := "http://<this machine's address>:" + port
	if ip := lan(); ip != "" {
		example = "http://" + net.JoinHostPort(ip, port)
	}
	return fmt.Sprintf("pitcrew: setup mode. Open %s/ from this machine, or %s from the host of its container (the token starts one registration). "+
		"From another machine, set PITCREW_PUBLIC_URL to the address that machine reaches pitcrew at, such as %s, and restart pitcrew: "+
		"the pages answer that address only then, and GitHub sends the browser back there.", base, tokenURL, example)
}

func hostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// loopbackName reports whether host names this machine only.
func loopbackName(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// lanAddress is the address this machine sends from on its network: the
// source of a route to a documentation address (no packet is sent).
func lanAddress() string {
	c, err := net.Dial("udp", "192.0.2.1:9")
	if err != nil {
		return ""
	}
	defer c.Close()
	if a, ok := c.LocalAddr().(*net.UDPAddr); ok && !a.IP.IsLoopback() && !a.IP.IsUnspecified() {
		return a.IP.String()
	}
	return ""
}
