// Package work is what the jobs share between a handler's decision and the
// ledger: the environment every step runs in (Env), a job as the wiring
// registers it (Job, Registry), the repository's configuration, and the
// plumbing of /pitcrew commands. Its subpackages are the steps several
// handlers take: flaky (fixing a flaky test), follow (following the pull
// request a run opened, verifying it, follow-ups), incidents (an alert's
// issue and run), dashboard (the flaky-tests dashboard) and profiling (the
// slow-query report of migrations).
package work

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/palantir/go-githubapp/appconfig"
	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/metrics"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
)

// Sandbox is what the jobs need from the sandbox service: starting
// sessions, reading them and their artifacts, sending them follow-ups.
type Sandbox interface {
	runs.Sandbox
	runs.SessionReader
	runs.Messenger
}

// Env holds what every handler and step shares.
type Env struct {
	Clients github.Clients
	Ledger  *runs.Ledger
	Sandbox Sandbox
	Metrics *metrics.Metrics
	// Jobs is every registered job and the configuration schema they make.
	Jobs *Registry
	// Runs claims runs and starts their sessions, Finish records what a
	// session reports, Publish writes what subjects show on GitHub (all
	// three made by NewEnv).
	Runs    *runs.Starter
	Finish  *runs.Finisher
	Publish *publish.Writer
	// Dashboards schedules refreshes of the flaky-tests dashboards (nil:
	// none are kept).
	Dashboards DashboardScheduler
	// Deadlines schedules the checks that a verification's workflow runs
	// started and finished (nil: none is scheduled); CIStartWithin is how
	// long they have to start (default 10 minutes), CIRunWithin how long
	// after that to finish (default 70: the workflow's own timeout is 60).
	Deadlines                  CIDeadlineScheduler
	CIStartWithin, CIRunWithin time.Duration
	// AppSlug is the app's own name on GitHub; its bot user is "<slug>[bot]".
	AppSlug string
	Now     func() time.Time

	// MaxRunAge is when a session that never ends is reported failed
	// (default 24 hours).
	MaxRunAge time.Duration
}

// NewEnv is e with Runs, Finish and Publish made to find each job in
// e.Jobs; the other fields are the caller's.
func NewEnv(e Env) Env {
	e.Runs = &runs.Starter{Ledger: e.Ledger, Sandbox: e.Sandbox, Jobs: e.Jobs.Of, Metrics: e.Metrics, SafeURL: publish.SafeURL, Now: e.Now}
	e.Finish = &runs.Finisher{Ledger: e.Ledger, Sandbox: e.Sandbox, Jobs: e.Jobs.Of, Metrics: e.Metrics, Text: publish.Text, SafeURL: publish.SafeURL}
	e.Publish = &publish.Writer{Ledger: e.Ledger, Now: e.Now, Renderer: func(job string) runs.Renderer { return e.Jobs.Of(runs.Kind(job)).Render }}
	e.Publish.Shown = e.runShown
	return e
}

// CIDeadlineScheduler asks for a TaskCIDeadline at a time.
type CIDeadlineScheduler interface {
	ScheduleCIDeadline(ctx context.Context, d queue.CIDeadline, at time.Time) error
}

// CIStart is how long a verification's workflow runs have to start.
func (e *Env) CIStart() time.Duration {
	if e.CIStartWithin > 0 {
		return e.CIStartWithin
	}
	return 10 * time.Minute
}

// CIRun is how long a verification's workflow runs have to finish once
// they should have started.
func (e *Env) CIRun() time.Duration {
	if e.CIRunWithin > 0 {
		return e.CIRunWithin
	}
	return 70 * time.Minute
}

// BotLogin is the app's bot user, who authors its issues and comments; ""
// when the slug is unknown.
func (e *Env) BotLogin() string {
	if e.AppSlug == "" {
		return ""
	}
	return e.AppSlug + "[bot]"
}

// Time is the time now, by Now when set.
func (e *Env) Time() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// configTTL is how long a repository's configuration is reused before it
// is read from GitHub again; a push that changes the file drops it sooner.
const configTTL = 5 * time.Minute

// ConfigCacheName is the name of repo's configuration in the shared cache
// (runs.Ledger.Cached).
func ConfigCacheName(repo github.Repo) string { return "config:" + strings.ToLower(repo.String()) }

// LoadConfig reads and strictly parses a repository's configuration,
// through a cache shared by the replicas (the file costs one to three API
// calls to find). A file that exists but cannot be used is a *repoconfig.Error.
func (e *Env) LoadConfig(ctx context.Context, gh github.Client, repo github.Repo) (repoconfig.Config, error) {
	var raw appconfig.Config
	cached, hit, err := e.Ledger.Cached(ctx, ConfigCacheName(repo))
	if err != nil {
		return repoconfig.Config{}, err
	}
	if !hit || json.Unmarshal(cached, &raw) != nil {
		if raw, err = gh.LoadConfig(ctx, repo); err != nil {
			return repoconfig.Config{}, fmt.Errorf("loading %s of %s: %w", repoconfig.Path, repo, err)
		}
		// The loader leaves the ref of the repository's own file empty
		// ("owner/name@"); a problem is reported with the ref it was read
		// at, and only a file with one costs the extra call.
		if strings.HasSuffix(raw.Source, "@") && len(raw.Content) > 0 {
			if _, bad := e.Jobs.Schema().Parse(raw.Content); bad != nil {
				raw.Source = namedRef(ctx, gh, repo, raw.Source)
			}
		}
		if enc, err := json.Marshal(raw); err == nil {
			_ = e.Ledger.Cache(ctx, ConfigCacheName(repo), enc, configTTL)
		}
	}
	cfg, err := e.Jobs.Schema().Parse(raw.Content)
	if err != nil {
		return repoconfig.Config{}, &repoconfig.Error{Source: raw.Source, Path: raw.Path, Err: err}
	}
	return cfg, nil
}

// namedRef is source ("owner/name@") with repo's default branch after the @.
func namedRef(ctx context.Context, gh github.Client, repo github.Repo, source string) string {
	branch, err := gh.DefaultBranch(ctx, repo)
	if err != nil || branch == "" {
		zerolog.Ctx(ctx).Warn().Err(err).Msg("could not read the default branch the configuration was read at")
		return strings.TrimSuffix(source, "@") + " (default branch)"
	}
	return source + branch
}

// JobConfig loads the repository configuration for a signal that has no
// issue to report a broken file on: it is logged and the signal dropped.
// proceed is false as well when enabled says the job is off.
func (e *Env) JobConfig(ctx context.Context, gh github.Client, repo github.Repo, enabled func(repoconfig.Config) bool) (cfg repoconfig.Config, proceed bool, err error) {
	cfg, err = e.LoadConfig(ctx, gh, repo)
	var cfgErr *repoconfig.Error
	if errors.As(err, &cfgErr) {
		zerolog.Ctx(ctx).Warn().Err(err).Msg("ignoring the event: the repository configuration is invalid")
		return cfg, false, nil
	}
	if err != nil {
		return cfg, false, err
	}
	if !enabled(cfg) {
		zerolog.Ctx(ctx).Debug().Msg("ignoring the event: the job is off in .github/pitcrew.yml (its enabled key)")
		return cfg, false, nil
	}
	return cfg, true, nil
}

// ReserveIssue takes one of the repository's issues for today
// (daily_issue_limit). The first refusal of the day is reported here, once.
func (e *Env) ReserveIssue(ctx context.Context, repo github.Repo, cfg repoconfig.Config) (bool, error) {
	res, err := e.Ledger.ReserveIssue(ctx, repo.String(), cfg.DailyIssueLimit)
	if err != nil {
		return false, err
	}
	if res == runs.IssueFirstRefusal {
		e.Metrics.IssueCapReached.Inc()
		zerolog.Ctx(ctx).Warn().Int("daily_issue_limit", cfg.DailyIssueLimit).
			Msg("the daily cap on issues pitcrew opens in this repository is reached: no new issue until tomorrow (UTC)")
	}
	return res == runs.IssueReserved, nil
}
