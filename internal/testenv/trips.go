package testenv

import (
	"context"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// Trips counts what a Redis client sends, once added with AddHook: its
// round trips (a pipeline is one) and its commands (a pipeline's each).
type Trips struct{ RoundTrips, Commands atomic.Int64 }

// DialHook implements redis.Hook.
func (c *Trips) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook.
func (c *Trips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.RoundTrips.Add(1)
		c.Commands.Add(1)
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook implements redis.Hook.
func (c *Trips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.RoundTrips.Add(1)
		c.Commands.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}
