package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/palantir/go-githubapp/githubapp"
	"github.com/redis/go-redis/v9"

	"github.com/pitcrew/pitcrew/app"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/weburl"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/sandbox"
	"github.com/pitcrew/pitcrew/work"
)

// replayCommand implements `pitcrew replay --event TYPE --file PAYLOAD
// [--dry-run]`: it runs a captured delivery through its handler against
// the configured GitHub and prints, as JSON, what it did (or, with
// --dry-run, would do: nothing that writes is called, and the run ledger is
// a throwaway in-memory one).
func replayCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	event := fs.String("event", "", "the delivery's X-GitHub-Event")
	file := fs.String("file", "", "the delivery's body (JSON)")
	dry := fs.Bool("dry-run", false, "call nothing that writes; print what would be done")
	config := fs.String("config", "", "optional YAML file setting the same keys as the environment")
	if err := fs.Parse(args); err != nil || *event == "" || *file == "" {
		fmt.Fprintln(stderr, "usage: pitcrew replay --event TYPE --file PAYLOAD.json [--dry-run]")
		return 2
	}
	payload, err := os.ReadFile(*file)
	if err == nil {
		err = replay(*config, *event, payload, *dry, stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "pitcrew replay:", err)
		return 1
	}
	return 0
}

func replay(configFile, event string, payload []byte, dry bool, stdout io.Writer) error {
	cfg, err := LoadConfig(configFiles(configFile, os.Getenv), os.Getenv)
	if err != nil {
		return err
	}
	weburl.Set(cfg.GitHubWebURL)
	cc, err := newClientCreator(cfg)
	if err != nil {
		return err
	}
	var rdb redis.UniversalClient
	if dry || !cfg.hasRedis() {
		m, err := miniredis.Run()
		if err != nil {
			return err
		}
		defer m.Close()
		rdb = redis.NewClient(&redis.Options{Addr: m.Addr()})
	} else if rdb, _, err = newRedis(cfg); err != nil {
		return err
	}
	defer rdb.Close()
	var sb work.Sandbox = noSandbox{}
	if c, err := sandbox.NewClient(sandbox.Config{BaseURL: cfg.RushAPIURL, Org: cfg.RushOrg, APIKey: cfg.RushAPIKey, Agent: cfg.RushAgent}); err == nil {
		sb = c
	} else if !dry {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	got, err := app.Replay(ctx, app.Options{ClientCreator: cc, Redis: rdb, Sandbox: sb, AppSlug: "pitcrew"},
		event, fmt.Sprintf("replay-%d", time.Now().UnixNano()), payload, dry)
	out := map[string]any{"event": event, "dry_run": dry, "actions": got.Actions}
	if len(got.Why) > 0 {
		out["why"] = got.Why
	}
	if len(got.Warnings) > 0 {
		out["warnings"] = got.Warnings
	}
	if err != nil {
		out["error"] = err.Error()
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if encErr := enc.Encode(out); encErr != nil {
		return encErr
	}
	return err
}

// noSandbox stands in, in a dry run without sandbox configuration, for a
// sandbox that is never called (starts are recorded, not made).
type noSandbox struct{}

func (noSandbox) Start(context.Context, string, string, string, []string) (sandbox.Session, error) {
	return sandbox.Session{}, errors.New("no sandbox configured")
}
func (noSandbox) Get(context.Context, string) (sandbox.Session, error) {
	return sandbox.Session{}, errors.New("no sandbox configured")
}
func (noSandbox) Download(context.Context, string) ([]byte, error) {
	return nil, errors.New("no sandbox configured")
}
func (noSandbox) Message(context.Context, string, string, string) (sandbox.Session, error) {
	return sandbox.Session{}, errors.New("no sandbox configured")
}

// runsCommand implements `pitcrew runs list|show ID|retry ID` on the run
// ledger in REDIS_URL, or in the embedded Redis of a running pitcrew.
func runsCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("runs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	config := fs.String("config", "", "optional YAML file setting the same keys as the environment")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	args = fs.Args()
	if len(args) == 0 || (args[0] != "list" && len(args) < 2) {
		fmt.Fprintln(stderr, "usage: pitcrew runs [-config FILE] list | show RUN_ID | retry RUN_ID")
		return 2
	}
	cfg, err := LoadConfig(configFiles(*config, os.Getenv), os.Getenv)
	var rdb redis.UniversalClient
	where := ""
	if err == nil {
		rdb, where, err = ledgerRedis(context.Background(), cfg)
	}
	if err != nil {
		fmt.Fprintln(stderr, "pitcrew runs:", err)
		return 1
	}
	defer rdb.Close()
	ledger := runs.NewLedger(rdb)
	ctx := context.Background()
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	switch args[0] {
	case "list":
		recent, err := ledger.Recent(ctx, 50)
		if err != nil {
			fmt.Fprintln(stderr, "pitcrew runs:", err)
			return 1
		}
		if len(recent) == 0 {
			fmt.Fprintf(stdout, "no runs in the ledger of %s yet\n", where)
			return 0
		}
		row := "%-15s %-10s %-25s %s\n"
		fmt.Fprintf(stdout, row, "STATE", "JOB", "REPOSITORY", "RUN")
		for _, r := range recent {
			fmt.Fprintf(stdout, row, r.State, r.Kind, r.Repo, r.ID)
		}
	case "show":
		r, err := ledger.Get(ctx, args[1])
		if err != nil {
			fmt.Fprintln(stderr, "pitcrew runs:", err)
			return 1
		}
		enc.Encode(map[string]any{"id": r.ID, "state": r.State, "run": r})
	case "retry":
		if err := retryRun(ctx, ledger, rdb, args[1], stdout); err != nil {
			fmt.Fprintln(stderr, "pitcrew runs:", err)
			return 1
		}
	default:
		fmt.Fprintln(stderr, "usage: pitcrew runs list | show RUN_ID | retry RUN_ID")
		return 2
	}
	return 0
}

// retryRun asks the workers to read a run's session again and report its
// outcome again (a run stuck without an outcome, or a status comment to
// rewrite). A run that never got a session is started again by its signal:
// re-adding the label, or re-running CI.
func retryRun(ctx context.Context, ledger *runs.Ledger, rdb redis.UniversalClient, id string, stdout io.Writer) error {
	r, err := ledger.Get(ctx, id)
	if err != nil {
		return err
	}
	if r.SessionID == "" {
		return fmt.Errorf("run %s never got a session; start it again from its signal (re-add the label, re-run CI)", id)
	}
	if _, err := ledger.Update(ctx, runs.Run{ID: id}, func(r *runs.Run) error { r.Published = false; return nil }); err != nil {
		return err
	}
	q := asynq.NewClientFromRedisClient(rdb)
	defer q.Close()
	if _, err := q.EnqueueContext(ctx, queue.ReconcileTask(r.SessionID, fmt.Sprintf("retry:%s:%d", r.SessionID, time.Now().Unix()))); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "queued a fresh read of session %s for run %s (%s)\n", r.SessionID, id, strings.ToLower(string(r.State)))
	return nil
}

// newClientCreator builds the GitHub clients from the configuration.
func newClientCreator(cfg Config) (githubapp.ClientCreator, error) {
	appID, err := parseAppID(cfg.AppID)
	if err != nil {
		return nil, err
	}
	return githubapp.NewClientCreator(strings.TrimRight(cfg.GitHubAPIURL, "/")+"/", cfg.V4URL(), appID, []byte(cfg.PrivateKey),
		githubapp.WithClientUserAgent("pitcrew"), githubapp.WithClientTimeout(2*time.Minute),
		githubapp.WithTransport(&github.RetryTransport{})), nil
}
