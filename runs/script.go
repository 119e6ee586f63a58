package runs

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// scriptCall is one Lua script with its keys and arguments, run by
// runScripts; cmd holds its answer afterwards.
type scriptCall struct {
	script *redis.Script
	keys   []string
	args   []any
	cmd    *redis.Cmd
}

// runScripts runs calls in one round trip, in order. A script the Redis
// has not loaded (a new primary after a failover, SCRIPT FLUSH) did not
// run: it is run again on its own, with its body. It returns the first
// call's error, if any.
func (l *Ledger) runScripts(ctx context.Context, calls ...*scriptCall) error {
	_, _ = l.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, c := range calls {
			c.cmd = c.script.EvalSha(ctx, p, c.keys, c.args...)
		}
		return nil
	})
	var errs []error
	for _, c := range calls {
		if redis.HasErrorPrefix(c.cmd.Err(), "NOSCRIPT") {
			c.cmd = c.script.Run(ctx, l.rdb, c.keys, c.args...)
		}
		if err := c.cmd.Err(); err != nil && !errors.Is(err, redis.Nil) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}
