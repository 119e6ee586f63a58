package main

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/redis/go-redis/v9"
)

// hasRedis reports whether the configuration names a Redis (REDIS_URL or
// Sentinel); without one, pitcrew runs an embedded one.
func (c Config) hasRedis() bool { return c.RedisURL != "" || c.RedisSentinels != "" }

// newRedis is a client of the Redis the configuration names: with
// REDIS_SENTINELS, the current primary of REDIS_SENTINEL_MASTER as the
// Sentinels tell it (followed through a failover); else REDIS_URL.
// REDIS_PASSWORD is the primary's password (REDIS_URL's own wins) and
// REDIS_SENTINEL_PASSWORD the Sentinels'. where names it for messages,
// without a password.
func newRedis(c Config) (rdb redis.UniversalClient, where string, err error) {
	if c.RedisSentinels != "" {
		if c.RedisSentinelMaster == "" {
			return nil, "", errors.New("REDIS_SENTINEL_MASTER is unset: it names the primary the Sentinels in REDIS_SENTINELS monitor")
		}
		var addrs []string
		for _, a := range strings.Split(c.RedisSentinels, ",") {
			a = strings.TrimSpace(a)
			if _, _, err := net.SplitHostPort(a); err != nil {
				return nil, "", fmt.Errorf("REDIS_SENTINELS: %q is not host:port", a)
			}
			addrs = append(addrs, a)
		}
		rdb = redis.NewFailoverClient(&redis.FailoverOptions{MasterName: c.RedisSentinelMaster, SentinelAddrs: addrs,
			Password: c.RedisPassword, SentinelPassword: c.RedisSentinelPassword, ContextTimeoutEnabled: true})
		return rdb, fmt.Sprintf("the primary %q of the Sentinels %s", c.RedisSentinelMaster, strings.Join(addrs, ", ")), nil
	}
	opts, err := redis.ParseURL(c.RedisURL)
	if err != nil {
		return nil, "", errors.New("REDIS_URL is not a valid redis:// or rediss:// URL")
	}
	if opts.Password == "" {
		opts.Password = c.RedisPassword
	}
	opts.ContextTimeoutEnabled = true // a request's deadline bounds its Redis calls
	return redis.NewClient(opts), opts.Addr, nil
}
