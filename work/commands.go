package work

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/runs"
)

// Once acts on the command from source (runs.CommandLock) unless it was
// acted on before, under its lock, and marks it done.
func (e *Env) Once(ctx context.Context, repo github.Repo, source string, act func() error) error {
	unlock, err := e.Ledger.Lock(ctx, runs.CommandLock(repo.String(), source), 2*time.Minute, 3*time.Minute)
	if err != nil {
		return err
	}
	defer unlock()
	if done, err := e.Ledger.CommandDone(ctx, repo.String(), source); err != nil || done {
		return err
	}
	if err := act(); err != nil {
		return err
	}
	return e.Ledger.MarkCommandDone(ctx, repo.String(), source)
}

// CommandConfig is the repository's configuration for a command; refusal
// is the answer when it cannot be used.
func (e *Env) CommandConfig(ctx context.Context, gh github.Client, repo github.Repo) (cfg repoconfig.Config, refusal string, err error) {
	cfg, err = e.LoadConfig(ctx, gh, repo)
	var cfgErr *repoconfig.Error
	if errors.As(err, &cfgErr) {
		return cfg, fmt.Sprintf("Nothing was started: pitcrew could not use `%s`: %s", cfgErr.Path, publish.Text(cfgErr.Err.Error(), 500)), nil
	}
	return cfg, "", err
}

// Refuse answers someone without write access, once a day per issue and
// person however many commands they write.
func (e *Env) Refuse(ctx context.Context, gh github.Client, repo github.Repo, number int, login, perm string) error {
	first, err := e.Ledger.FirstRefusal(ctx, repo.String(), number, login)
	if err != nil || !first {
		return err
	}
	return Reply(ctx, gh, repo, number, fmt.Sprintf("Only people with write access to this repository can give pitcrew commands; %s has %s access.",
		publish.Code(login, 100), publish.Text(perm, 20)))
}

// Reply answers a command on its issue or pull request.
func Reply(ctx context.Context, gh github.Client, repo github.Repo, number int, text string) error {
	_, err := gh.CreateComment(ctx, repo, number, text)
	return err
}

// MayCommand reports whether a repository permission lets its holder give
// pitcrew commands.
func MayCommand(perm string) bool { return perm == "admin" || perm == "write" }
