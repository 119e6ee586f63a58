package main

// pitcrew demo: every story played through pitcrew's real routes and queue
// worker against the built-in fakes of GitHub and the sandbox
// (internal/testenv), an embedded Redis and a scripted agent, printing
// what GitHub would show.

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/palantir/go-githubapp/githubapp"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/app"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/sandbox"
)

const (
	demoWebhookSecret = "demo-github-webhook-secret"
	demoRushSecret    = "whsec_ZGVtby1ydXNoLXdlYmhvb2stc2VjcmV0LWZvci1waXRjcmV3"
	demoDatadogToken  = "demo-datadog-token"
	demoSentrySecret  = "demo-sentry-client-secret"
	demoWait          = 10 * time.Second
)

// demoSource is where the fakes find a file of pitcrew's source tree.
var demoSource = testenv.Path

// demoFailure is what narrator.Fatal panics with; the demo recovers it.
type demoFailure string

// narrator implements testenv.T for a program: a fatal error ends the
// demo with its message; other errors are collected and make it fail.
type narrator struct {
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (n *narrator) Helper() {}
func (n *narrator) Errorf(format string, args ...any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.errs = append(n.errs, fmt.Sprintf(format, args...))
}
func (n *narrator) Error(args ...any) { n.Errorf("%s", fmt.Sprint(args...)) }
func (n *narrator) Fatalf(format string, args ...any) {
	panic(demoFailure(fmt.Sprintf(format, args...)))
}
func (n *narrator) Fatal(args ...any)   { panic(demoFailure(fmt.Sprint(args...))) }
func (n *narrator) Logf(string, ...any) {}
func (n *narrator) Cleanup(f func()) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cleanups = append(n.cleanups, f)
}

// cleanup runs the collected functions, last added first.
func (n *narrator) cleanup() {
	n.mu.Lock()
	fs := n.cleanups
	n.cleanups = nil
	n.mu.Unlock()
	for _, f := range slices.Backward(fs) {
		f()
	}
}

func (n *narrator) errors() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.errs...)
}

// demo is pitcrew running against the fakes, with what the stories need.
type demo struct {
	*narrator
	out       io.Writer
	gh        *testenv.GitHub
	sandbox   *testenv.Sandbox
	pitcrew   *app.App
	url       string
	logs      *demoLogs
	ended     map[string]bool // the sessions the demo ended
	profiling string          // the merged migration's session
}

type demoLogs struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *demoLogs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *demoLogs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func demoCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	serve := fs.Bool("serve", false, "keep serving the app after the stories, for its status page, until Ctrl-C")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	for _, f := range [][]string{{"testdata", "openapi", "github-subset.json"}, {"testdata", "webhooks", "issues.labeled.json"}, {"exunit", "testdata", "logs", "gha_fail_seed_1.txt"}, {"evidence", "testdata", "runlogs", "backed.log"}} {
		if _, err := os.Stat(demoSource(f...)); err != nil {
			fmt.Fprintf(stderr, "pitcrew demo: the fakes read GitHub's OpenAPI description and sample payloads from pitcrew's source tree, and %s is not there.\n"+
				"Run it from a checkout of pitcrew: go run ./cmd/pitcrew demo\n", demoSource(f...))
			return 1
		}
	}
	n := &narrator{}
	defer n.cleanup()
	start := time.Now()
	d, err := startDemo(n, stdout)
	if err == nil {
		err = d.play()
	}
	if err != nil {
		fmt.Fprintf(stderr, "pitcrew demo: %v\n", err)
		if d != nil {
			fmt.Fprintf(stderr, "\npitcrew's log:\n%s", d.logs.String())
		}
		return 1
	}
	if errs := n.errors(); len(errs) > 0 {
		fmt.Fprintf(stderr, "pitcrew demo: the fakes saw calls GitHub or the sandbox would refuse:\n  %s\n", strings.Join(errs, "\n  "))
		return 1
	}
	fmt.Fprintf(stdout, "---\n\nEvery story played in %s, on this machine: no GitHub, no sandbox account.\n", time.Since(start).Round(100*time.Millisecond))
	if !*serve {
		return 0
	}
	fmt.Fprintf(stdout, "\npitcrew's status page: %s/\nServing until Ctrl-C.\n", d.url)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	<-ctx.Done()
	return 0
}

// startDemo builds pitcrew as cmd/pitcrew does, on the fakes, and serves it
// on a loopback port.
func startDemo(n *narrator, out io.Writer) (d *demo, err error) {
	defer recoverFailure(&err)
	d = &demo{narrator: n, out: out, gh: testenv.NewGitHub(n), sandbox: testenv.NewSandbox(n), logs: &demoLogs{}, ended: map[string]bool{}}
	d.gh.SetPermission("alice", "write")
	d.gh.SetFile(demoRepo, ".github/pitcrew.yml", "daily_limit: 20\nflaky:\n  verify_runs: 1\n") // the demo starts more runs than the default 5 a day
	m, err := miniredis.Run()
	if err != nil {
		return d, fmt.Errorf("embedded Redis: %w", err)
	}
	n.Cleanup(m.Close)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	n.Cleanup(func() { rdb.Close() })
	sb, err := sandbox.NewClient(sandbox.Config{BaseURL: d.sandbox.URL, Org: d.sandbox.Org, APIKey: d.sandbox.APIKey, BaseDelay: time.Millisecond})
	if err != nil {
		return d, err
	}
	d.pitcrew, err = app.NewApp(app.Options{
		WebhookSecret: demoWebhookSecret, RushWebhookSecret: demoRushSecret, AppSlug: "pitcrew",
		ClientCreator: githubapp.NewClientCreator(d.gh.URL+"/", d.gh.URL+"/api/graphql", 1, testenv.AppKeyPEM(n),
			githubapp.WithTransport(&github.RetryTransport{BaseDelay: time.Millisecond})),
		Redis: rdb, EmbeddedRedis: true, Sandbox: sb, Logger: zerolog.New(d.logs),
		Concurrency: 8, PollInterval: 20 * time.Millisecond, ShutdownTimeout: 500 * time.Millisecond,
		Schedule:       queue.Schedule{SweepEvery: time.Hour, ReconcileEvery: time.Hour},
		DashboardEvery: 200 * time.Millisecond,
		SourceEnv: map[string]string{"DATADOG_WEBHOOK_TOKEN": demoDatadogToken,
			"SENTRY_CLIENT_SECRET": demoSentrySecret, "SENTRY_PROJECT_REPOS": "hexpm-web=hexpm/hexpm"},
	})
	if err != nil {
		return d, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return d, err
	}
	srv := &http.Server{Handler: d.pitcrew.Handler, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	n.Cleanup(func() { srv.Close() })
	d.url = "http://" + l.Addr().String()
	if err := d.pitcrew.StartWorker(); err != nil {
		return d, err
	}
	n.Cleanup(d.pitcrew.Shutdown)
	return d, nil
}

func recoverFailure(err *error) {
	if r := recover(); r != nil {
		f, ok := r.(demoFailure)
		if !ok {
			panic(r)
		}
		*err = errors.New(string(f))
	}
}

// post sends one request to a route of the app and fails on an answer
// other than 200 or 202.
func (d *demo) post(path string, headers map[string]string, body []byte) {
	req, _ := http.NewRequest(http.MethodPost, d.url+path, bytes.NewReader(body))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.Fatalf("%s: %v", path, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted {
		d.Fatalf("%s answered %d", path, resp.StatusCode)
	}
}

// deliver posts a GitHub webhook signed with the app's secret.
func (d *demo) deliver(event string, payload []byte) {
	d.post("/api/github/hook", map[string]string{"Content-Type": "application/json", "X-GitHub-Event": event,
		"X-GitHub-Delivery": testenv.DeliveryID(), "X-Hub-Signature-256": "sha256=" + testenv.HMACHex(demoWebhookSecret, payload)}, payload)
}

// finish ends a session with the scripted agent's answer and sends the
// sandbox's callback.
func (d *demo) finish(session, status, answer string) {
	// The sandbox starts a session before pitcrew records it; a real agent
	// ends one minutes later, the scripted one at once: wait for the record,
	// or the callback comes for a session pitcrew does not know yet.
	d.eventually("pitcrew to record "+session, func() bool {
		_, err := d.pitcrew.Ledger.BySession(context.Background(), session)
		return err == nil
	})
	d.ended[session] = true
	d.sandbox.Finish(session, status, answer)
	event := sandbox.EventRunCompleted
	if status == sandbox.StatusFailed {
		event = sandbox.EventRunFailed
	}
	if code := d.sandbox.Callback(d, d.url+"/api/rush/hook", demoRushSecret, event, session); code != http.StatusAccepted && code != http.StatusOK {
		d.Fatalf("the sandbox's callback for %s answered %d", session, code)
	}
}

// eventually waits for cond, bounded, as the tests do.
func (d *demo) eventually(what string, cond func() bool) {
	deadline := time.Now().Add(demoWait)
	for !cond() {
		if time.Now().After(deadline) {
			d.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// newSession waits for a session not in before and returns its id.
func (d *demo) newSession(what string, before []string) string {
	var id string
	d.eventually(what, func() bool {
		for _, s := range d.sandbox.SessionIDs() {
			if !slices.Contains(before, s) {
				id = s
				return true
			}
		}
		return false
	})
	return id
}
