package faults

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

const sentinelMaster = "pitcrew"

// topology is a Redis primary, its replica and three Sentinels, each a
// real process of the test's own.
type topology struct {
	primary, replica       string
	primaryCmd, replicaCmd *exec.Cmd
	link                   *link // the replica's connection to the primary
	sentinels              []string
}

// newSentinels starts the topology and waits until every Sentinel knows
// the replica and the two other Sentinels, so that it can fail over.
func newSentinels(t *testing.T) *topology {
	server, err := exec.LookPath("redis-server")
	if err != nil {
		testenv.SkipWithout(t, "redis-server", "apt-get install -y redis-server")
	}
	top := &topology{}
	top.primary, top.primaryCmd = testenv.RedisServer(t, "--repl-diskless-sync-delay", "0")
	host, port, _ := net.SplitHostPort(top.primary)
	top.link = newLink(t, top.primary)
	_, lport, _ := net.SplitHostPort(top.link.addr)
	top.replica, top.replicaCmd = testenv.RedisServer(t, "--replicaof", host, lport, "--repl-diskless-sync-delay", "0")
	dir := t.TempDir()
	for i := 0; i < 3; i++ {
		addr := testenv.FreeAddr(t)
		_, sport, _ := net.SplitHostPort(addr)
		conf := filepath.Join(dir, fmt.Sprintf("sentinel-%d.conf", i))
		os.WriteFile(conf, []byte(fmt.Sprintf("port %s\nbind 127.0.0.1\nsentinel monitor %s %s %s 2\nsentinel down-after-milliseconds %s 1000\n"+
			"sentinel failover-timeout %s 5000\nsentinel parallel-syncs %s 1\n", sport, sentinelMaster, host, port, sentinelMaster, sentinelMaster, sentinelMaster)), 0o600)
		cmd := exec.Command(server, conf, "--sentinel")
		cmd.Dir = dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		top.sentinels = append(top.sentinels, addr)
	}
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for _, addr := range top.sentinels {
		s := redis.NewSentinelClient(&redis.Options{Addr: addr})
		for {
			replicas, _ := s.Replicas(ctx, sentinelMaster).Result()
			peers, _ := s.Sentinels(ctx, sentinelMaster).Result()
			if len(replicas) == 1 && len(peers) == 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("Sentinel %s knows %d replicas and %d Sentinels", addr, len(replicas), len(peers))
			}
			time.Sleep(100 * time.Millisecond)
		}
		s.Close()
	}
	return top
}

// primaryNow is the primary the Sentinels name now.
func (top *topology) primaryNow() string {
	s := redis.NewSentinelClient(&redis.Options{Addr: top.sentinels[0]})
	defer s.Close()
	addr, err := s.GetMasterAddrByName(context.Background(), sentinelMaster).Result()
	if err != nil || len(addr) != 2 {
		return ""
	}
	return net.JoinHostPort(addr[0], addr[1])
}

// The primary dies mid-storm: Sentinel promotes the replica, webhooks are
// refused (never acknowledged without being stored) until pitcrew's
// replicas reach the new primary, and every trigger ends with exactly one
// session: the acknowledged ones because a replica had them, the refused
// ones through the delivery sweeper.
func TestPrimaryKilledMidStormFailsOverWithNothingLostOrDoubled(t *testing.T) {
	stormThroughAFailover(t, false)
}

// The same, with the replica cut off (its link drops what the primary
// sends, without closing: the primary still counts it) just before the
// primary dies, and the fleet's only worker stopped as long: what the
// primary took meanwhile never reached the replica that is promoted, and
// no worker ran it. Acknowledged only once replicated, none of it was
// acknowledged: it is refused, and recovered by the sweeper. (With the
// wait switched off, 10 of the 150 triggers were acknowledged and lost:
// no run after 4 minutes.)
func TestPrimaryKilledWhileItsReplicaIsCutOffLosesNothingAcknowledged(t *testing.T) {
	stormThroughAFailover(t, true)
}

func stormThroughAFailover(t *testing.T, cutOff bool) {
	top := newSentinels(t)
	f := &fleet{redis: top.primaryCmd}
	// Two replicas take webhooks only; the third runs the queue's tasks.
	intakeOnly := []string{"PITCREW_WORKERS=0"}
	f.launch(t, 3, []string{"REDIS_SENTINELS=" + strings.Join(top.sentinels, ","), "REDIS_SENTINEL_MASTER=" + sentinelMaster}, intakeOnly, intakeOnly)
	worker := f.replicas[2].cmd.Process
	const triggers = 150
	done := make(chan struct{})
	go func() { // 150 triggers, 3 deliveries each, over about 10 s
		for i := 1; i <= triggers; i += 10 {
			f.deliverAll(i, 10, 3)
			time.Sleep(600 * time.Millisecond)
		}
		close(done)
	}()
	if cutOff {
		time.Sleep(1500 * time.Millisecond)
		top.link.cut()
		worker.Signal(syscall.SIGSTOP)
		time.Sleep(1500 * time.Millisecond)
	} else {
		time.Sleep(3 * time.Second)
	}
	top.primaryCmd.Process.Signal(syscall.SIGKILL)
	killed := time.Now()
	worker.Signal(syscall.SIGCONT)
	<-done
	deadline := time.Now().Add(30 * time.Second)
	for top.primaryNow() != top.replica {
		if time.Now().After(deadline) {
			t.Fatalf("the Sentinels name %q as the primary, want the replica %s", top.primaryNow(), top.replica)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// What GitHub saw of each trigger's first deliveries (not the sweeper's).
	acked := map[string]bool{}
	var refused []time.Time
	sent := 0
	for _, d := range f.gh.Deliveries() {
		if d.Redelivery {
			continue
		}
		sent++
		if d.StatusCode >= 200 && d.StatusCode < 300 {
			acked[d.GUID] = true
		} else {
			refused = append(refused, d.DeliveredAt)
		}
	}
	took := f.settle(1, triggers, 4*time.Minute)
	f.check(1, triggers) // one session and one status comment per trigger: none lost, none doubled
	window := time.Duration(0)
	if len(refused) > 0 {
		sort.Slice(refused, func(i, j int) bool { return refused[i].Before(refused[j]) })
		window = refused[len(refused)-1].Sub(refused[0])
	}
	redelivered := 0
	for _, d := range f.gh.Deliveries() {
		if d.Redelivery {
			redelivered++
		}
	}
	t.Logf("primary SIGKILLed mid-storm (replica cut off: %v): %d deliveries of %d triggers, %d triggers acknowledged (2xx), %d sessions, 0 lost, 0 doubled; "+
		"%d deliveries refused over %v (the first %v from the kill; negative: before it), %d redelivered by the sweeper; every trigger had its run %v after the storm",
		cutOff, sent, triggers, len(acked), f.sandbox.SessionCount(), len(refused), window.Round(time.Millisecond), firstAfter(refused, killed), redelivered, took.Round(time.Millisecond))
	if len(refused) == 0 {
		t.Fatal("no delivery was refused while the primary was down")
	}
}

func firstAfter(ts []time.Time, t0 time.Time) time.Duration {
	if len(ts) == 0 {
		return 0
	}
	return ts[0].Sub(t0).Round(time.Millisecond)
}

// link carries the replication between the replica and the primary; cut
// drops everything after it in both directions while keeping the
// connections open, as a partition does: the primary still counts the
// replica, which never gets (or acknowledges) what was written since.
type link struct {
	addr string
	mu   sync.Mutex
	down bool
}

func newLink(t *testing.T, to string) *link {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	ln := &link{addr: l.Addr().String()}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", to)
			if err != nil {
				c.Close()
				continue
			}
			go ln.pipe(c, up)
			go ln.pipe(up, c)
		}
	}()
	return ln
}

func (ln *link) cut() {
	ln.mu.Lock()
	ln.down = true
	ln.mu.Unlock()
}

func (ln *link) pipe(from, to net.Conn) {
	defer from.Close()
	defer to.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if err != nil {
			return
		}
		ln.mu.Lock()
		down := ln.down
		ln.mu.Unlock()
		if down {
			continue // dropped
		}
		if _, err := to.Write(buf[:n]); err != nil {
			return
		}
	}
}
