package work

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
		return cfg, "Nothing was started: " + ConfigTrouble(cfgErr), nil
	}
	return cfg, "", err
}

// maxProblems bounds the problems of a configuration a comment lists.
const maxProblems = 10

// ConfigTrouble says, as Markdown, why a configuration file could not be
// used: the file, the repository and ref it was read at, then each
// problem in the words of `pitcrew check-config`, one per line.
func ConfigTrouble(e *repoconfig.Error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "pitcrew could not use %s as read from %s:\n", publish.Code(e.Path, 200), publish.Code(e.Source, 300))
	var problems repoconfig.Problems
	if !errors.As(e.Err, &problems) {
		problems = repoconfig.Problems{{Msg: e.Err.Error()}}
	}
	for i, p := range problems {
		if i == maxProblems {
			fmt.Fprintf(&b, "\n- and %d more", len(problems)-maxProblems)
			break
		}
		b.WriteString("\n- " + publish.Text(p.String(), 300))
	}
	b.WriteString("\n\n`pitcrew check-config` finds the same problems in a checkout, before a push.")
	return b.String()
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
