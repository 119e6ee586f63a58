package handlers

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
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
	testInstallation  = 42
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
		Redis: h.redis, Sandbox: sb, Logger: zerolog.New(h.logs),
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

func sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

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

// example is an @octokit/webhooks-examples payload as pitcrew would get
// it: sent to installation 42, moved to hexpm/hexpm, then changed by change.
var eventClock struct {
	sync.Mutex
	t time.Time
}

// nextEventTime is a later time at each call, as GitHub stamps objects.
func nextEventTime() string {
	eventClock.Lock()
	defer eventClock.Unlock()
	if eventClock.t.IsZero() {
		eventClock.t = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	}
	eventClock.t = eventClock.t.Add(time.Second)
	return eventClock.t.Format(time.RFC3339)
}

func example(t testing.TB, name string, change func(ev map[string]any)) []byte {
	var ev map[string]any
	b, err := os.ReadFile("../testdata/webhooks/" + name)
	if err == nil {
		err = json.Unmarshal(b, &ev)
	}
	if err != nil {
		t.Fatal(err)
	}
	if inst, ok := ev["installation"].(map[string]any); ok {
		inst["id"] = testInstallation // keep the real shape where the example has one
	} else {
		ev["installation"] = map[string]any{"id": testInstallation, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDI="}
	}
	if repo, ok := ev["repository"].(map[string]any); ok {
		repo["name"], repo["full_name"] = "hexpm", "hexpm/hexpm"
		repo["owner"].(map[string]any)["login"] = "hexpm"
	}
	// Two events GitHub sends never have the same body (their objects'
	// updated_at differ); a body sent again under a new id is a replay.
	for _, k := range []string{"repository", "installation"} {
		if o, ok := ev[k].(map[string]any); ok {
			if _, ok := o["updated_at"]; ok {
				o["updated_at"] = nextEventTime()
			}
		}
	}
	change(ev)
	out, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// labeledEvent is the issues.labeled example with the given label, sender,
// issue number and text.
func labeledEvent(t testing.TB, label, sender string, issue int, title, body string) []byte {
	return example(t, "issues.labeled.json", func(ev map[string]any) {
		ev["label"].(map[string]any)["name"] = label
		is := ev["issue"].(map[string]any)
		is["number"], is["title"], is["body"] = issue, title, body
		s := ev["sender"].(map[string]any)
		s["login"] = sender
		if strings.HasSuffix(sender, "[bot]") {
			s["type"] = "Bot"
		}
	})
}

// pushEvent is the push example: commit after pushed to the default
// branch, adding and modifying files.
func pushEvent(t testing.TB, after string, added, modified []any) []byte {
	return example(t, "push.json", func(ev map[string]any) {
		ev["ref"], ev["after"] = "refs/heads/master", after
		ev["commits"] = []any{map[string]any{"id": after, "added": added, "modified": modified, "removed": []any{}}}
	})
}

var deliverySeq struct {
	sync.Mutex
	n int
}

func newDeliveryID() string {
	deliverySeq.Lock()
	defer deliverySeq.Unlock()
	deliverySeq.n++
	return fmt.Sprintf("72d3162e-cc78-11e3-81ab-%012d", deliverySeq.n)
}
