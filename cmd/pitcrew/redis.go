package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
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

// redisLog takes go-redis's own messages into pitcrew's log at debug
// level: a Redis that is down makes it print a line per dial retry, before
// the one error pitcrew reports ("Redis ... is unreachable").
type redisLog struct{ log zerolog.Logger }

func (l redisLog) Printf(_ context.Context, format string, v ...any) {
	l.log.Debug().Str("component", "go-redis").Msgf(format, v...)
}

// useRedisLog sends go-redis's messages to log (see redisLog).
func useRedisLog(log zerolog.Logger) { redis.SetLogger(redisLog{log}) }

// embeddedRedisFile is where a pitcrew running an embedded Redis writes
// its address, beside the credentials file, so that `pitcrew runs` on the
// same machine (which finds that file the same way) reaches it.
func (c Config) embeddedRedisFile() string {
	return filepath.Join(filepath.Dir(c.CredentialsFile), "embedded-redis.addr")
}

// openRedis connects to the configured Redis (newRedis), or starts an
// embedded one when none is configured.
func openRedis(ctx context.Context, cfg Config, log zerolog.Logger) (redis.UniversalClient, func(), error) {
	if !cfg.hasRedis() {
		m, err := miniredis.Run()
		if err != nil {
			return nil, nil, fmt.Errorf("starting embedded Redis: %w", err)
		}
		file := cfg.embeddedRedisFile()
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err == nil {
			err = os.WriteFile(file, []byte(m.Addr()+"\n"), 0o600)
		}
		log.Warn().Str("addr", m.Addr()).Str("found_by_pitcrew_runs_in", file).
			Msg("REDIS_URL is unset: using an embedded in-memory Redis; all state (queued work, runs) is lost when pitcrew stops")
		rdb := redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true})
		return rdb, func() {
			rdb.Close()
			if b, err := os.ReadFile(file); err == nil && strings.TrimSpace(string(b)) == m.Addr() {
				os.Remove(file) // unless another pitcrew wrote its own since
			}
			m.Close()
		}, nil
	}
	rdb, where, err := newRedis(cfg)
	if err != nil {
		return nil, nil, err
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := rdb.Ping(pingCtx).Err(); err != nil {
		rdb.Close()
		return nil, nil, fmt.Errorf("Redis (%s) is unreachable: %w", where, err)
	}
	return rdb, func() { rdb.Close() }, nil
}

// ledgerRedis is the Redis whose ledger `pitcrew runs` reads: the
// configured one, or the embedded Redis of a pitcrew running on this
// machine, which lives inside that process and ends with it.
func ledgerRedis(ctx context.Context, cfg Config) (rdb redis.UniversalClient, where string, err error) {
	if cfg.hasRedis() {
		rdb, where, err = newRedis(cfg)
		return rdb, "REDIS_URL (" + where + ")", err
	}
	file := cfg.embeddedRedisFile()
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, "", fmt.Errorf("REDIS_URL is unset, and no pitcrew with an embedded Redis runs on this machine (%s is not there). "+
			"An embedded Redis lives inside the pitcrew that started it and its runs end with it: start pitcrew and run this again, "+
			"or set REDIS_URL to the Redis pitcrew uses", file)
	}
	addr := strings.TrimSpace(string(b))
	rdb = redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1})
	pingCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := rdb.Ping(pingCtx).Err(); err != nil {
		rdb.Close()
		return nil, "", fmt.Errorf("REDIS_URL is unset, and the embedded Redis a pitcrew named in %s (%s) does not answer: "+
			"that pitcrew has stopped, and its runs with it. Start pitcrew and run this again, or set REDIS_URL to the Redis pitcrew uses", file, addr)
	}
	return rdb, "the embedded Redis of the pitcrew running on this machine (" + addr + ")", nil
}
