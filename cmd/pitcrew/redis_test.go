package main

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
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
