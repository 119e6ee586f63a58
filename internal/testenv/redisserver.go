package testenv

import (
	"context"
	"net"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisServer starts a redis-server of the test's own on a free loopback
// port, keeping nothing on disk, with extra arguments (e.g. "--replicaof",
// "127.0.0.1 6380"), and waits until it answers. It skips the test when
// redis-server is not installed; the process is killed at cleanup.
func RedisServer(t testing.TB, extra ...string) (addr string, cmd *exec.Cmd) {
	t.Helper()
	server, err := exec.LookPath("redis-server")
	if err != nil {
		SkipWithout(t, "redis-server", "apt-get install -y redis-server")
	}
	addr = FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	// Its own directory: a replica's full sync writes dump.rdb there.
	cmd = exec.Command(server, append([]string{"--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no", "--dir", t.TempDir()}, extra...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGCONT); cmd.Process.Kill(); cmd.Wait() })
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for c.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s never answered", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return addr, cmd
}

// FreeAddr is a loopback address with a port nobody listens on now.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
