package evidence

import (
	"fmt"
	"regexp"
	"strings"
)

// The flaky rule about the code under test: a wait it does given more
// time.

// libTimeoutOption is an option that bounds a wait (timeout,
// recv_timeout, receive_timeout, pool_timeout...) with its value, nested
// option lists included.
var libTimeoutOption = regexp.MustCompile(`\b(\w*timeout):\s*([^,\])\s]+)`)

// defaultLibTimeout is what a client waits when given no timeout (hackney,
// Finch, GenServer.call): 5 s.
const defaultLibTimeout = 5_000

// libTimeouts: outside the tests (the code, and the configuration it
// runs with), a wait made longer in a block of the
// change: a call's timeout argument (GenServer.call, Task.await) read
// across the lines of the call, or an option named *timeout, raised or
// added above the 5 s clients default to. The slow path is given more
// time; what makes it slow is left alone.
func libTimeouts(c change) []Finding {
	if c.test || !(strings.HasSuffix(c.path, ".ex") || appConfig(c.path)) || c.before == nil && c.file.OldPath != "" {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		var was int64 = -1
		for _, l := range b.removed {
			for _, v := range c.timeoutsAt(c.before, l.Old, l.code) {
				was = max(was, v)
			}
		}
		for _, l := range b.added {
			for _, v := range c.timeoutsAt(c.after, l.New, l.code) {
				old := was
				if old < 0 {
					old = defaultLibTimeout
				}
				if v > old {
					out = append(out, c.finding("call-timeout-raised", Concern, l,
						fmt.Sprintf("a wait in the code under test now lasts up to %s (was %s): the slow path gets more time instead of a fix", ms(v), ms(old))))
					break
				}
			}
		}
	}
	return out
}

// appConfig is a configuration the application runs with outside the
// tests and development (config.exs, prod.exs, runtime.exs).
func appConfig(p string) bool {
	return configDir(p) && strings.HasSuffix(p, ".exs") && !strings.HasSuffix(p, "/test.exs") && !strings.HasSuffix(p, "/dev.exs")
}

// timeoutsAt reads the timeouts a line sets: the timeout argument of each
// await call whose lines hold it (from the side read as code), and the
// *timeout options written on it.
func (c change) timeoutsAt(s *source, n int, code string) []int64 {
	var out []int64
	for _, call := range s.callsAt(n, awaitCalls...) {
		pos := map[string]int{"Task.await": 1, "Task.await_many": 1, "Task.yield": 1, "Task.yield_many": 1}[call.name]
		if pos == 0 {
			pos = 2
		}
		if call.piped {
			pos--
		}
		if pos < len(call.args) && call.end == n {
			if v, ok := c.millis(call.args[pos]); ok {
				out = append(out, v)
			}
		}
	}
	for _, m := range libTimeoutOption.FindAllStringSubmatch(code, -1) {
		if v, ok := c.millis(m[2]); ok {
			out = append(out, v)
		}
	}
	return out
}
