package app

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/palantir/go-githubapp/githubapp"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/sandbox"
)

const (
	testWebhookSecret = "gh-webhook-secret-for-tests"
	testRushSecret    = "whsec_cGl0Y3Jldy1ydXNoLXNlY3JldC1mb3ItdGVzdHM="
)

// harness is pitcrew running against fakes of GitHub and the sandbox and a
// real Redis, reached through its real HTTP routes.
type harness struct {
	t       testing.TB
	gh      *testenv.GitHub
	sandbox *testenv.Sandbox
	redis   *redis.Client
	app     *App
	server  *httptest.Server
	logs    *syncBuffer
	opts    Options
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newHarness builds the app; startWorker says whether its queue worker
// runs; tune, when given, adjusts the options first.
func newHarness(t testing.TB, startWorker bool, tune ...func(*Options)) *harness {
	h := &harness{t: t, gh: testenv.NewGitHub(t), sandbox: testenv.NewSandbox(t), redis: testenv.Redis(t), logs: &syncBuffer{}}
	h.gh.SetPermission("alice", "write")
	sb, err := sandbox.NewClient(sandbox.Config{BaseURL: h.sandbox.URL, Org: h.sandbox.Org, APIKey: h.sandbox.APIKey, BaseDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	h.opts = Options{
		WebhookSecret: testWebhookSecret, RushWebhookSecret: testRushSecret, AppSlug: "pitcrew",
		ClientCreator: githubapp.NewClientCreator(h.gh.URL+"/", h.gh.URL+"/api/graphql", 1, testenv.AppKeyPEM(t),
			githubapp.WithTransport(&github.RetryTransport{BaseDelay: time.Millisecond})),
		Redis: h.redis, EmbeddedRedis: testenv.RedisIsEmbedded(), Sandbox: sb, Logger: zerolog.New(h.logs),
		Concurrency: 8, PollInterval: 20 * time.Millisecond, ShutdownTimeout: 500 * time.Millisecond,
		Schedule: queue.Schedule{SweepEvery: time.Hour, ReconcileEvery: time.Hour},
	}
	for _, f := range tune {
		f(&h.opts)
	}
	h.app = h.newApp()
	h.server = httptest.NewServer(h.app.Handler)
	t.Cleanup(h.server.Close)
	if startWorker {
		h.startWorker(h.app)
	}
	return h
}

func (h *harness) newApp() *App {
	app, err := NewApp(h.opts)
	if err != nil {
		h.t.Fatal(err)
	}
	return app
}

func (h *harness) startWorker(app *App) {
	if err := app.StartWorker(); err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(app.Shutdown)
}

// deliver posts a webhook signed with the app's secret.
func (h *harness) deliver(event, id string, payload []byte) int {
	return h.deliverSigned(event, id, payload, sign(testWebhookSecret, payload))
}

func (h *harness) deliverSigned(event, id string, payload []byte, signature string) int {
	return h.postHook(event, id, "application/json", signature, bytes.NewReader(payload))
}

// postHook sends one request to the webhook route; an empty signature
// leaves the header out.
func (h *harness) postHook(event, id, contentType, signature string, body io.Reader) int {
	return h.postTo("/api/github/hook", map[string]string{"Content-Type": contentType, "X-GitHub-Event": event,
		"X-GitHub-Delivery": id, "X-Hub-Signature-256": signature}, body)
}

// postTo sends one request to a route of the app, with the headers that
// have a value, and returns the status.
func (h *harness) postTo(path string, headers map[string]string, body io.Reader) int {
	req, _ := http.NewRequest(http.MethodPost, h.server.URL+path, body)
	for k, v := range headers {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatalf("%s: %v", path, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func sign(secret string, body []byte) string { return "sha256=" + testenv.HMACHex(secret, body) }

// get reads a route and returns its body, failing on a non-200 answer.
func (h *harness) get(path string) string {
	h.t.Helper()
	resp, err := http.Get(h.server.URL + path)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		h.t.Fatalf("GET %s answered %d", path, resp.StatusCode)
	}
	return string(b)
}

// callback sends the sandbox's signed callback for a session.
func (h *harness) callback(event, sessionID string) int {
	return h.sandbox.Callback(h.t, h.server.URL+"/api/rush/hook", testRushSecret, event, sessionID)
}

// finish ends a session as the agent would, and sends its callback.
func (h *harness) finish(sessionID, status, answer string) int {
	h.sandbox.Finish(sessionID, status, answer)
	event := sandbox.EventRunCompleted
	if status == sandbox.StatusFailed {
		event = sandbox.EventRunFailed
	}
	return h.callback(event, sessionID)
}

// eventually polls cond until it holds, failing the test after 10 s.
func (h *harness) eventually(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s\nlogs:\n%s", what, h.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// statusComment returns the only comment on an issue, failing if there is
// not exactly one.
func (h *harness) statusComment(issue int) testenv.Comment {
	h.t.Helper()
	cs := h.gh.Comments("hexpm/hexpm", issue)
	if len(cs) != 1 {
		h.t.Fatalf("issue #%d has %d comments, want 1: %+v", issue, len(cs), cs)
	}
	return cs[0]
}

func (h *harness) commentContains(issue int, text string) func() bool {
	return func() bool {
		cs := h.gh.Comments("hexpm/hexpm", issue)
		return len(cs) > 0 && strings.Contains(cs[len(cs)-1].Body, text)
	}
}
