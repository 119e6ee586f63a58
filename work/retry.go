package work

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
)

// maxRetried bounds the runs one /pitcrew retry starts.
const maxRetried = 10

// errNoRetry is a job's answer for a run it cannot start again.
var errNoRetry = errors.New("this run cannot be started again")

// Retry starts again each run the subject shows that is not live, within
// the daily limit, with its job's prompt rebuilt from the run (Job.Retry),
// and shows the new runs in the subject's status. It answers only when it
// starts nothing.
func (b *Env) Retry(ctx context.Context, gh github.Client, subject runs.Subject, inst int64, delivery string) (string, error) {
	st, err := b.Ledger.Status(ctx, subject)
	if err != nil {
		return "", err
	}
	if len(st.Entries) == 0 {
		return "pitcrew has no run here to retry: `/pitcrew retry` starts again a run this issue or pull request shows.", nil
	}
	repo, err := github.ParseRepo(subject.Repo)
	if err != nil {
		return "", queue.Permanent(err)
	}
	cfg, refusal, err := b.CommandConfig(ctx, gh, repo)
	if refusal != "" || err != nil {
		return refusal, err
	}
	again := map[string]runs.Entry{} // by the run each replaces
	var live, refused []string
	var started []runs.Run
	for i, e := range st.Entries {
		if e.RunID == "" || i >= maxRetried {
			continue
		}
		run, err := b.Ledger.Get(ctx, e.RunID)
		if errors.Is(err, runs.ErrNotFound) {
			continue
		}
		if err != nil {
			return "", err
		}
		if run.State.Live() {
			live = append(live, publish.Code(e.About, 200))
			continue
		}
		next, fresh, err := b.startAgain(ctx, run, subject, inst, cfg, delivery)
		if errors.Is(err, errNoRetry) {
			refused = append(refused, publish.Code(e.About, 200))
			continue
		}
		if err != nil {
			return "", err
		}
		next.About = e.About
		again[e.RunID] = next
		if fresh != nil {
			started = append(started, *fresh)
		}
	}
	if len(again) == 0 {
		return nothingRetried(live, refused), nil
	}
	ids := []string{}
	for _, e := range again {
		if e.RunID != "" {
			ids = append(ids, e.RunID)
		}
	}
	// Only the entries retried change: another signal may have added one
	// since the status was read.
	if err := b.Publish.Status(ctx, gh, subject, func(s *runs.Status) {
		for i, e := range s.Entries {
			if next, ok := again[e.RunID]; ok {
				s.Entries[i] = next
			}
		}
		s.Notice = ""
	}, ids...); err != nil {
		return "", err
	}
	for _, run := range started {
		if err := b.Publish.Subjects(ctx, gh, run, subject); err != nil {
			return "", err
		}
	}
	if len(refused) > 0 {
		return "Not started again: " + strings.Join(refused, ", ") + " (its run keeps nothing pitcrew can start a new one from; the next signal will).", nil
	}
	return "", nil
}

// nothingRetried says why a retry started nothing.
func nothingRetried(live, refused []string) string {
	switch {
	case len(live) > 0:
		return "Nothing was started: pitcrew's run is still going on " + strings.Join(live, ", ") + "."
	case len(refused) > 0:
		return "Nothing was started: " + strings.Join(refused, ", ") + " keeps nothing pitcrew can start a new run from; the next signal will."
	}
	return "Nothing was started: the runs this shows are too old for pitcrew to start again; the next signal will start a new one."
}

// startAgain claims a new run of run's key, without the cooldown (a
// person asked), for the installation the command came from (the app may
// have been installed again since), and starts it with its job's prompt.
func (b *Env) startAgain(ctx context.Context, run runs.Run, subject runs.Subject, inst int64, cfg repoconfig.Config, delivery string) (runs.Entry, *runs.Run, error) {
	j, ok := b.Jobs.Job(run.Kind)
	if !ok || j.Retry == nil {
		return runs.Entry{}, nil, errNoRetry
	}
	input, err := j.Retry(run, cfg)
	if err != nil {
		return runs.Entry{}, nil, fmt.Errorf("%w: %v", errNoRetry, err)
	}
	return b.Runs.Start(ctx, runs.Request{
		Run: runs.Run{Key: run.Key, Kind: run.Kind, InstallationID: inst, Repo: run.Repo, Origin: run.Origin,
			About: run.About, Title: run.Title, Data: run.Data, Delivery: delivery},
		Subject: subject, Cooldown: 0, DailyLimit: cfg.DailyLimit, Input: input, LastAttempt: queue.LastAttempt(ctx),
	})
}
