package app

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/handlers"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/metrics"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/sandbox"
	"github.com/pitcrew/pitcrew/work"
)

// Action is something a handler did, or in a dry run would have done, to
// GitHub or the sandbox.
type Action struct {
	Kind           string `json:"kind"` // comment, comment_edit, label, check_run, check_run_update, issue, issue_edit, commit_comment, reaction, session, follow_up
	Repo           string `json:"repo,omitempty"`
	Target         string `json:"target,omitempty"` // issue number, comment id, commit, ...
	Body           string `json:"body,omitempty"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	Prompt         string `json:"prompt,omitempty"`
}

// Replayed is what a replayed delivery did: its actions, or, when there
// are none, why: what its handler said of its decisions.
type Replayed struct {
	Actions  []Action `json:"actions"`
	Why      []string `json:"why,omitempty"`
	Warnings []string `json:"warnings,omitempty"` // what the handler warned of, whatever it did
}

// Replay runs one captured GitHub delivery through the event's handler and
// returns what it did. With dryRun, nothing that writes is called: GitHub
// reads go to the configured GitHub, writes and sandbox starts are only
// recorded, and the ledger is o.Redis (give it a throwaway Redis). When it
// does nothing, the handler's logged decisions (info and above) say why.
func Replay(ctx context.Context, o Options, event, deliveryID string, payload []byte, dryRun bool) (Replayed, error) {
	rec := &recorder{dry: dryRun}
	ledger := runs.NewLedger(o.Redis)
	base := handlers.NewEnv(work.Env{Clients: &recordingClients{Clients: github.NewClients(o.ClientCreator), rec: rec}, Ledger: ledger,
		Sandbox: &recordingSandbox{Sandbox: o.Sandbox, rec: rec}, Metrics: metrics.New(prometheus.NewRegistry()), AppSlug: o.AppSlug})
	var said decisions
	// Debug: the handlers say at that level why they ignore a delivery.
	log := zerolog.New(&said).Level(zerolog.DebugLevel)
	// Every handler of the event, as the worker runs them.
	worker := NewDeliveryWorker(o.Redis, ledger, handlers.EventHandlers(base)...)
	if len(worker.Handlers[event]) > 0 {
		err := worker.handle(log.WithContext(ctx), event, deliveryID, payload)
		why, warnings := said.read()
		out := Replayed{Actions: rec.actions, Warnings: warnings}
		if len(out.Actions) == 0 {
			out.Actions, out.Why = []Action{}, why
		}
		if len(out.Actions) == 0 && len(out.Why) == 0 && err == nil {
			out.Why = []string{refusal(event, payload)}
		}
		return out, err
	}
	return Replayed{Actions: []Action{}}, fmt.Errorf("pitcrew does not handle %q events", event)
}

// decisions keeps what a handler logs: every message with its fields, as
// the reason it did nothing, and its warnings and errors.
type decisions struct {
	mu             sync.Mutex
	said, warnings []string
}

// quiet are the log fields every line has, which say nothing of a rule.
var quiet = map[string]bool{"level": true, "message": true, "time": true, "github_event_type": true, "github_delivery_id": true, "component": true}

func (d *decisions) Write(p []byte) (int, error) {
	var line map[string]any
	if json.Unmarshal(p, &line) != nil {
		return len(p), nil
	}
	msg, _ := line["message"].(string)
	// At debug level only the handlers' refusals ("ignoring ..."), not
	// the libraries' chatter.
	if lvl, _ := line["level"].(string); msg == "" || lvl == "debug" && !strings.HasPrefix(msg, "ignoring ") {
		return len(p), nil
	}
	var fields []string
	for k, v := range line {
		if !quiet[k] {
			fields = append(fields, fmt.Sprintf("%s=%v", k, v))
		}
	}
	if len(fields) > 0 {
		sort.Strings(fields)
		msg += " (" + strings.Join(fields, ", ") + ")"
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.said = append(d.said, msg)
	if lvl, _ := line["level"].(string); lvl == "warn" || lvl == "error" {
		d.warnings = append(d.warnings, msg)
	}
	return len(p), nil
}

func (d *decisions) read() (said, warnings []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.said...), append([]string(nil), d.warnings...)
}

type recorder struct {
	mu      sync.Mutex
	dry     bool
	actions []Action
	nextID  int64
}

// note records an action; in a dry run it also returns a made-up id.
func (r *recorder) note(a Action) (fakeID int64, dry bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.actions = append(r.actions, a)
	r.nextID++
	return 900000 + r.nextID, r.dry
}

type recordingClients struct {
	github.Clients
	rec *recorder
}

func (c *recordingClients) Installation(id int64) (github.Client, error) {
	gh, err := c.Clients.Installation(id)
	return &recordingGitHub{Client: gh, rec: c.rec}, err
}

// recordingGitHub passes reads through and records writes.
type recordingGitHub struct {
	github.Client
	rec *recorder
}

func (g *recordingGitHub) CreateComment(ctx context.Context, repo github.Repo, issue int, body string) (int64, error) {
	if id, dry := g.rec.note(Action{Kind: "comment", Repo: repo.String(), Target: fmt.Sprint(issue), Body: body}); dry {
		return id, nil
	}
	return g.Client.CreateComment(ctx, repo, issue, body)
}

func (g *recordingGitHub) EditComment(ctx context.Context, repo github.Repo, id int64, body string) error {
	if _, dry := g.rec.note(Action{Kind: "comment_edit", Repo: repo.String(), Target: fmt.Sprint(id), Body: body}); dry {
		return nil
	}
	return g.Client.EditComment(ctx, repo, id, body)
}

func (g *recordingGitHub) CreateLabel(ctx context.Context, repo github.Repo, name, color, description string) (bool, error) {
	if _, dry := g.rec.note(Action{Kind: "label", Repo: repo.String(), Target: name, Body: description}); dry {
		return true, nil
	}
	return g.Client.CreateLabel(ctx, repo, name, color, description)
}

func (g *recordingGitHub) CreateIssue(ctx context.Context, repo github.Repo, title, body string, labels []string) (int, error) {
	if id, dry := g.rec.note(Action{Kind: "issue", Repo: repo.String(), Target: title, Body: body}); dry {
		return int(id), nil
	}
	return g.Client.CreateIssue(ctx, repo, title, body, labels)
}

func (g *recordingGitHub) EditIssueBody(ctx context.Context, repo github.Repo, number int, body string) error {
	if _, dry := g.rec.note(Action{Kind: "issue_edit", Repo: repo.String(), Target: fmt.Sprint(number), Body: body}); dry {
		return nil
	}
	return g.Client.EditIssueBody(ctx, repo, number, body)
}

func (g *recordingGitHub) ReactToComment(ctx context.Context, repo github.Repo, id int64, content string) error {
	if _, dry := g.rec.note(Action{Kind: "reaction", Repo: repo.String(), Target: fmt.Sprint(id), Body: content}); dry {
		return nil
	}
	return g.Client.ReactToComment(ctx, repo, id, content)
}

func (g *recordingGitHub) ReactToReviewComment(ctx context.Context, repo github.Repo, id int64, content string) error {
	if _, dry := g.rec.note(Action{Kind: "reaction", Repo: repo.String(), Target: fmt.Sprint(id), Body: content}); dry {
		return nil
	}
	return g.Client.ReactToReviewComment(ctx, repo, id, content)
}

func (g *recordingGitHub) CreateCheckRun(ctx context.Context, repo github.Repo, sha string, out github.CheckOutput) (int64, error) {
	if id, dry := g.rec.note(Action{Kind: "check_run", Repo: repo.String(), Target: sha, Body: out.Title + "\n\n" + out.Summary}); dry {
		return id, nil
	}
	return g.Client.CreateCheckRun(ctx, repo, sha, out)
}

func (g *recordingGitHub) UpdateCheckRun(ctx context.Context, repo github.Repo, id int64, out github.CheckOutput) error {
	if _, dry := g.rec.note(Action{Kind: "check_run_update", Repo: repo.String(), Target: fmt.Sprint(id), Body: out.Title + "\n\n" + out.Summary}); dry {
		return nil
	}
	return g.Client.UpdateCheckRun(ctx, repo, id, out)
}

func (g *recordingGitHub) CreateCommitComment(ctx context.Context, repo github.Repo, sha, body string) (int64, error) {
	if id, dry := g.rec.note(Action{Kind: "commit_comment", Repo: repo.String(), Target: sha, Body: body}); dry {
		return id, nil
	}
	return g.Client.CreateCommitComment(ctx, repo, sha, body)
}

func (g *recordingGitHub) EditCommitComment(ctx context.Context, repo github.Repo, id int64, body string) error {
	if _, dry := g.rec.note(Action{Kind: "commit_comment_edit", Repo: repo.String(), Target: fmt.Sprint(id), Body: body}); dry {
		return nil
	}
	return g.Client.EditCommitComment(ctx, repo, id, body)
}

// recordingSandbox records session starts; in a dry run it starts none.
type recordingSandbox struct {
	work.Sandbox
	rec *recorder
}

func (s *recordingSandbox) Start(ctx context.Context, key, prompt, repoURL string, connections []string) (sandbox.Session, error) {
	if id, dry := s.rec.note(Action{Kind: "session", Target: repoURL, IdempotencyKey: key, Prompt: prompt}); dry {
		return sandbox.Session{ID: fmt.Sprintf("dry-run-%d", id), Status: sandbox.StatusRunning}, nil
	}
	return s.Sandbox.Start(ctx, key, prompt, repoURL, connections)
}

func (s *recordingSandbox) Message(ctx context.Context, sessionID, key, message string) (sandbox.Session, error) {
	if _, dry := s.rec.note(Action{Kind: "follow_up", Target: sessionID, IdempotencyKey: key, Prompt: message}); dry {
		return sandbox.Session{ID: sessionID, Status: sandbox.StatusRunning}, nil
	}
	return s.Sandbox.Message(ctx, sessionID, key, message)
}
