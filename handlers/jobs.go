package handlers

import (
	"context"
	"encoding/json"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/runs"
)

// jobs is every job pitcrew runs. Each is declared beside its handler;
// adding one is a line here.
var jobs = []Job{flakyJob, verifyJob, migrationJob, datadogJob, sentryJob}

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
	Ended func(b *Base, ctx context.Context, gh github.Client, run runs.Run) error
	// Dashboard shows the job's runs on the repository's flaky-tests
	// dashboard, beside the sightings of their tests.
	Dashboard bool
	// Retry rebuilds the prompt input of an ended run, for /pitcrew retry
	// (nil: the job's runs are not started again by hand).
	Retry func(run runs.Run, cfg repoconfig.Config) (input any, err error)
}

var (
	registry     runs.Jobs
	configSchema repoconfig.Schema // .github/pitcrew.yml: the shared keys and each job's section
	// defaultJob shows subjects whose status names no job (flaky, before
	// statuses named theirs) or one this version does not know.
	defaultJob = flakyJob.Job
)

// init builds the registry (not a variable initializer, because the jobs'
// handlers read the schema it builds).
func init() { registry, configSchema = mustRegister(jobs) }

func mustRegister(list []Job) (runs.Jobs, repoconfig.Schema) {
	var shared []runs.Job
	parts := []repoconfig.Part{followUpConfig} // every job's runs take follow-ups
	for _, j := range list {
		if !prompts.Has(j.Prompt) {
			panic("handlers: job " + string(j.Kind) + " names no prompt template " + j.Prompt)
		}
		shared = append(shared, j.Job)
		if j.Config != nil {
			parts = append(parts, j.Config)
		}
	}
	reg, err := runs.NewJobs(shared...)
	if err != nil {
		panic(err)
	}
	schema, err := repoconfig.NewSchema(parts...)
	if err != nil {
		panic(err)
	}
	return reg, schema
}

// endedOf is what shows an ended run of kind k; nil for its subjects.
func endedOf(k runs.Kind) func(*Base, context.Context, github.Client, runs.Run) error {
	j, _ := jobByKind(k)
	return j.Ended
}

// jobByKind is the registered job of kind k.
func jobByKind(k runs.Kind) (Job, bool) {
	for _, j := range jobs {
		if j.Kind == k {
			return j, true
		}
	}
	return Job{}, false
}

// jobOf is the job of a kind, the default job for one nobody registered.
func jobOf(k runs.Kind) runs.Job {
	if j, ok := registry.Of(k); ok {
		return j
	}
	return defaultJob
}

// Sources are the outside services with a hook of their own.
func Sources() []*Source {
	var out []*Source
	for _, j := range jobs {
		if j.Source != nil {
			out = append(out, j.Source)
		}
	}
	return out
}

// SourceEnvKeys are the variables of every outside source, for the
// wiring to read into Options.SourceEnv.
func SourceEnvKeys() []string {
	var keys []string
	for _, s := range Sources() {
		keys = append(keys, s.EnvKeys()...)
	}
	return keys
}

// SourceSecretEnvKeys are the variables holding the sources' secrets;
// the wiring warns about each one unset.
func SourceSecretEnvKeys() map[string]string {
	out := map[string]string{}
	for _, s := range Sources() {
		out[s.SecretEnv] = "/api/" + s.Name + "/hook"
	}
	return out
}

// EventHandler handles the GitHub events it names (go-githubapp's
// EventHandler, declared here so handlers need not import it).
type EventHandler interface {
	Handles() []string
	Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error
}

// EventHandlers are the handlers of GitHub events, one per file.
func EventHandlers(base Base) []EventHandler {
	return []EventHandler{&IssueLabeled{base}, &DashboardTick{base}, &WorkflowRun{base}, &CheckRun{base}, &PullRequest{base}, &CheckSuite{base}, &PullRequestReview{base}, &IssueComment{base},
		&Push{base}, &Installation{base}, &InstallationRepositories{base}}
}

// Ignored reports, from a verified delivery's body, one every handler of
// its event would ignore, so that the intake answers it without storing
// it: an issue_comment that is no command of someone the repository knows
// (pitcrew's own comments and each edit of them, people talking,
// strangers), an issues event that adds no label and edits no dashboard. A
// body that does not decode is left to the handlers, which say why.
func Ignored(event string, body []byte) bool {
	switch event {
	case "issue_comment":
		_, _, act, err := commentCommand(body)
		return err == nil && !act
	case "issues":
		var ev struct {
			Action string `json:"action"`
		}
		if json.Unmarshal(body, &ev) != nil {
			return false
		}
		switch ev.Action {
		case "labeled":
			return false
		case "edited":
			_, ok, err := ParseDashboardEdit(body)
			return err == nil && !ok
		}
		return true
	}
	return false
}
