package handlers

import (
	"errors"
	"time"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/exunit"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/runs"
)

// flakyJob reproduces and fixes one flaky test; a label, a CI rerun that
// passed, or a CI job that retried its tests asks for it.
var flakyJob = Job{
	Job:       runs.Job{Kind: runs.KindFlaky, Prompt: "flaky", Render: publish.RenderStatus, Evidence: evidence.JobFlaky, RunLog: evidence.RunLogName},
	Config:    flakyConfig,
	Dashboard: true,
	Retry: func(run runs.Run, cfg repoconfig.Config) (any, error) {
		ref, err := exunit.ParseTestRef(run.About)
		if err != nil {
			return nil, err
		}
		return prompts.FlakyInput{Repo: run.Repo, Issue: run.Origin, Test: ref, VerifyRuns: flakyConfig.Of(cfg).VerifyRuns}, nil
	},
}

// DefaultFlakyLabel is the label that asks for a flaky-test fix unless a
// repository configures another.
const DefaultFlakyLabel = "flaky"

// FlakyConfig configures the flaky-test job (section flaky).
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
	// Dashboard keeps the repository's "Flaky tests dashboard" issue up
	// to date; off, the issue is left as it is.
	Dashboard bool `yaml:"dashboard"`
	// Verify is how a fix's pull request is verified: "independent" (a
	// separate session runs the test on its base and head) or "off".
	Verify string `yaml:"verify"`
}

// VerifyIndependent asks for an independent verification of each fix.
const VerifyIndependent = "independent"

var flakyConfig = repoconfig.Section[FlakyConfig]{
	Key: "flaky",
	Defaults: func() FlakyConfig {
		return FlakyConfig{Enabled: true, Label: DefaultFlakyLabel, VerifyRuns: 50, Cooldown: 24 * time.Hour, InJobRetries: true, Verify: VerifyIndependent, Dashboard: true}
	},
	Check: func(f FlakyConfig) error {
		switch {
		case f.Label == "" || len(f.Label) > 50:
			return errors.New("flaky.label must be 1 to 50 characters")
		case f.VerifyRuns < 1 || f.VerifyRuns > 500:
			return errors.New("flaky.verify_runs must be between 1 and 500")
		case f.Cooldown < 0 || f.Cooldown > 30*24*time.Hour:
			return errors.New("flaky.cooldown must be between 0s and 720h")
		case f.Verify != VerifyIndependent && f.Verify != "off":
			return errors.New(`flaky.verify must be "independent" or "off"`)
		}
		return nil
	},
}

func flakyEnabled(c repoconfig.Config) bool { return flakyConfig.Of(c).Enabled }
