package app

import (
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

// On a primary with a replica, a webhook is acknowledged once the replica
// has it; with the replica not acknowledging, it is refused with a 503 and
// /readyz says why; once the replica is back, both recover.
func TestAWebhookIsAcknowledgedOnlyOnceAReplicaHasIt(t *testing.T) {
	primary, _ := testenv.RedisServer(t, "--repl-diskless-sync-delay", "0")
	host, port, _ := net.SplitHostPort(primary)
	_, replica := testenv.RedisServer(t, "--replicaof", host, port)
	rdb := redis.NewClient(&redis.Options{Addr: primary})
	t.Cleanup(func() { rdb.Close() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, _ := rdb.Info(t.Context(), "replication").Result()
		if strings.Contains(info, "state=online") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the replica never came online")
		}
		time.Sleep(20 * time.Millisecond)
	}
	h := newHarness(t, false, func(o *Options) { o.Redis, o.EmbeddedRedis = rdb, false })
	ready := func() (int, string) {
		resp, err := http.Get(h.server.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	bodies, answers := map[int][]byte{}, map[int]int{}
	label := func(n int) int { // the same delivery each time for n, as GitHub redelivers it
		if bodies[n] == nil {
			bodies[n] = testenv.LabeledEvent(t, "flaky", "alice", n, "Flaky", "test/a_test.exs:1")
		}
		code := h.deliver("issues", "delivery-"+string(rune('0'+n)), bodies[n])
		answers[code]++
		return code
	}
	// On a loaded machine a WAIT can pass its 500 ms: that is a 503 too,
	// and GitHub's redelivery then gets the 2xx.
	code := label(1)
	for i := 0; i < 3 && code == http.StatusServiceUnavailable; i++ {
		code = label(1)
	}
	if code != http.StatusAccepted {
		t.Fatalf("with the replica online: %d", code)
	}
	if code, body := ready(); code != http.StatusOK {
		t.Fatalf("/readyz: %d %s", code, body)
	}

	replica.Process.Signal(syscall.SIGSTOP)
	if code := label(2); code != http.StatusServiceUnavailable {
		t.Fatalf("with the replica stopped: %d, want 503", code)
	}
	if code, body := ready(); code != http.StatusServiceUnavailable || !strings.Contains(body, "redis writes are not reaching a replica") {
		t.Fatalf("/readyz with the replica stopped: %d %q", code, body)
	}
	replica.Process.Signal(syscall.SIGCONT)
	if code := label(2); code != http.StatusAccepted { // GitHub's redelivery: the same body, stored already
		t.Fatalf("redelivered once the replica is back: %d", code)
	}
	if code, body := ready(); code != http.StatusOK {
		t.Fatalf("/readyz once the replica is back: %d %s", code, body)
	}
	// Each answer is counted once, by what GitHub was told.
	metrics := h.get("/metrics")
	count := func(outcome string) int {
		m := regexp.MustCompile(`pitcrew_deliveries_total\{event="issues",outcome="` + outcome + `"\} (\d+)`).FindStringSubmatch(metrics)
		if m == nil {
			return 0
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	if count("error") != answers[http.StatusServiceUnavailable] || count("queued")+count("duplicate") != answers[http.StatusAccepted] {
		t.Fatalf("answers %v, counted queued %d, duplicate %d, error %d", answers, count("queued"), count("duplicate"), count("error"))
	}
}
