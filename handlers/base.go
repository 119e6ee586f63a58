// Package handlers decides what each GitHub event and outside alert
// means: one file per event or source, plus the job list (jobs.go). A
// handler parses, decides and makes one call (Runs.Start, Publish.Status);
// the wiring that carries deliveries to it is internal/server.
package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/palantir/go-githubapp/appconfig"
	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/metrics"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/runs"
)

// Sandbox is what the handlers need from the sandbox service: starting
// sessions, reading them and their artifacts, sending them follow-ups.
type Sandbox interface {
	runs.Sandbox
	runs.SessionReader
	runs.Messenger
}

// Base holds what every handler shares.
type Base struct {
	Clients github.Clients
	Ledger  *runs.Ledger
	Sandbox Sandbox
	Metrics *metrics.Metrics
	// Runs claims runs and starts their sessions, Finish records what a
	// session reports, Publish writes what subjects show on GitHub (all
	// three made by NewBase).
	Runs    *runs.Starter
	Finish  *runs.Finisher
	Publish *publish.Writer
	// Dashboards schedules refreshes of the flaky-tests dashboards (nil:
	// none are kept).
	Dashboards DashboardScheduler
	// AppSlug is the app's own name on GitHub; its bot user is "<slug>[bot]".
	AppSlug string
	Now     func() time.Time

	// MaxRunAge is when a session that never ends is reported failed
	// (default 24 hours).
	MaxRunAge time.Duration
}

// NewBase is a Base whose Runs, Finish and Publish find each job in the
// registry; the other fields are the caller's.
func NewBase(b Base) Base {
	b.Runs = &runs.Starter{Ledger: b.Ledger, Sandbox: b.Sandbox, Jobs: jobOf, Metrics: b.Metrics, SafeURL: publish.SafeURL, Now: b.Now}
	b.Finish = &runs.Finisher{Ledger: b.Ledger, Sandbox: b.Sandbox, Jobs: jobOf, Follows: followedPull, Metrics: b.Metrics, Text: publish.Text, SafeURL: publish.SafeURL}
	b.Publish = &publish.Writer{Ledger: b.Ledger, Now: b.Now, Renderer: func(job string) runs.Renderer { return jobOf(runs.Kind(job)).Render }}
	b.Publish.Shown = b.runShown
	return b
}

// botLogin is the app's bot user, who authors its issues and comments; ""
// when the slug is unknown.
func (b *Base) botLogin() string {
	if b.AppSlug == "" {
		return ""
	}
	return b.AppSlug + "[bot]"
}

func (b *Base) maxRunAge() time.Duration {
	if b.MaxRunAge > 0 {
		return b.MaxRunAge
	}
	return 24 * time.Hour
}

func (b *Base) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// configTTL is how long a repository's configuration is reused before it
// is read from GitHub again; a push that changes the file drops it sooner.
const configTTL = 5 * time.Minute

func configCacheName(repo github.Repo) string { return "config:" + strings.ToLower(repo.String()) }

// CachedReads names what the handlers of a delivery read from the shared
// cache (runs.Ledger.Cached) before anything else: the configuration of
// the repository the body names, if it names one. The worker reads them
// with its own checks of the delivery, in one round trip.
func CachedReads(body []byte) []string {
	var ev struct {
		Repository struct {
			FullName string `json:"full_name"`
		} `json:"repository"`
	}
	if json.Unmarshal(body, &ev) != nil {
		return nil
	}
	repo, err := github.ParseRepo(ev.Repository.FullName)
	if err != nil {
		return nil
	}
	return []string{configCacheName(repo)}
}

// loadRepoConfig reads and strictly parses a repository's configuration,
// through a cache shared by the replicas (the file costs one to three API
// calls to find). A file that exists but cannot be used is a *repoconfig.Error.
func (b *Base) loadRepoConfig(ctx context.Context, gh github.Client, repo github.Repo) (repoconfig.Config, error) {
	var raw appconfig.Config
	cached, hit, err := b.Ledger.Cached(ctx, configCacheName(repo))
	if err != nil {
		return repoconfig.Config{}, err
	}
	if !hit || json.Unmarshal(cached, &raw) != nil {
		if raw, err = gh.LoadConfig(ctx, repo); err != nil {
			return repoconfig.Config{}, fmt.Errorf("loading %s of %s: %w", repoconfig.Path, repo, err)
		}
		if enc, err := json.Marshal(raw); err == nil {
			_ = b.Ledger.Cache(ctx, configCacheName(repo), enc, configTTL)
		}
	}
	cfg, err := configSchema.Parse(raw.Content)
	if err != nil {
		return repoconfig.Config{}, &repoconfig.Error{Source: raw.Source, Path: raw.Path, Err: err}
	}
	return cfg, nil
}

func logFor(ctx context.Context) *zerolog.Logger { return zerolog.Ctx(ctx) }

// reserveIssue takes one of the repository's issues for today
// (daily_issue_limit). The first refusal of the day is reported here, once.
func (b *Base) reserveIssue(ctx context.Context, repo github.Repo, cfg repoconfig.Config) (bool, error) {
	res, err := b.Ledger.ReserveIssue(ctx, repo.String(), cfg.DailyIssueLimit)
	if err != nil {
		return false, err
	}
	if res == runs.IssueFirstRefusal {
		b.Metrics.IssueCapReached.Inc()
		logFor(ctx).Warn().Int("daily_issue_limit", cfg.DailyIssueLimit).
			Msg("the daily cap on issues pitcrew opens in this repository is reached: no new issue until tomorrow (UTC)")
	}
	return res == runs.IssueReserved, nil
}
