package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"gopkg.in/yaml.v3"

	"github.com/pitcrew/pitcrew/app"
	"github.com/pitcrew/pitcrew/sandbox"
)

// Config is the server's configuration. Each field is read from the
// environment variable fields() maps to it; a YAML file (-config) may set
// the same names, and the environment wins over it.
type Config struct {
	Addr      string
	PublicURL string
	LogLevel  string

	AppID          string
	PrivateKey     string
	PrivateKeyPath string
	WebhookSecret  string
	GitHubAPIURL   string
	GitHubWebURL   string
	ClientID       string
	ClientSecret   string
	// CredentialsFile is where the setup pages write the registered app's
	// credentials; it is read at start when it exists.
	CredentialsFile string
	WebhookProxyURL string // a smee.io-style URL for the manifest's webhook, when developing
	StatusToken     string // protects the status page; unset: loopback only

	flagFile string // the -config file, kept to re-read after setup

	RedisURL string // may hold a password
	// RedisSentinels (host:port,...) and RedisSentinelMaster name a
	// Sentinel-monitored primary; they win over RedisURL.
	RedisSentinels, RedisSentinelMaster  string
	RedisPassword, RedisSentinelPassword string

	RushAPIURL        string
	RushOrg           string
	RushAPIKey        string
	RushAgent         string
	RushWebhookSecret string

	// sources holds the variables of the outside alert sources (Datadog,
	// Sentry), which each source declares (app.SourceEnvKeys).
	sources map[string]*string

	// Operations (durations as Go parses them: "90s", "5m", "72h").
	Workers        string // queue worker goroutines per replica
	SweepEvery     string // delivery sweeper interval
	SweepLookBack  string // how far back the sweeper reads the delivery log
	ReconcileEvery string // lost-callback reconciler interval
	StaleAfter     string // a started run without outcome is read again after this
	MaxRunAge      string // a session running longer is reported failed
}

// defaults are the values the table in docs/configuration.md gives.
var defaults = map[string]string{
	"PITCREW_ADDR":             ":8080",
	"PITCREW_PUBLIC_URL":       "http://localhost:8080",
	"PITCREW_LOG_LEVEL":        "info",
	"GITHUB_V3_API_URL":        "https://api.github.com/",
	"GITHUB_WEB_URL":           "https://github.com",
	"PITCREW_CREDENTIALS_FILE": "", // defaultCredentials: the same file whatever the working directory
	"RUSH_API_URL":             "https://api.prix.dev",
	"RUSH_AGENT":               "claude",
	"PITCREW_WORKERS":          "10",
	"PITCREW_SWEEP_EVERY":      "5m",
	"PITCREW_SWEEP_LOOKBACK":   "72h",
	"PITCREW_RECONCILE_EVERY":  "2m",
	"PITCREW_STALE_AFTER":      "10m",
	"PITCREW_MAX_RUN_AGE":      "24h",
}

// legacyCredentials is where setup wrote the credentials before they had a
// home of their own: relative to the directory pitcrew was started in.
const legacyCredentials = ".pitcrew/credentials.yml"

// defaultCredentials is the credentials file when none is configured:
// pitcrew/credentials.yml in the user's configuration directory
// ($XDG_CONFIG_HOME or ~/.config on Linux), outside any working tree, so
// every subcommand finds it from any directory. A file an earlier version
// wrote in ./.pitcrew is still read while there is none there.
func defaultCredentials() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return legacyCredentials
	}
	home := filepath.Join(dir, "pitcrew", "credentials.yml")
	if _, err := os.Stat(home); err != nil {
		if _, err := os.Stat(legacyCredentials); err == nil {
			return legacyCredentials
		}
	}
	return home
}

// configFiles lists the files to read: the credentials file the setup
// pages wrote, when it exists, then the -config file (which wins). The
// credentials file's path comes from the environment, else the -config
// file, else the default.
func configFiles(flagFile string, getenv func(string) string) []string {
	creds := getenv("PITCREW_CREDENTIALS_FILE")
	if creds == "" && flagFile != "" {
		var m map[string]string
		if b, err := os.ReadFile(flagFile); err == nil && yaml.Unmarshal(b, &m) == nil {
			creds = m["PITCREW_CREDENTIALS_FILE"]
		}
	}
	if creds == "" {
		creds = defaultCredentials()
	}
	var files []string
	if _, err := os.Stat(creds); err == nil {
		files = append(files, creds)
	}
	if flagFile != "" {
		files = append(files, flagFile)
	}
	return files
}

// ConfigFiles is configFiles for this configuration.
func (c Config) ConfigFiles() []string {
	return configFiles(c.flagFile, func(k string) string {
		if k == "PITCREW_CREDENTIALS_FILE" {
			return c.CredentialsFile
		}
		return ""
	})
}

// LoadConfig reads the files in order (later ones win), then the
// environment, then fills defaults. Unknown keys in a file are errors.
func LoadConfig(files []string, getenv func(string) string) (Config, error) {
	values := map[string]string{}
	var c Config
	fields := c.fields()
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			return Config{}, fmt.Errorf("reading config file: %w", err)
		}
		var m map[string]string
		if err := yaml.Unmarshal(b, &m); err != nil {
			return Config{}, fmt.Errorf("config file %s: %w", file, err)
		}
		for k, v := range m {
			if _, ok := fields[k]; !ok {
				return Config{}, fmt.Errorf("config file %s: unknown key %s", file, k)
			}
			if v != "" { // an empty value does not unset what an earlier file set
				values[k] = v
			}
		}
	}
	for name, ptr := range fields {
		if v := getenv(name); v != "" {
			*ptr = v
		} else if v, ok := values[name]; ok {
			*ptr = v
		} else {
			*ptr = defaults[name]
		}
	}
	if c.CredentialsFile == "" {
		c.CredentialsFile = defaultCredentials()
	}
	if getenv("PITCREW_PUBLIC_URL") == "" && values["PITCREW_PUBLIC_URL"] == "" {
		c.PublicURL = localURL(c.Addr)
	}
	if _, err := zerolog.ParseLevel(c.LogLevel); err != nil || c.LogLevel == "" {
		return Config{}, errors.New("PITCREW_LOG_LEVEL must be one of trace, debug, info, warn, error")
	}
	if c.PrivateKey == "" && c.PrivateKeyPath != "" {
		b, err := os.ReadFile(c.PrivateKeyPath)
		if err != nil {
			return Config{}, fmt.Errorf("reading GITHUB_APP_PRIVATE_KEY_PATH: %w", err)
		}
		c.PrivateKey = string(b)
	}
	return c, nil
}

// localURL is the default public URL: this machine, on the port pitcrew
// listens on (so PITCREW_ADDR alone moves the registration's URLs too).
func localURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" || port == "0" {
		return defaults["PITCREW_PUBLIC_URL"]
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// MissingGitHubApp reports whether no GitHub App is configured at all:
// pitcrew then starts in setup mode.
func (c Config) MissingGitHubApp() bool {
	return c.AppID == "" && c.PrivateKey == "" && c.WebhookSecret == ""
}

// fields maps each variable name to its field.
func (c *Config) fields() map[string]*string {
	if c.sources == nil {
		c.sources = map[string]*string{}
		for _, k := range app.SourceEnvKeys() {
			c.sources[k] = new(string)
		}
	}
	m := map[string]*string{
		"PITCREW_ADDR": &c.Addr, "PITCREW_PUBLIC_URL": &c.PublicURL, "PITCREW_LOG_LEVEL": &c.LogLevel,
		"GITHUB_APP_INTEGRATION_ID": &c.AppID, "GITHUB_APP_PRIVATE_KEY": &c.PrivateKey,
		"GITHUB_APP_PRIVATE_KEY_PATH": &c.PrivateKeyPath, "GITHUB_APP_WEBHOOK_SECRET": &c.WebhookSecret,
		"GITHUB_V3_API_URL": &c.GitHubAPIURL, "REDIS_URL": &c.RedisURL,
		"REDIS_SENTINELS": &c.RedisSentinels, "REDIS_SENTINEL_MASTER": &c.RedisSentinelMaster,
		"REDIS_PASSWORD": &c.RedisPassword, "REDIS_SENTINEL_PASSWORD": &c.RedisSentinelPassword,
		"GITHUB_WEB_URL": &c.GitHubWebURL, "GITHUB_APP_CLIENT_ID": &c.ClientID, "GITHUB_APP_CLIENT_SECRET": &c.ClientSecret,
		"PITCREW_CREDENTIALS_FILE": &c.CredentialsFile, "PITCREW_WEBHOOK_PROXY_URL": &c.WebhookProxyURL, "PITCREW_STATUS_TOKEN": &c.StatusToken,
		"RUSH_API_URL": &c.RushAPIURL, "RUSH_ORG": &c.RushOrg, "RUSH_API_KEY": &c.RushAPIKey,
		"RUSH_AGENT": &c.RushAgent, "RUSH_WEBHOOK_SECRET": &c.RushWebhookSecret,
		"PITCREW_WORKERS": &c.Workers, "PITCREW_SWEEP_EVERY": &c.SweepEvery, "PITCREW_SWEEP_LOOKBACK": &c.SweepLookBack,
		"PITCREW_RECONCILE_EVERY": &c.ReconcileEvery, "PITCREW_STALE_AFTER": &c.StaleAfter, "PITCREW_MAX_RUN_AGE": &c.MaxRunAge,
	}
	for k, p := range c.sources {
		m[k] = p
	}
	return m
}

// Validate names every required variable that is missing, never a value.
func (c Config) Validate() error {
	var missing []string
	for _, r := range []struct{ name, value string }{
		{"GITHUB_APP_INTEGRATION_ID", c.AppID},
		{"GITHUB_APP_PRIVATE_KEY or GITHUB_APP_PRIVATE_KEY_PATH", c.PrivateKey},
		{"GITHUB_APP_WEBHOOK_SECRET", c.WebhookSecret},
		{"RUSH_ORG", c.RushOrg},
		{"RUSH_API_KEY", c.RushAPIKey},
		{"RUSH_WEBHOOK_SECRET", c.RushWebhookSecret},
	} {
		if strings.TrimSpace(r.value) == "" {
			missing = append(missing, r.name)
		}
	}
	if len(missing) > 0 {
		return errors.New("missing configuration: " + strings.Join(missing, ", "))
	}
	if _, err := sandbox.NewVerifier(c.RushWebhookSecret); err != nil {
		return errors.New(badSecret)
	}
	return nil
}

const badSecret = "RUSH_WEBHOOK_SECRET is not a signing secret: it must be whsec_ followed by base64, as the sandbox gives it (the README's whsec_... is a placeholder)"

// sandboxProblems are the sandbox settings pitcrew cannot start without,
// each saying what to set; the setup pages list them before registering.
func (c Config) sandboxProblems() []string {
	var out []string
	if strings.TrimSpace(c.RushOrg) == "" {
		out = append(out, "RUSH_ORG is unset: your organisation on the sandbox service.")
	}
	if strings.TrimSpace(c.RushAPIKey) == "" {
		out = append(out, "RUSH_API_KEY is unset: an API key of that organisation.")
	}
	switch _, err := sandbox.NewVerifier(c.RushWebhookSecret); {
	case strings.TrimSpace(c.RushWebhookSecret) == "":
		out = append(out, "RUSH_WEBHOOK_SECRET is unset: the secret the sandbox signs its callbacks with (whsec_ then base64).")
	case err != nil:
		out = append(out, badSecret+".")
	}
	return out
}

// V4URL derives the GraphQL endpoint from the REST one: api.github.com
// serves it at /graphql, GitHub Enterprise at /api/graphql.
func (c Config) V4URL() string {
	base := strings.TrimRight(c.GitHubAPIURL, "/")
	if strings.HasSuffix(base, "/api/v3") {
		return strings.TrimSuffix(base, "/v3") + "/graphql"
	}
	return base + "/graphql"
}

// SourceEnv is the outside sources' variables, by name.
func (c Config) SourceEnv() map[string]string {
	out := map[string]string{}
	for k, v := range c.sources {
		out[k] = *v
	}
	return out
}

// Durations parses the operational durations.
func (c Config) Durations() (sweep, lookBack, reconcile, stale, maxAge time.Duration, err error) {
	var errs []error
	parse := func(name, v string) time.Duration {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("%s: %q is not a positive duration", name, v))
		}
		return d
	}
	sweep = parse("PITCREW_SWEEP_EVERY", c.SweepEvery)
	lookBack = parse("PITCREW_SWEEP_LOOKBACK", c.SweepLookBack)
	reconcile = parse("PITCREW_RECONCILE_EVERY", c.ReconcileEvery)
	stale = parse("PITCREW_STALE_AFTER", c.StaleAfter)
	maxAge = parse("PITCREW_MAX_RUN_AGE", c.MaxRunAge)
	return sweep, lookBack, reconcile, stale, maxAge, errors.Join(errs...)
}
