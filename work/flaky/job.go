// Package flaky fixes flaky tests: the job, its section of
// .github/pitcrew.yml, the claim of one test's fix that every signal
// shares (a label, a CI rerun that passed, a ticked dashboard box), and the
// report of the flakes a CI run's logs show.
package flaky

import (
	"errors"
	"strings"
	"time"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/exunit"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
)

// Job reproduces and fixes one flaky test; a label, a CI rerun that
// passed, or a CI job that retried its tests asks for it.
var Job = work.Job{
	Job:       runs.Job{Kind: runs.KindFlaky, Prompt: "flaky", Render: publish.RenderStatus, Evidence: evidence.JobFlaky, RunLog: evidence.RunLogName},
	Config:    Section,
	Dashboard: true,
	Retry: func(run runs.Run, cfg repoconfig.Config) (any, error) {
		ref, err := exunit.ParseTestRef(run.About)
		if err != nil {
			return nil, err
		}
		return prompts.FlakyInput{Repo: run.Repo, Issue: run.Origin, Test: ref, VerifyRuns: Of(cfg).VerifyRuns}, nil
	},
}

// DefaultLabel is the label that asks for a flaky-test fix unless a
// repository configures another.
const DefaultLabel = "flaky"

// Config configures the flaky-test job (section flaky).
type Config struct {
	Enabled    bool          `yaml:"enabled"`
	Label      string        `yaml:"label" doc:"a label name, 1 to 50 characters"`
	VerifyRuns int           `yaml:"verify_runs" doc:"a whole number of runs of the fixed test, 1 to 500"` // how often the agent runs the fixed test
	Cooldown   time.Duration `yaml:"cooldown" doc:"a duration such as 90m or 24h, 0s to 720h"`             // how long a finished run answers for its test
	// TrackIssues opens one issue per test seen flaking in CI, labelled
	// with Label, so its history has a home.
	TrackIssues bool `yaml:"track_issues"`
	// InJobRetries looks for jobs that passed after their tests failed
	// (mix test || mix test --failed): one extra call per workflow run.
	InJobRetries bool `yaml:"in_job_retries"`
	// Dashboard keeps the repository's "Flaky tests dashboard" issue up
	// to date; off, the issue is left as it is.
	Dashboard bool `yaml:"dashboard"`
	// Verify is how a fix's pull request is verified: "independent" (a
	// separate session runs the test on its base and head), "ci" (the
	// repository's own CI runs it, with pitcrew's workflow) or "off".
	Verify string `yaml:"verify" doc:"independent, ci or off"`
	// VerifyRunsMax caps the runs of each side of a verification in CI;
	// VerifyDailyLimit is how many a repository gets a day.
	VerifyRunsMax    int `yaml:"verify_runs_max" doc:"a whole number of runs, 1 to 500"`
	VerifyDailyLimit int `yaml:"verify_daily_limit" doc:"a whole number of verifications a day, 1 to 100"`
	// Siblings scans the default branch's tests for those that share a
	// fix's cause, shown on its evidence check run and the dashboard.
	Siblings bool `yaml:"siblings"`
	// RerunKnown re-runs, once, the failed jobs of a workflow run that
	// only known flaky tests failed, at most RerunDailyLimit a day; a test
	// stays known QuarantineDays after its fix run started.
	RerunKnown      bool `yaml:"rerun_known"`
	RerunDailyLimit int  `yaml:"rerun_daily_limit" doc:"a whole number of re-runs a day, 1 to 100"`
	QuarantineDays  int  `yaml:"quarantine_days" doc:"a whole number of days, 1 to 90"`
}

// The ways of verifying a fix (Config.Verify): a separate session, or the
// repository's own CI.
const (
	VerifyIndependent = "independent"
	VerifyCI          = "ci"
)

// Section is the flaky section of .github/pitcrew.yml.
var Section = repoconfig.Section[Config]{
	Key: "flaky",
	Defaults: func() Config {
		return Config{Enabled: true, Label: DefaultLabel, VerifyRuns: 50, Cooldown: 24 * time.Hour, InJobRetries: true, Verify: VerifyIndependent,
			VerifyRunsMax: 100, VerifyDailyLimit: 10, Dashboard: true, Siblings: true, RerunKnown: true, RerunDailyLimit: 10, QuarantineDays: 14}
	},
	Check: func(f Config) error {
		switch {
		case f.Label == "" || len(f.Label) > 50:
			return errors.New("flaky.label must be 1 to 50 characters")
		case f.VerifyRuns < 1 || f.VerifyRuns > 500:
			return errors.New("flaky.verify_runs must be between 1 and 500")
		case f.Cooldown < 0 || f.Cooldown > 30*24*time.Hour:
			return errors.New("flaky.cooldown must be between 0s and 720h")
		case f.Verify != VerifyIndependent && f.Verify != VerifyCI && f.Verify != "off":
			return errors.New(`flaky.verify must be "independent", "ci" or "off"`)
		case f.VerifyRunsMax < 1 || f.VerifyRunsMax > 500:
			return errors.New("flaky.verify_runs_max must be between 1 and 500")
		case f.VerifyDailyLimit < 1 || f.VerifyDailyLimit > 100:
			return errors.New("flaky.verify_daily_limit must be between 1 and 100")
		case f.RerunDailyLimit < 1 || f.RerunDailyLimit > 100:
			return errors.New("flaky.rerun_daily_limit must be between 1 and 100")
		case f.QuarantineDays < 1 || f.QuarantineDays > 90:
			return errors.New("flaky.quarantine_days must be between 1 and 90")
		}
		return nil
	},
}

// Of is c's flaky section.
func Of(c repoconfig.Config) Config { return Section.Of(c) }

// Enabled reports whether the repository fixes flaky tests.
func Enabled(c repoconfig.Config) bool { return Of(c).Enabled }

// Key is the idempotency key of a flaky test: the repository (GitHub
// names are case-insensitive) and the test's file:line.
func Key(repo string, ref exunit.TestRef) string { return keyOf(repo, ref.String()) }

func keyOf(repo, test string) string { return "flaky:" + strings.ToLower(repo) + ":" + test }
