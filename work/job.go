package work

import (
	"context"
	"fmt"
	"strings"

	"github.com/pitcrew/pitcrew/hook"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/runs"
)

// Job is one kind of work as the wiring registers it: what shared code
// needs to start it and show it (runs.Job), its section of
// .github/pitcrew.yml, and, for work an outside service asks for, that
// service's hook.
type Job struct {
	runs.Job
	Config repoconfig.Part
	Source *Source // nil for jobs GitHub events start
	// Ended shows a run of the job that ended, for a job whose runs are
	// shown where another run is (nil: on the run's own subjects).
	Ended func(ctx context.Context, e *Env, gh github.Client, run runs.Run) error
	// Shown, after a run of the job that ended is shown on its subjects,
	// shows what else the job writes of it (nil: nothing).
	Shown func(ctx context.Context, e *Env, gh github.Client, run runs.Run) error
	// Dashboard shows the job's runs on the repository's flaky-tests
	// dashboard, beside the sightings of their tests.
	Dashboard bool
	// Retry rebuilds the prompt input of an ended run, for /pitcrew retry
	// (nil: the job's runs are not started again by hand).
	Retry func(run runs.Run, cfg repoconfig.Config) (input any, err error)
}

// Registry is every job pitcrew runs and the configuration schema their
// sections make. Shared code finds a job here, never through a switch on
// its kind.
type Registry struct {
	list   []Job
	shared runs.Jobs
	schema repoconfig.Schema
}

// NewRegistry registers list; the first job also shows subjects whose
// status names no job, or one this version does not know. shared are the
// sections of .github/pitcrew.yml that belong to no one job.
func NewRegistry(shared []repoconfig.Part, list ...Job) (*Registry, error) {
	var jobs []runs.Job
	parts := append([]repoconfig.Part{}, shared...)
	for _, j := range list {
		if !prompts.Has(j.Prompt) {
			return nil, fmt.Errorf("job %s names no prompt template %s", j.Kind, j.Prompt)
		}
		jobs = append(jobs, j.Job)
		if j.Config != nil {
			parts = append(parts, j.Config)
		}
	}
	reg, err := runs.NewJobs(jobs...)
	if err != nil {
		return nil, err
	}
	schema, err := repoconfig.NewSchema(parts...)
	if err != nil {
		return nil, err
	}
	return &Registry{list: list, shared: reg, schema: schema}, nil
}

// Of is the job of a kind, the first job for one nobody registered.
func (r *Registry) Of(k runs.Kind) runs.Job {
	if j, ok := r.shared.Of(k); ok {
		return j
	}
	return r.list[0].Job
}

// Job is the registered job of kind k.
func (r *Registry) Job(k runs.Kind) (Job, bool) {
	for _, j := range r.list {
		if j.Kind == k {
			return j, true
		}
	}
	return Job{}, false
}

// Schema is .github/pitcrew.yml: the shared keys and each job's section.
func (r *Registry) Schema() repoconfig.Schema { return r.schema }

// SourceTitle names the outside service whose alerts start runs of kind k
// ("Datadog"); "" for a job GitHub events start.
func (r *Registry) SourceTitle(k runs.Kind) string {
	if j, ok := r.Job(k); ok && j.Source != nil {
		return j.Source.Title
	}
	return ""
}

// Sources are the outside services with a hook of their own.
func (r *Registry) Sources() []*Source {
	var out []*Source
	for _, j := range r.list {
		if j.Source != nil {
			out = append(out, j.Source)
		}
	}
	return out
}

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
	Handle   func(ctx context.Context, e *Env, s SourceSettings, body []byte) error
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
