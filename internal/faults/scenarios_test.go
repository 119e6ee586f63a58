package faults

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/sandbox"
)

// Each scenario logs the counts it ended with; the closing note quotes them.

func TestThreeReplicasRedeliveriesToRandomReplicas(t *testing.T) {
	f := newFleet(t, 3)
	start := time.Now()
	sent, ok := f.deliverAll(1, 200, 10)
	took := f.settle(1, 200, 2*time.Minute)
	f.check(1, 200)
	t.Logf("3 replicas: %d deliveries sent, %d answered 2xx, %d sessions, 0 duplicates, 0 lost; settled %s after the last delivery (%s in all)",
		sent, ok, f.sandbox.SessionCount(), took.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

func TestReplicaKilledDuringLoad(t *testing.T) {
	f := newFleet(t, 3)
	done := make(chan [2]int)
	go func() {
		sent, ok := f.deliverAll(1, 200, 5)
		done <- [2]int{sent, ok}
	}()
	victim := f.replicas[0]
	for i := 0; i < 5; i++ {
		time.Sleep(300 * time.Millisecond)
		f.kill(victim)
		time.Sleep(200 * time.Millisecond)
		f.start(victim)
	}
	counts := <-done
	// Deliveries that hit the dead replica failed; the sweeper asks GitHub
	// for them again. Tasks a killed replica held are recovered by the
	// queue once their lease expires (about a minute).
	took := f.settle(1, 200, 4*time.Minute)
	f.check(1, 200)
	redelivered := 0
	for _, d := range f.gh.Deliveries() {
		if d.Redelivery {
			redelivered++
		}
	}
	t.Logf("SIGKILL x5: %d deliveries sent, %d answered 2xx, %d redelivered by the sweeper, %d sessions, 0 duplicates, 0 lost; recovered %s after the load",
		counts[0], counts[1], redelivered, f.sandbox.SessionCount(), took.Round(time.Millisecond))
}

func TestRedisStoppedDuringLoad(t *testing.T) {
	f := newFleet(t, 2)
	done := make(chan [2]int)
	go func() { // 100 triggers, 3 deliveries each, spread over about 15 s
		var sent, ok int
		for i := 1; i <= 100; i += 5 {
			s, o := f.deliverAll(i, 5, 3)
			sent, ok = sent+s, ok+o
			time.Sleep(750 * time.Millisecond)
		}
		done <- [2]int{sent, ok}
	}()
	time.Sleep(2 * time.Second)
	f.redis.Process.Signal(syscall.SIGSTOP) // Redis stops answering
	time.Sleep(10 * time.Second)
	f.redis.Process.Signal(syscall.SIGCONT)
	back := time.Now()
	counts := <-done
	failed := 0
	for _, d := range f.gh.Deliveries() {
		if d.StatusCode == 503 {
			failed++
		}
	}
	if failed == 0 {
		t.Fatal("no delivery was answered 503 while Redis was stopped")
	}
	f.settle(1, 100, 3*time.Minute)
	f.check(1, 100)
	t.Logf("Redis stopped 10 s: %d deliveries sent, %d answered 2xx, %d answered 503, %d sessions, 0 duplicates, 0 lost; every trigger had its run %s after Redis came back",
		counts[0], counts[1], failed, f.sandbox.SessionCount(), time.Since(back).Round(time.Millisecond))
}

func TestLostCallbacksAreReconciled(t *testing.T) {
	f := newFleet(t, 2)
	f.deliverAll(1, 50, 1)
	f.settle(1, 50, time.Minute)
	// Every session ends; only half the callbacks arrive.
	ids := f.sandbox.SessionIDs()
	start := time.Now()
	for i, id := range ids {
		f.sandbox.Finish(id, sandbox.StatusCompleted, "```json\n{\"outcome\":\"not_reproduced\",\"runs\":500}\n```")
		if i%2 == 0 {
			f.sandbox.Callback(t, f.lb+"/api/rush/hook", rushSecret, sandbox.EventRunCompleted, id)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for {
		done := 0
		for i := 1; i <= 50; i++ {
			if cs := f.gh.Comments("hexpm/hexpm", i); len(cs) == 1 && strings.Contains(cs[0].Body, "could not reproduce") {
				done++
			}
		}
		if done == 50 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 50 outcomes reported\n%s", done, f.tailLogs())
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("callbacks dropped for 25 of 50 runs: all 50 outcomes reported, the last %s after the sessions ended", time.Since(start).Round(time.Millisecond))
}

func TestSandboxAndGitHubFailuresAreRetriedWithTheSameKey(t *testing.T) {
	f := newFleet(t, 2)
	f.sandbox.FailNextStarts(6)
	f.sandbox.Slow429(3)
	f.gh.FailNext(403, map[string]string{"Retry-After": "1"}, 3)
	f.gh.FailNext(502, nil, 3)
	f.deliverAll(1, 20, 1)
	f.settle(1, 20, 2*time.Minute)
	f.check(1, 20)
	reqs, keys := f.sandbox.StartRequests()
	perKey := map[string]int{}
	for _, k := range keys {
		perKey[k]++
	}
	t.Logf("sandbox 500 x6, 429 x3, GitHub 403 rate limit x3 and 502 x3: %d start requests for %d sessions over %d keys (max %d per key)",
		len(reqs), f.sandbox.SessionCount(), len(perKey), maxOf(perKey))
	if maxOf(perKey) > 10 {
		t.Fatalf("a run needed %d start requests", maxOf(perKey))
	}
}

func maxOf(m map[string]int) int {
	n := 0
	for _, v := range m {
		n = max(n, v)
	}
	return n
}
