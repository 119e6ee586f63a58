// Package handlers decides what each GitHub event and outside alert
// means: one file per event or source, plus the job list (this file). A
// handler parses, decides and makes one call (Runs.Start, Publish.Status,
// or a step of work/...); the wiring that carries deliveries to it is
// app.
package handlers

import (
	"context"
	"encoding/json"

	"github.com/pitcrew/pitcrew/hook"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/flaky"
	"github.com/pitcrew/pitcrew/work/follow"
	"github.com/pitcrew/pitcrew/work/profiling"
)

// jobs is every job pitcrew runs; the first also shows subjects whose
// status names no job. Adding one is a line here.
var jobs = mustRegister(flaky.Job, follow.VerifyJob, profiling.Job, datadogJob, sentryJob)

func mustRegister(list ...work.Job) *work.Registry {
	// every job's runs take follow-ups
	reg, err := work.NewRegistry([]repoconfig.Part{follow.FollowUps}, list...)
	if err != nil {
		panic("handlers: " + err.Error())
	}
	return reg
}

// NewEnv is b with the registered jobs, and its Runs, Finish and Publish
// made to find each job there; the other fields are the caller's.
func NewEnv(b work.Env) work.Env {
	b.Jobs = jobs
	b = work.NewEnv(b)
	b.Finish.Follows = func(run runs.Run) int { return follow.Next(jobs, run) }
	return b
}

// SourceTitle names the outside service whose alerts start runs of kind k,
// "" for a job GitHub events start.
func SourceTitle(k runs.Kind) string { return jobs.SourceTitle(k) }

// ConfigSchema is .github/pitcrew.yml as the registered jobs make it.
func ConfigSchema() repoconfig.Schema { return jobs.Schema() }

// Sources are the outside services with a hook of their own.
func Sources() []*work.Source { return jobs.Sources() }

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
func EventHandlers(base work.Env) []EventHandler {
	return []EventHandler{&IssueLabeled{base}, &DashboardTick{base}, &WorkflowRun{base}, &VerifyRun{base}, &KnownFlakes{base}, &CheckRun{base}, &PullRequest{base}, &CheckSuite{base}, &PullRequestReview{base}, &IssueComment{base},
		&Push{base}, &Installation{base}, &InstallationRepositories{base}}
}

// CachedReads names what the handlers of a delivery read from the shared
// cache (runs.Ledger.Cached) before anything else: the configuration of
// the repository the body names, if it names one. The worker reads them
// with its own checks of the delivery, in one round trip.
func CachedReads(body []byte) []string {
	var ev struct {
		Repository struct {
			FullName string `json:"full_name"`
		} `json:"repository"`
	}
	if json.Unmarshal(body, &ev) != nil {
		return nil
	}
	repo, err := github.ParseRepo(ev.Repository.FullName)
	if err != nil {
		return nil
	}
	return []string{work.ConfigCacheName(repo)}
}

// Ignored reports, from a verified delivery's body, one every handler of
// its event would ignore, so that the intake answers it without storing
// it: an issue_comment that is no command of someone the repository knows
// (pitcrew's own comments and each edit of them, people talking,
// strangers), an issues event that adds no label and edits no dashboard. A
// body that does not decode is left to the handlers, which say why. It
// decides as the handlers' parsers would, from the intake's one reading of
// the body (hook.Body), without decoding it whole.
func Ignored(event string, body *hook.Body) bool {
	switch event {
	case "issue_comment":
		return commentIgnored(body.Scan(commentShape))
	case "issues":
		v := body.Scan(issuesShape)
		// The action as a struct{ Action string } decodes it: null leaves
		// it as it was, and a body of another type is an error.
		if !v.Valid() || v.Kind() != '{' && v.Kind() != 'n' || v.Bad("action") {
			return false
		}
		switch string(hook.Text(v.Kept("action"))) {
		case "labeled":
			return false
		case "edited":
			return dashboardEditIgnored(v)
		}
		return true
	}
	return false
}
