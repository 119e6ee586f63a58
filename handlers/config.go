package handlers

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// DefaultFlakyLabel is the label that asks for a flaky-test fix unless a
// repository configures another.
const DefaultFlakyLabel = "flaky"

// RepoConfig is a repository's .github/pitcrew.yml. Every key has a
// default, so a repository without the file works.
type RepoConfig struct {
	// DailyLimit is how many runs pitcrew may start in the repository per
	// day (UTC), all jobs together.
	DailyLimit int `yaml:"daily_limit"`
	// DailyIssueLimit is how many issues pitcrew may open in the repository
	// per day (UTC): tracking issues of alerts and of flaky tests.
	DailyIssueLimit int             `yaml:"daily_issue_limit"`
	Flaky           FlakyConfig     `yaml:"flaky"`
	Migrations      MigrationConfig `yaml:"migrations"`
	Alerts          AlertConfig     `yaml:"alerts"`
}

// AlertConfig configures fixes for Datadog alerts.
type AlertConfig struct {
	Enabled bool   `yaml:"enabled"`
	Label   string `yaml:"label"` // on the tracking issue
	// StartOn lists the transitions that may start a run.
	StartOn []string `yaml:"start_on"`
	// SkipTags mark alerts a code change will not fix (infrastructure).
	SkipTags []string `yaml:"skip_tags"`
}

// MigrationConfig configures the slow-query report after merged migrations.
type MigrationConfig struct {
	Enabled bool `yaml:"enabled"`
	// Paths are the migration directories, as path.Match patterns ending in
	// "migrations/" ("*" matches one directory name).
	Paths []string `yaml:"paths"`
}

// FlakyConfig configures the flaky-test job.
type FlakyConfig struct {
	Enabled    bool          `yaml:"enabled"`
	Label      string        `yaml:"label"`
	VerifyRuns int           `yaml:"verify_runs"` // how often the agent runs the fixed test
	Cooldown   time.Duration `yaml:"cooldown"`    // how long a finished run answers for its test
	// TrackIssues opens one issue per test seen flaking in CI, labelled
	// with Label, so its history has a home.
	TrackIssues bool `yaml:"track_issues"`
	// InJobRetries looks for jobs that passed after their tests failed
	// (mix test || mix test --failed): one extra call per workflow run.
	InJobRetries bool `yaml:"in_job_retries"`
}

// DefaultRepoConfig is what applies where the file says nothing.
func DefaultRepoConfig() RepoConfig {
	return RepoConfig{
		DailyLimit:      5,
		DailyIssueLimit: 10,
		Flaky:           FlakyConfig{Enabled: true, Label: DefaultFlakyLabel, VerifyRuns: 50, Cooldown: 24 * time.Hour, InJobRetries: true},
		Migrations:      MigrationConfig{Enabled: true, Paths: []string{"priv/repo/migrations/", "apps/*/priv/repo/migrations/"}},
		Alerts: AlertConfig{Enabled: true, Label: "pitcrew:alert", StartOn: []string{"Triggered", "Re-Triggered", "Renotify"},
			SkipTags: []string{"pitcrew:skip", "team:infra"}},
	}
}

// ConfigError is a configuration file that could not be used. It is shown
// to users, so it names the file and the problem.
type ConfigError struct {
	Source string // owner/repo@ref
	Path   string
	Err    error
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("%s in %s: %v", e.Path, e.Source, e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// ParseRepoConfig reads a configuration file strictly: unknown keys, wrong
// types and out-of-range values are errors, never silently defaulted.
func ParseRepoConfig(content []byte) (RepoConfig, error) {
	cfg := DefaultRepoConfig()
	if len(bytes.TrimSpace(content)) == 0 {
		return cfg, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(content))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return RepoConfig{}, err
	}
	f := cfg.Flaky
	switch {
	case cfg.DailyLimit < 0 || cfg.DailyLimit > 1000:
		return RepoConfig{}, errors.New("daily_limit must be between 0 and 1000")
	case cfg.DailyIssueLimit < 0 || cfg.DailyIssueLimit > 1000:
		return RepoConfig{}, errors.New("daily_issue_limit must be between 0 and 1000")
	case f.Label == "" || len(f.Label) > 50:
		return RepoConfig{}, errors.New("flaky.label must be 1 to 50 characters")
	case f.VerifyRuns < 1 || f.VerifyRuns > 500:
		return RepoConfig{}, errors.New("flaky.verify_runs must be between 1 and 500")
	case f.Cooldown < 0 || f.Cooldown > 30*24*time.Hour:
		return RepoConfig{}, errors.New("flaky.cooldown must be between 0s and 720h")
	case cfg.Alerts.Label == "" || len(cfg.Alerts.Label) > 50:
		return RepoConfig{}, errors.New("alerts.label must be 1 to 50 characters")
	case len(cfg.Migrations.Paths) == 0 || len(cfg.Migrations.Paths) > 20:
		return RepoConfig{}, errors.New("migrations.paths must list 1 to 20 directories")
	}
	for _, t := range cfg.Alerts.StartOn {
		switch t {
		case "Triggered", "Re-Triggered", "Renotify", "No Data", "Re-No Data", "Warn", "Re-Warn":
		default:
			return RepoConfig{}, fmt.Errorf("alerts.start_on: %q is not a transition that can start a run", t)
		}
	}
	for _, p := range cfg.Migrations.Paths {
		if _, err := path.Match(p, ""); err != nil || !strings.HasSuffix(p, "migrations/") || strings.HasPrefix(p, "/") {
			return RepoConfig{}, fmt.Errorf("migrations.paths: %q must be a relative directory pattern ending in migrations/", p)
		}
	}
	return cfg, nil
}
