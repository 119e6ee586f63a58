package evidence

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The flaky rules about waits set outside a single call: for the whole
// suite, through options that stretch a process's timers, through a
// repository's configuration, and through a wait helper's defaults.

var (
	suiteKey   = hinted{regexp.MustCompile(`\b((?:assert|refute)_receive_timeout):\s*(.+?)\s*(?:[,)\]]\s*$|$)`), []string{"_receive_timeout"}}
	suitePut   = hinted{regexp.MustCompile(`\b(?:put_env\(\s*:ex_unit\s*,|Keyword\.put\(\s*\w+\s*,)\s*:((?:assert|refute)_receive_timeout)\s*,\s*(.+)\)`), []string{"_receive_timeout"}}
	envRead    = hinted{regexp.MustCompile(`\bSystem\.(get_env|fetch_env!?)\b`), []string{"System."}}
	intLiteral = regexp.MustCompile(`\b[0-9][0-9_]*\b`)
	// ciTimeoutVar is a CI variable a test suite reads its waits from
	// (ELIXIR_ASSERT_TIMEOUT, EXUNIT_TIMEOUT_MULTIPLIER, WALLABY_MAX_WAIT_TIME).
	ciTimeoutVar = hinted{regexp.MustCompile(`\b([A-Z_]*(TIMEOUT|MULTIPLIER|WAIT)[A-Z_]*)\s*[:=]\s*["']?([0-9][0-9_]*)`), []string{"TIMEOUT", "MULTIPLIER", "WAIT"}}
)

// suiteTimeouts: ExUnit's receive timeouts raised for every test: set
// above the value they replace (the default, 100 ms, when none), read from
// the environment (which CI then sets higher), or given such a variable in
// CI.
func suiteTimeouts(c change) []Finding {
	var out []Finding
	readsEnv := false
	for _, l := range c.added() {
		readsEnv = readsEnv || envRead.MatchString(l.Text)
	}
	for _, b := range c.blocks {
		before := map[string]int64{}
		for _, l := range b.removed {
			if key, value := suiteSetting(l); key != "" {
				if v, ok := c.suiteMillis(value); ok {
					before[key] = v
				}
			}
		}
		for _, l := range b.added {
			key, value := suiteSetting(l)
			if key == "" {
				if m := configTimeoutVar(c, l.Text); m != nil {
					out = append(out, c.finding("receive-timeout-raised", Concern, l,
						fmt.Sprintf("CI now sets %s to %s: the suite's receive timeout, raised where the tests run", m[1], m[3])))
				}
				continue
			}
			old, had := before[key]
			if !had {
				old = defaultReceiveTimeout
			}
			v, known := c.suiteMillis(value)
			switch {
			case known && v > old:
				out = append(out, c.finding("receive-timeout-raised", Concern, l,
					fmt.Sprintf("ExUnit's %s is raised to %s for every test: a longer wait, not a fix", key, ms(v))))
			case !known && (readsEnv || envRead.MatchString(value)):
				out = append(out, c.finding("receive-timeout-raised", Concern, l,
					fmt.Sprintf("ExUnit's %s is read from the environment: CI can raise it for every test, a longer wait, not a fix", key)))
			}
		}
	}
	return out
}

// suiteSetting reads a line that sets one of ExUnit's receive timeouts.
func suiteSetting(l Line) (key, value string) {
	if m := suiteKey.FindStringSubmatch(l.code); m != nil {
		return m[1], m[2]
	}
	if m := suitePut.FindStringSubmatch(l.code); m != nil {
		return m[1], m[2]
	}
	return "", ""
}

// suiteMillis reads a suite timeout: a timeout expression, or the largest
// number of a conditional one (if(ci?, do: 2_000, else: 100)).
func (c change) suiteMillis(value string) (int64, bool) {
	if v, ok := c.millis(value); ok {
		return v, true
	}
	return largestLiteral(value)
}

// largestLiteral is the largest integer written in an expression (an
// if(ci?, do: 2_000, else: 100) waits up to 2 s).
func largestLiteral(expr string) (int64, bool) {
	var best int64
	found := false
	for _, s := range intLiteral.FindAllString(expr, -1) {
		if n, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64); err == nil && (!found || n > best) {
			best, found = n, true
		}
	}
	return best, found
}

var (
	// timerKey names an option that sets how long a process waits, or how
	// fast a budget refills.
	timerKey = regexp.MustCompile(`(?i)(^|_)(ms|millis|msec|timeout|interval|debounce|delay|ttl|expir\w*|margin|seconds|secs|refill\w*|shutdown\w*|after|backoff|throttle\w*|rate|period|window|age|every|duration|lifetime|heartbeat|wait)($|_)|^queue_target$`)
	keyIf    = regexp.MustCompile(`\b([a-z_][a-z0-9_]*):\s*if\(?\s*(?:[^,()]|\([^()]*\))+,\s*(do:\s*[0-9][0-9_]*\s*,\s*else:\s*[0-9][0-9_]*)`)
	keyInt   = regexp.MustCompile(`\b([a-z_][a-z0-9_]*):\s*([0-9][0-9_]*|:timer\.\w+\([^)]*\)|:infinity)`)
	// appEnvInt is an application setting given by position:
	// config :app, :key, 50 or Application.put_env(:app, :key, 50).
	appEnvInt = hinted{regexp.MustCompile(`(?:\bput_env\(\s*:\w+\s*,|^\s*config\s+:\w+\s*,)\s*:([a-z_]\w*)\s*,\s*([0-9][0-9_]*|:timer\.\w+\([^)]*\)|:infinity)`), []string{"put_env", "config"}}
	// timeoutDefaults are the defaults of the timeouts a test
	// configuration sets most (Ecto's and DBConnection's): one set at or
	// below its default makes nothing wait longer.
	timeoutDefaults = map[string]int64{"timeout": 15_000, "pool_timeout": 5_000, "queue_target": 50, "queue_interval": 1_000, "ownership_timeout": 120_000}
)

// timerOptions: in tests and their configuration, an option that sets a
// process's timer (debounce_ms, auto_shutdown_ms, refill_ms, an expiry
// margin) made longer, a rate changed, or, in the test configuration, a
// timeout injected where there was none (busy_timeout: 10_000): the race
// is given more time, not fixed.
func timerOptions(c change) []Finding {
	config := testConfig(c.path) || c.testEnvConfig()
	if !c.test && !config {
		return nil
	}
	// What the file had, wherever in it: an option moved within the file
	// is not injected.
	before := map[string]int64{}
	for _, l := range c.removed() {
		for k, v := range c.timerValues(l) {
			before[k] = max(before[k], v)
		}
	}
	var out []Finding
	clocked := c.diff.sleepsGone && slices.ContainsFunc(c.added(), func(l Line) bool { return clockOption.MatchString(l.code) })
	for _, l := range c.added() {
		for k, v := range c.timerValues(l) {
			old, had := before[k]
			def, known := timeoutDefaults[k]
			raised, injected := had && (v > old || isRate(k) && v != old), !had && config && (!known || v > def)
			switch {
			case config && c.diff.sleepsGone && (raised || injected):
				out = append(out, c.finding("timer-stretched", Note, l, fmt.Sprintf("%s is longer in the tests' configuration, while the tests lose their sleeps: check that no test waits it out", k)))
			case clocked && raised:
				out = append(out, c.finding("timer-stretched", Note, l, fmt.Sprintf("%s went from %s to %s where the test now passes a clock and sleeps no more: check that no test waits it out", k, ms(old), ms(v))))
			case raised:
				out = append(out, c.finding("timer-stretched", Concern, l, fmt.Sprintf("%s went from %s to %s: the race is given more time, not fixed", k, ms(old), ms(v))))
			case injected:
				out = append(out, c.finding("timer-stretched", Concern, l, fmt.Sprintf("%s: %s is added to the tests' configuration: a longer wait for every test, not a fix", k, ms(v))))
			}
		}
	}
	return out
}

// clockOption passes the code under test the time it reads: a clock the
// test advances instead of sleeping.
var clockOption = regexp.MustCompile(`\b(clock|now|now_fn|time_fn|clock_fn|time_source|utc_now)\s*:\s*[^\s,)]`)

// sleepsOnlyRemoved reports whether the diff's tests lose sleeps and gain
// none: what replaced them (a fake clock advanced) does not wait.
func sleepsOnlyRemoved(changes []*change) bool {
	removed := 0
	for _, c := range changes {
		if !c.test {
			continue
		}
		for _, l := range c.all {
			if _, found, _ := c.sleepOf(l.code); found {
				if l.Kind == '+' {
					return false
				}
				if l.Kind == '-' {
					removed++
				}
			}
		}
	}
	return removed > 0
}

// isRate reports whether an option is a rate, which changes in either
// direction to stretch a race.
func isRate(key string) bool {
	return slices.Contains(strings.Split(strings.ToLower(key), "_"), "rate")
}

// timerValues reads the timer options on a line, in milliseconds or as
// written; the suite's receive timeouts and test tags have rules of their
// own.
func (c change) timerValues(l Line) map[string]int64 {
	out := map[string]int64{}
	// Every value read is a number, :timer's or :infinity.
	if tagLine.MatchString(l.code) || !strings.ContainsAny(l.code, "0123456789") && !strings.Contains(l.code, ":infinity") {
		return out
	}
	var found [][]string
	if keyValued(l.code) {
		found = keyInt.FindAllStringSubmatch(l.code, -1)
	}
	// key: if(ci?, do: 60_000, else: 15_000) waits up to its larger value.
	for _, m := range keyIf.FindAllStringSubmatch(l.code, strings.Count(l.code, "if")) {
		if v, ok := largestLiteral(m[2]); ok && timerKey.MatchString(m[1]) {
			found = append(found, []string{m[0], m[1], strconv.FormatInt(v, 10)})
		}
	}
	for _, m := range append(found, appEnvInt.FindAllStringSubmatch(l.code, -1)...) {
		if !timerKey.MatchString(m[1]) || strings.HasSuffix(m[1], "receive_timeout") {
			continue
		}
		if v, ok := c.millis(m[2]); ok {
			out[m[1]] = v
		}
	}
	return out
}

// keyValued reports whether s may hold what keyInt matches, a key's
// colon followed by a number or :timer's or :infinity, without running
// the regexp on every line.
func keyValued(s string) bool {
	for i := strings.IndexByte(s, ':'); i >= 0; {
		rest := strings.TrimLeft(s[i+1:], " \t")
		if rest != "" && (rest[0] >= '0' && rest[0] <= '9' || strings.HasPrefix(rest, ":timer.") || strings.HasPrefix(rest, ":infinity")) {
			return true
		}
		j := strings.IndexByte(s[i+1:], ':')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

var testEnv = regexp.MustCompile(`config_env\(\)\s*==\s*:test|Mix\.env\(\)\s*==\s*:test`)

// testEnvConfig reports whether the change is in a configuration file
// under a condition on the test environment (config/runtime.exs's if
// config_env() == :test), as far as the hunks show it.
func (c change) testEnvConfig() bool {
	if !strings.HasPrefix(c.path, "config/") {
		return false
	}
	for _, l := range c.all {
		if testEnv.MatchString(l.code) {
			return true
		}
	}
	return false
}

// testConfig is a configuration only the tests read: config/test.exs,
// test_helper.exs and the test support modules (a DataCase's sandbox).
func testConfig(p string) bool {
	return strings.HasSuffix(p, "config/test.exs") || strings.HasSuffix(p, "test_helper.exs") || strings.Contains(p, "test/support/")
}

// pollCalls wait for a condition; given a longer time than the call they
// replace, they wait longer.
var pollCalls = []string{"wait_until", "wait_for", "eventually", "assert_eventually", "poll_until", "until"}

// pollTimeouts: a polling helper called with more time than before.
func pollTimeouts(c change) []Finding {
	if !c.test {
		return nil
	}
	read := func(line string) (int64, bool) {
		for _, n := range pollCalls {
			if args, ok := callArgs(line, n); ok {
				if strings.HasPrefix(strings.TrimSpace(line), "def") {
					return 0, false
				}
				for _, a := range args {
					if v, ok := c.millis(a); ok {
						return v, true
					}
				}
				return 0, true // its own default
			}
		}
		return 0, false
	}
	// Only a call that replaces one is compared: a new poll, with whatever
	// time, is how a fixed sleep should be replaced.
	return longerWaits(c, read, Infinity, func(l Line, old, now int64) Finding {
		return c.finding("wait-default-raised", Concern, l, fmt.Sprintf("the wait now lasts up to %s: a longer wait for the condition, not a fix", ms(now)))
	})
}

// configTimeoutVar reads a timeout variable a CI configuration sets; nil
// elsewhere.
func configTimeoutVar(c change, line string) []string {
	if !c.ci {
		return nil
	}
	return ciTimeoutVar.FindStringSubmatch(line)
}
