package handlers

import (
	"context"
	"fmt"
	"strings"

	"github.com/pitcrew/pitcrew/hook"
	"github.com/pitcrew/pitcrew/internal/github"
)

// Source is an outside service that asks for work: its hook (route,
// proof, shape check; see hook.Source), the variables it is configured
// with, and Handle, which works on each stored request from the queue. A
// source is data: the hook, the task and reading the environment are the
// same code for all of them.
type Source struct {
	hook.Source
	// SecretEnv names the variable holding the secret that verifies its
	// requests; unset, the hook refuses every request.
	SecretEnv string
	// ReposEnv names the variable mapping the source's own names (a
	// service, a project) to repositories: "name=owner/repo,...".
	ReposEnv string
	Handle   func(ctx context.Context, b *Base, s SourceSettings, body []byte) error
}

// SourceSettings is a source's configuration from the environment.
type SourceSettings struct {
	Secret string
	Repos  map[string]string // the source's names to owner/name
}

// EnvKeys are the variables the source reads.
func (s *Source) EnvKeys() []string { return []string{s.SecretEnv, s.ReposEnv} }

// Settings reads the source's variables from env.
func (s *Source) Settings(env map[string]string) (SourceSettings, error) {
	set := SourceSettings{Secret: env[s.SecretEnv], Repos: map[string]string{}}
	for _, pair := range strings.Split(env[s.ReposEnv], ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		name, repo, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if _, err := github.ParseRepo(repo); !ok || name == "" || err != nil {
			return SourceSettings{}, fmt.Errorf("%s: %q is not name=owner/repo", s.ReposEnv, pair)
		}
		set.Repos[name] = repo
	}
	return set, nil
}
