package follow

import (
	"context"
	"errors"
	"fmt"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
)

// FollowUpConfig bounds the follow-ups of a run (section followups): the
// reviews and /pitcrew open-pr that send its session another message.
type FollowUpConfig struct {
	MaxPerRun int `yaml:"max_per_run" doc:"a whole number of follow-ups per run, 0 to 20"`
}

var FollowUps = repoconfig.Section[FollowUpConfig]{
	Key:      "followups",
	Defaults: func() FollowUpConfig { return FollowUpConfig{MaxPerRun: 3} },
	Check: func(f FollowUpConfig) error {
		if f.MaxPerRun < 0 || f.MaxPerRun > 20 {
			return errors.New("followups.max_per_run must be between 0 and 20")
		}
		return nil
	},
}

// Send sends the session of run runID of repo the follow-up prompt
// name renders from input, within followups.max_per_run, and shows the run
// again; refusal says why it did not (past the cap, a run that cannot take
// one, a configuration that cannot be used). show is false when the
// caller's next write shows the run anyway.
func Send(ctx context.Context, b *work.Env, gh github.Client, repo github.Repo, runID string, f runs.FollowUp, name string, input any, show bool) (refusal string, err error) {
	run, err := b.Ledger.Get(ctx, runID)
	if err != nil {
		return "", err
	}
	cfg, refusal, err := b.CommandConfig(ctx, gh, repo)
	if refusal != "" || err != nil {
		return refusal, err
	}
	for _, sent := range run.FollowUps {
		if sent.Source == f.Source {
			return "", nil // sent by an attempt that stopped before it was marked done
		}
	}
	max := FollowUps.Of(cfg).MaxPerRun
	switch {
	case run.State.Live():
		return "Nothing was sent: the agent is still working on this run; write again once it has answered.", nil
	case !run.State.HoldsCooldown() || run.SessionID == "":
		return "Nothing was sent: this run failed, so its session cannot take a follow-up; `/pitcrew retry` starts a new run.", nil
	case len(run.FollowUps) >= max:
		return fmt.Sprintf("Nothing was sent: this run had its %d follow-ups (`followups.max_per_run`).", max), nil
	}
	message, err := prompts.Render(name, input)
	if err != nil {
		return "", err
	}
	f.Max = max
	resumed, err := b.Ledger.Resume(ctx, b.Sandbox, run, f, message)
	if errors.Is(err, runs.ErrFollowUpRefused) {
		return "Nothing was sent: " + publish.Text(err.Error(), 300) + ".", nil
	}
	if err != nil || !show {
		return "", err
	}
	return "", b.Publish.Subjects(ctx, gh, resumed, runs.Subject{})
}
