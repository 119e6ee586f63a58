package testenv

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// RedisIsEmbedded says whether Redis returns an in-process miniredis
// (REDIS_URL unset), as pitcrew runs with REDIS_URL unset: an app built on
// it in a test is to be told so (server.Options.EmbeddedRedis), as
// cmd/pitcrew tells it, since miniredis answers no INFO replication.
func RedisIsEmbedded() bool { return os.Getenv("REDIS_URL") == "" }

// Redis returns a client on an empty Redis database that belongs to the
// test until it ends. With REDIS_URL set (as in CI) it is one of databases
// 1–15 of that server, leased through a key in database 0 so test binaries
// running in parallel never share one; without it, an in-process miniredis.
func Redis(t testing.TB) *redis.Client {
	t.Helper()
	url := os.Getenv("REDIS_URL")
	if RedisIsEmbedded() {
		m := miniredis.RunT(t)
		c := redis.NewClient(&redis.Options{Addr: m.Addr()})
		t.Cleanup(func() { c.Close() })
		return c
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	ctx := context.Background()
	admin := redis.NewClient(opts)
	defer admin.Close()
	host, _ := os.Hostname()
	owner := fmt.Sprintf("%s/%d/%s", host, os.Getpid(), t.Name())
	deadline := time.Now().Add(2 * time.Minute)
	for {
		for db := 1; db <= 15; db++ {
			lease := fmt.Sprintf("pitcrew-test:db-lease:%d", db)
			ok, err := admin.SetNX(ctx, lease, owner, 10*time.Minute).Result()
			if err != nil {
				t.Fatalf("redis at REDIS_URL: %v", err)
			}
			if !ok {
				continue
			}
			o := *opts
			o.DB = db
			c := redis.NewClient(&o)
			if err := c.FlushDB(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				c.FlushDB(ctx)
				c.Close()
				r := redis.NewClient(opts)
				r.Del(ctx, lease)
				r.Close()
			})
			return c
		}
		if time.Now().After(deadline) {
			t.Fatal("no free Redis test database for 2 minutes")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
