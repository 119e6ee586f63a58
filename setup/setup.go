package setup

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/pitcrew/pitcrew/internal/hostrule"
)

// Credentials are what GitHub hands over when the app is registered.
type Credentials struct {
	ID            int64  `json:"id"`
	Slug          string `json:"slug"`
	Name          string `json:"name"`
	HTMLURL       string `json:"html_url"`
	PEM           string `json:"pem"`
	WebhookSecret string `json:"webhook_secret"`
	ClientID      string `json:"client_id"`
	ClientSecret  string `json:"client_secret"`
}

// Server serves the setup pages.
type Server struct {
	Manifest        []byte // from BuildManifest
	GitHubWebURL    string // https://github.com
	GitHubAPIURL    string // https://api.github.com/
	CredentialsPath string
	// Registered is called once the credentials are written; pitcrew then
	// starts serving without a restart. It is called at most once.
	Registered func(Credentials) error
	HTTPClient *http.Client
	// Token, when set, lets a browser that is not on this machine (pitcrew
	// in a container) start one registration: /?setup_token=<Token>.
	// Loopback addresses need none. Whoever registers the app controls
	// pitcrew.
	Token string
	// Hosts are the Host values every page but /healthz answers; the zero
	// Rule allows the loopback names on the port the request came in on.
	Hosts hostrule.Rule
	// Missing are the settings, besides the GitHub App's, that pitcrew
	// needs to start, each as a sentence saying what to set; while there
	// are any, the pages list them instead of offering to register.
	Missing []string

	mu     sync.Mutex
	states map[string]time.Time // state → expiry; each is used once
	spent  bool                 // Token started a registration, or an app was registered
	done   bool                 // an app was registered: the flow is over
	result map[string]string    // what the page that ended the flow said, shown again at /
}

const stateTTL = 30 * time.Minute

var orgName = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)

// admit reports whether r may open the pages: from loopback, or with the
// token while no registration has used it. spend uses it up.
func (s *Server) admit(r *http.Request, spend bool) bool {
	if hostrule.FromLoopback(r) {
		return true
	}
	got := r.FormValue("setup_token")
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(s.Token))
	if s.Token == "" || got == "" || subtle.ConstantTimeCompare(a[:], b[:]) != 1 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ok := !s.spent
	s.spent = s.spent || spend
	return ok
}

const refused = "pitcrew is in setup mode: browse from this machine, or open the setup URL pitcrew printed at start; its setup_token starts one registration (restart pitcrew for a new one)"

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/healthz" { // holds nothing; probes send any Host
		io.WriteString(w, "ok\n")
		return
	}
	// Before anything else: a rebound name comes from loopback too.
	if !s.Hosts.Check(w, r) {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	if (r.URL.Path == "/" || r.URL.Path == "/setup/start") && !s.admit(r, false) {
		http.Error(w, refused, http.StatusForbidden)
		return
	}
	s.mu.Lock()
	result := s.result
	s.mu.Unlock()
	page := r.URL.Path == "/" || r.URL.Path == "/setup/start" // admitted above
	switch {
	case page && result != nil:
		// Registered (or registering): never offer a second app.
		render(w, http.StatusOK, donePage, result)
	case page && len(s.Missing) > 0:
		render(w, http.StatusOK, missingPage, map[string][]string{"Missing": s.Missing})
	case r.Method == http.MethodGet && r.URL.Path == "/":
		render(w, http.StatusOK, startPage, s.startData(map[string]string{"Token": r.FormValue("setup_token")}))
	case r.Method == http.MethodPost && r.URL.Path == "/setup/start":
		s.start(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/setup/callback":
		s.callback(w, r)
	default:
		http.Error(w, "pitcrew is in setup mode: open / to register the GitHub App", http.StatusServiceUnavailable)
	}
}

// start renders the form that posts the manifest to GitHub, for a personal
// account or an organisation, with a fresh single-use state.
func (s *Server) start(w http.ResponseWriter, r *http.Request) {
	target := strings.TrimRight(s.GitHubWebURL, "/") + "/settings/apps/new"
	if r.PostForm.Get("account") == "organization" {
		org := r.PostForm.Get("org")
		if !orgName.MatchString(org) {
			render(w, http.StatusBadRequest, startPage, s.startData(map[string]string{"Error": "That is not an organisation name.", "Token": r.PostForm.Get("setup_token")}))
			return
		}
		target = strings.TrimRight(s.GitHubWebURL, "/") + "/organizations/" + org + "/settings/apps/new"
	}
	if !s.admit(r, true) {
		http.Error(w, refused, http.StatusForbidden)
		return
	}
	state := s.newState()
	render(w, http.StatusOK, continuePage, map[string]string{"Action": target + "?state=" + url.QueryEscape(state), "Manifest": string(s.Manifest)})
}

func (s *Server) newState() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	state := hex.EncodeToString(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.states == nil {
		s.states = map[string]time.Time{}
	}
	for k, exp := range s.states {
		if time.Now().After(exp) {
			delete(s.states, k)
		}
	}
	s.states[state] = time.Now().Add(stateTTL)
	return state
}

// useState consumes a state: true only the first time, before it expires.
func (s *Server) useState(state string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.states[state]
	delete(s.states, state)
	return ok && time.Now().Before(exp)
}

var codePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)

func (s *Server) callback(w http.ResponseWriter, r *http.Request) {
	code, state := r.URL.Query().Get("code"), r.URL.Query().Get("state")
	if !s.useState(state) || !codePattern.MatchString(code) {
		render(w, http.StatusBadRequest, startPage, map[string]string{"Error": "This registration link is not valid (wrong, used or expired state). Start again."})
		return
	}
	s.mu.Lock()
	finished := s.done
	s.mu.Unlock()
	if finished {
		render(w, http.StatusConflict, startPage, map[string]string{"Error": "An app was registered already."})
		return
	}
	creds, err := s.convert(r.Context(), code)
	if err != nil {
		render(w, http.StatusBadGateway, startPage, map[string]string{"Error": "GitHub did not complete the registration: " + err.Error()})
		return
	}
	if err := WriteCredentials(s.CredentialsPath, creds); err != nil {
		render(w, http.StatusInternalServerError, startPage, map[string]string{"Error": "Could not save the credentials: " + err.Error()})
		return
	}
	where := s.CredentialsPath
	if abs, err := filepath.Abs(where); err == nil {
		where = abs
	}
	fmt.Fprintf(os.Stderr, "pitcrew: GitHub App %q registered; credentials written to %s (mode 0600, ignored by git)\n", creds.Slug, where)
	result := map[string]string{"Name": creds.Name, "Install": creds.HTMLURL + "/installations/new", "Path": where}
	s.mu.Lock()
	first := !s.done
	s.done, s.spent = true, true
	if first {
		// Shown at / while pitcrew starts with the app, so no second
		// registration is offered meanwhile.
		s.result = map[string]string{"Name": creds.Name, "Install": result["Install"], "Path": where, "Restart": "pitcrew is starting with it; reload this page in a moment."}
	}
	s.mu.Unlock()
	if s.Registered != nil && first {
		if err := s.Registered(creds); err != nil {
			result["Restart"] = "pitcrew could not start with it: " + err.Error()
			fmt.Fprintf(os.Stderr, "pitcrew: the app is registered, but pitcrew could not start with it: %v\n", err)
		}
	}
	s.mu.Lock()
	s.result = result
	s.mu.Unlock()
	render(w, http.StatusOK, donePage, result)
}

// convert exchanges the code (POST /app-manifests/{code}/conversions).
func (s *Server) convert(ctx context.Context, code string) (Credentials, error) {
	client := s.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(s.GitHubAPIURL, "/")+"/app-manifests/"+code+"/conversions", nil)
	if err != nil {
		return Credentials{}, err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	resp, err := client.Do(req)
	if err != nil {
		return Credentials{}, fmt.Errorf("calling GitHub: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusCreated {
		return Credentials{}, fmt.Errorf("GitHub answered %s", resp.Status)
	}
	var c Credentials
	if err := json.Unmarshal(body, &c); err != nil || c.ID == 0 || c.PEM == "" || c.WebhookSecret == "" {
		return Credentials{}, fmt.Errorf("GitHub's answer lacks the app id, key or webhook secret")
	}
	if !strings.HasPrefix(c.HTMLURL, "https://") && !strings.HasPrefix(c.HTMLURL, "http://") {
		c.HTMLURL = ""
	}
	return c, nil
}

// WriteCredentials writes the credentials as a pitcrew -config file (the
// environment's names), readable and writable by its owner only. A
// directory it makes for them gets a .gitignore of everything, so the
// app's private key is never committed with the checkout it sits in.
func WriteCredentials(path string, c Credentials) error {
	dir := filepath.Dir(path)
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if os.IsNotExist(statErr) {
		if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("# pitcrew's credentials: never commit them.\n*\n"), 0o600); err != nil {
			return err
		}
	}
	out, err := yaml.Marshal(map[string]string{
		"GITHUB_APP_INTEGRATION_ID": fmt.Sprint(c.ID), "GITHUB_APP_PRIVATE_KEY": c.PEM,
		"GITHUB_APP_WEBHOOK_SECRET": c.WebhookSecret, "GITHUB_APP_CLIENT_ID": c.ClientID, "GITHUB_APP_CLIENT_SECRET": c.ClientSecret,
	})
	if err != nil {
		return err
	}
	// A fresh temporary file (never an existing one, never through a
	// symlink), made owner-only before the secrets go in.
	f, err := os.CreateTemp(filepath.Dir(path), ".credentials-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(out); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

func render(w http.ResponseWriter, status int, t *template.Template, data any) {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		http.Error(w, "page error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action *")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}
