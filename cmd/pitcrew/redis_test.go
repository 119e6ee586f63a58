package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/pitcrew/pitcrew/runs"
)

func TestTheRedisTheConfigurationNames(t *testing.T) {
	for _, c := range []struct {
		name  string
		cfg   Config
		where string // "" for an error
		err   string
	}{
		{name: "a URL", cfg: Config{RedisURL: "redis://:pw@redis.internal:6380/2"}, where: "redis.internal:6380"},
		{name: "Sentinels win over the URL", cfg: Config{RedisURL: "redis://localhost:6379", RedisSentinels: "10.0.0.1:26379, 10.0.0.2:26379,10.0.0.3:26379", RedisSentinelMaster: "pitcrew"},
			where: `the primary "pitcrew" of the Sentinels 10.0.0.1:26379, 10.0.0.2:26379, 10.0.0.3:26379`},
		{name: "Sentinels without the master's name", cfg: Config{RedisSentinels: "10.0.0.1:26379"}, err: "REDIS_SENTINEL_MASTER is unset"},
		{name: "a Sentinel without a port", cfg: Config{RedisSentinels: "10.0.0.1", RedisSentinelMaster: "m"}, err: `REDIS_SENTINELS: "10.0.0.1" is not host:port`},
		{name: "a broken URL", cfg: Config{RedisURL: "http://x"}, err: "REDIS_URL is not a valid"},
	} {
		rdb, where, err := newRedis(c.cfg)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || where != c.where {
			t.Errorf("%s: %q %v, want %q", c.name, where, err, c.where)
			continue
		}
		rdb.Close()
	}
	// REDIS_PASSWORD fills in a URL without one; the URL's own wins.
	for url, want := range map[string]string{"redis://localhost:6379": "from-env", "redis://:in-url@localhost:6379": "in-url"} {
		rdb, _, err := newRedis(Config{RedisURL: url, RedisPassword: "from-env"})
		if err != nil {
			t.Fatal(err)
		}
		if got := rdb.(*redis.Client).Options().Password; got != want {
			t.Errorf("%s: password %q, want %q", url, got, want)
		}
		rdb.Close()
	}
}

// A Redis that is down is said once, in pitcrew's words: go-redis's own
// line per dial retry goes to the log at debug level only.
func TestAnUnreachableRedisIsSaidOnceWithoutGoRedisLines(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := closed.Addr().String()
	closed.Close()
	for _, level := range []zerolog.Level{zerolog.InfoLevel, zerolog.DebugLevel} {
		var logs bytes.Buffer
		log := zerolog.New(&logs).Level(level)
		useRedisLog(log)
		_, _, err := openRedis(t.Context(), Config{RedisURL: "redis://" + addr}, log)
		if err == nil || !strings.HasPrefix(err.Error(), "Redis ("+addr+") is unreachable") {
			t.Fatalf("err = %v", err)
		}
		if said := strings.Contains(logs.String(), "connection pool"); said != (level == zerolog.DebugLevel) {
			t.Errorf("at %s, go-redis's lines in the log: %v\n%s", level, said, logs.String())
		}
	}
	useRedisLog(zerolog.Nop())
}

// `pitcrew runs` reads the ledger of the embedded Redis of a pitcrew
// running on this machine, and says plainly when there is none.
func TestRunsFindsTheEmbeddedRedisOfARunningPitcrew(t *testing.T) {
	t.Setenv("REDIS_URL", "")
	t.Setenv("REDIS_SENTINELS", "")
	t.Setenv("PITCREW_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "pitcrew", "credentials.yml"))
	cfg, err := LoadConfig(nil, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	list := func() (int, string, string) {
		var out, errs bytes.Buffer
		code := runsCommand([]string{"list"}, &out, &errs)
		return code, out.String(), errs.String()
	}
	if code, _, errs := list(); code != 1 || !strings.Contains(errs, "no pitcrew with an embedded Redis runs on this machine") || !strings.Contains(errs, "set REDIS_URL") {
		t.Fatalf("with no pitcrew running: exit %d, %s", code, errs)
	}

	rdb, stop, err := openRedis(t.Context(), cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	run, _, err := runs.NewLedger(rdb).Claim(t.Context(), runs.Run{Key: "flaky:hexpm/hexpm:test/a_test.exs:1", Kind: "flaky", Repo: "hexpm/hexpm"}, 0, 10, runs.Subject{})
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := list()
	if code != 0 || !strings.Contains(out, "hexpm/hexpm") || !strings.Contains(out, run.ID) {
		t.Fatalf("with pitcrew running: exit %d\n%s%s", code, out, errs)
	}
	addr, _ := os.ReadFile(cfg.embeddedRedisFile())

	stop()
	if _, err := os.Stat(cfg.embeddedRedisFile()); !os.IsNotExist(err) {
		t.Errorf("a stopped pitcrew left %s: %v", cfg.embeddedRedisFile(), err)
	}
	// A pitcrew that was killed leaves the file behind, naming a Redis
	// that is gone.
	os.WriteFile(cfg.embeddedRedisFile(), addr, 0o600)
	if code, _, errs := list(); code != 1 || !strings.Contains(errs, "does not answer: that pitcrew has stopped, and its runs with it") {
		t.Fatalf("after pitcrew stopped: exit %d, %s", code, errs)
	}
}
