// Package faults is the fault suite: several real pitcrew processes on
// loopback sharing a real Redis (a redis-server of its own), against the
// GitHub and sandbox fakes, under crashes, outages and lost callbacks.
package faults

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

const (
	webhookSecret = "fleet-webhook-secret"
	rushSecret    = "whsec_ZmxlZXQtcnVzaC1zZWNyZXQ="
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pitcrew-faults")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "pitcrew")
	out, err := exec.Command("go", "build", "-o", binary, "../../cmd/pitcrew").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building pitcrew: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fleet is N pitcrew processes behind a load balancer, a Redis server of
// their own, and the fakes.
type fleet struct {
	t        *testing.T
	gh       *testenv.GitHub
	sandbox  *testenv.Sandbox
	redis    *exec.Cmd
	redisURL string
	env      []string
	replicas []*replica
	lb       string // the load balancer's URL: what GitHub delivers to
	logs     string
}

type replica struct {
	addr string
	env  []string // its own, after the fleet's
	cmd  *exec.Cmd
	mu   sync.Mutex
}

func newFleet(t *testing.T, n int, extraEnv ...string) *fleet {
	addr, cmd := testenv.RedisServer(t)
	f := &fleet{redis: cmd, redisURL: "redis://" + addr}
	f.launch(t, n, append([]string{"REDIS_URL=" + f.redisURL}, extraEnv...))
	return f
}

// launch starts n pitcrew processes with the Redis env names, behind the
// balancer, against new fakes; own, when given, is each one's own env.
func (f *fleet) launch(t *testing.T, n int, env []string, own ...[]string) {
	f.t, f.gh, f.sandbox, f.logs = t, testenv.NewGitHub(t), testenv.NewSandbox(t), t.TempDir()
	f.gh.SetPermission("alice", "write")
	f.gh.SetFile("hexpm/hexpm", ".github/pitcrew.yml", "daily_limit: 1000\n")
	key := testenv.AppKeyPEM(t)
	f.env = append([]string{
		"GITHUB_APP_INTEGRATION_ID=1", "GITHUB_APP_PRIVATE_KEY=" + string(key), "GITHUB_APP_WEBHOOK_SECRET=" + webhookSecret,
		"GITHUB_V3_API_URL=" + f.gh.URL + "/",
		"RUSH_API_URL=" + f.sandbox.URL, "RUSH_ORG=" + f.sandbox.Org, "RUSH_API_KEY=" + f.sandbox.APIKey, "RUSH_WEBHOOK_SECRET=" + rushSecret,
		"PITCREW_LOG_LEVEL=warn", "PITCREW_SWEEP_EVERY=2s", "PITCREW_SWEEP_LOOKBACK=1h",
		"PITCREW_RECONCILE_EVERY=1s", "PITCREW_STALE_AFTER=2s", "PATH=" + os.Getenv("PATH"),
	}, env...)
	if dir := os.Getenv("FAULTS_DEBUG"); dir != "" { // a directory to keep info-level logs in
		f.env = append(f.env, "PITCREW_LOG_LEVEL=info")
		f.logs = dir
	}
	for i := 0; i < n; i++ {
		r := &replica{addr: testenv.FreeAddr(t)}
		if i < len(own) {
			r.env = own[i]
		}
		f.replicas = append(f.replicas, r)
		f.start(r)
	}
	t.Cleanup(func() {
		for _, r := range f.replicas {
			r.mu.Lock()
			if r.cmd != nil {
				r.cmd.Process.Signal(syscall.SIGTERM)
				r.cmd.Wait()
			}
			r.mu.Unlock()
		}
	})
	f.lb = f.balancer()
	f.gh.SetHook(f.lb+"/api/github/hook", webhookSecret)
}

// start runs a replica's process and waits until it is ready.
func (f *fleet) start(r *replica) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cmd := exec.Command(binary)
	cmd.Env = append(append(append([]string{}, f.env...), r.env...), "PITCREW_ADDR="+r.addr)
	logFile, _ := os.OpenFile(filepath.Join(f.logs, r.addr+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	r.cmd = cmd
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + r.addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("replica %s never became ready", r.addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill stops a replica with SIGKILL: no shutdown, work in flight abandoned.
func (f *fleet) kill(r *replica) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cmd.Process.Kill()
	r.cmd.Wait()
	r.cmd = nil
}

// balancer sends each request to a random replica, as a load balancer with
// no health checks would (a dead replica's share fails).
func (f *fleet) balancer() string {
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			r := f.replicas[rand.IntN(len(f.replicas))]
			pr.SetURL(&url.URL{Scheme: "http", Host: r.addr})
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) { w.WriteHeader(http.StatusBadGateway) },
	}
	lb := &http.Server{Handler: proxy}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.t.Fatal(err)
	}
	go lb.Serve(l)
	f.t.Cleanup(func() { lb.Close() })
	return "http://" + l.Addr().String()
}

// labelEvent is an issues.labeled delivery naming one distinct test.
func labelEvent(issue int) []byte {
	return []byte(fmt.Sprintf(`{"action":"labeled","label":{"name":"flaky"},"issue":{"number":%d,"title":"Flaky test/fleet/t%d_test.exs:%d","body":""},
"repository":{"name":"hexpm","full_name":"hexpm/hexpm","owner":{"login":"hexpm"}},"sender":{"login":"alice","type":"User"},"installation":{"id":42}}`, issue, issue, issue))
}

// deliverAll sends each trigger `times` times (the same guid: GitHub's
// redeliveries, or a replay) through the balancer, all concurrently.
func (f *fleet) deliverAll(first, count, times int) (sent, ok int) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	sem := make(chan struct{}, 32)
	for i := first; i < first+count; i++ {
		guid := fmt.Sprintf("fleet-%d", i)
		for j := 0; j < times; j++ {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				code := f.gh.Deliver("issues", guid, labelEvent(i))
				<-sem
				mu.Lock()
				sent++
				if code >= 200 && code < 300 {
					ok++
				}
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	return sent, ok
}

// settle waits until every trigger in [first, first+count) has its status
// comment with a session link, or fails after timeout.
func (f *fleet) settle(first, count int, timeout time.Duration) time.Duration {
	start := time.Now()
	for {
		done := 0
		for i := first; i < first+count; i++ {
			if cs := f.gh.Comments("hexpm/hexpm", i); len(cs) >= 1 && strings.Contains(cs[len(cs)-1].Body, "/s/ses_") {
				done++
			}
		}
		if done == count {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			f.t.Fatalf("after %s, %d of %d triggers have their run\n%s", timeout, done, count, f.tailLogs())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// check asserts one session and one status comment per trigger.
func (f *fleet) check(first, count int) {
	f.t.Helper()
	_, keys := f.sandbox.StartRequests()
	byKey := map[string]bool{}
	for _, k := range keys {
		byKey[k] = true
	}
	if f.sandbox.SessionCount() != count || len(byKey) != count {
		f.t.Fatalf("%d sessions and %d idempotency keys for %d triggers", f.sandbox.SessionCount(), len(byKey), count)
	}
	for i := first; i < first+count; i++ {
		if n := len(f.gh.Comments("hexpm/hexpm", i)); n != 1 {
			f.t.Fatalf("issue %d has %d status comments", i, n)
		}
	}
}

func (f *fleet) tailLogs() string {
	var out string
	files, _ := filepath.Glob(filepath.Join(f.logs, "*.log"))
	for _, name := range files {
		b, _ := os.ReadFile(name)
		if len(b) > 2000 {
			b = b[len(b)-2000:]
		}
		out += "== " + filepath.Base(name) + "\n" + string(b)
	}
	return out
}
