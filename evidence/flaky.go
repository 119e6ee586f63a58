package evidence

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// rule reads one file's change and reports what it finds.
type rule func(c change) []Finding

// flakyRules are what a flaky-test fix must not do: wait longer, retry,
// skip, or test less. The fix is the cause (shared state, ordering, a
// missing sync point), not a disguise.
var flakyRules = []rule{sleeps, receiveTimeouts, receiveAfters, attributeTimeouts, callTimeouts, tagTimeouts, timerOptions, waitDefaults, pollTimeouts,
	deltaSlack, boundsDropped, concurrencyReduced, retries, rescues, skips, exclusions,
	deletedTests, deletedAssertions, weakenedAssertions, narrowedRefutes, asyncOff, templatesMadeSerial, spannedReceiveTimeouts, ciForgives, ciRetries, matrixAllowedToFail, testsGatedByEvent, pullRequestsDropped, matrixExcluded, includesDropped, partitionsDropped, testTimeoutsRaised, propertiesShrunk, doctestsNarrowed, errorsSwallowed, tagsExcludedBySuite, exclusionWidened, libTimeouts,
	switchedOff, flakyTags, conditionalAssertions, refutedInstead, matchesLoosened, expectationsDropped, seedsFixed}

// sleepCalls are the calls that wait a fixed time.
var sleepCalls = []string{"Process.sleep", ":timer.sleep"}

// sleeps: a sleep added, or one made longer. A sleep kept, moved or
// shortened is not reported; one whose time cannot be read (a variable,
// a pipe) counts as added when no sleep was removed for it. A sleep
// between the tries of a polling helper is how it polls (retries notes
// the helper).
func sleeps(c change) []Finding {
	var before []int64
	removed := 0
	for _, l := range c.removed() {
		if v, found, known := c.sleepOf(l.code); found {
			removed++
			if known {
				before = append(before, v)
			}
		}
	}
	var out []Finding
	polls := map[int]bool{}
	for _, b := range c.blocks {
		if c.pollingHelper(b) {
			for _, l := range b.added {
				polls[l.New] = true
			}
		}
	}
	for _, l := range c.added() {
		v, found, known := c.sleepOf(l.code)
		if !found {
			continue
		}
		old, had := largest(before)
		switch {
		case polls[l.New]:
			continue // the helper's definition is noted (retries)
		case c.stubSleep(l):
			continue // a stub made slow, or a process kept alive: the test does not wait on it
		case removed == 0:
			out = append(out, c.finding("sleep-added", Concern, l, "a sleep waits for a fixed time instead of for the event the test needs: a disguised retry, not a fix"))
		case known && had && v > old:
			removed--
			out = append(out, c.finding("sleep-lengthened", Concern, l, fmt.Sprintf("the sleep grew from %s to %s: a longer wait, not a fix", ms(old), ms(v))))
		default:
			removed--
		}
	}
	return out
}

// sleepOf finds a sleep on a line and reads its time.
func (c change) sleepOf(line string) (ms int64, found, known bool) {
	for _, n := range sleepCalls {
		if args, ok := callArgs(line, n); ok {
			arg := ""
			if len(args) > 0 && !piped(line, n) {
				arg = args[0]
			}
			ms, known = c.millis(arg)
			return ms, true, known
		}
	}
	return 0, false, false
}

// piped reports whether the call of name on line takes its first
// argument from a pipe (x |> name(...)).
func piped(line, name string) bool {
	i := indexWord(line, name)
	return i > 0 && strings.HasSuffix(strings.TrimSpace(line[:i]), "|>")
}

// longerWaits reports each added line whose value (read: a wait, a
// tolerance) is larger than the largest of the lines it replaces, or than
// def when they had none (def -1: any value on a new line; Infinity: only
// a line that replaces one).
func longerWaits[T int64 | float64](c change, read func(line string) (T, bool), def T, report func(l Line, old, now T) Finding) []Finding {
	var out []Finding
	for _, b := range c.blocks {
		var before []T
		for _, l := range b.removed {
			if v, ok := read(l.code); ok {
				before = append(before, v)
			}
		}
		for _, l := range b.added {
			v, ok := read(l.code)
			if !ok {
				continue
			}
			old, had := largest(before)
			if !had {
				old = def
			}
			if v > old {
				out = append(out, report(l, old, v))
			}
		}
	}
	return out
}

func largest[T int64 | float64](vs []T) (T, bool) {
	if len(vs) == 0 {
		return 0, false
	}
	return slices.Max(vs), true
}

// callTimeout finds a call of one of names in line and reads its argument
// at position pos (-1: the last) as milliseconds; def is the value when
// the call leaves it out (-1: the argument is required). ok is false when
// no such call is on the line or its value cannot be read.
func (c change) callTimeout(line string, names []string, pos int, def int64) (int64, bool) {
	for _, n := range names {
		args, found := callArgs(line, n)
		if !found {
			continue
		}
		i := pos
		if i < 0 {
			i = len(args) - 1
		}
		if i >= len(args) || args[i] == "" {
			return def, def >= 0
		}
		return c.millis(args[i])
	}
	return 0, false
}

var keywordValue = regexp.MustCompile(`\b([a-z_]+):\s*([^,\])]+)`)

// keyword reads key: VALUE on a line as milliseconds.
func (c change) keyword(line, key string) (int64, bool) {
	for _, m := range keywordValue.FindAllStringSubmatch(line, -1) {
		if m[1] == key {
			return c.millis(m[2])
		}
	}
	return 0, false
}

// attributeTimeouts: a module attribute that a wait reads (its name says
// timeout, wait, sleep or delay, or the diff passes it to a wait) made
// larger; in a test, one that names a bound on time or tries made larger,
// or one that names how many run at once made smaller.
func attributeTimeouts(c change) []Finding {
	var out []Finding
	for _, b := range c.blocks {
		before := map[string]int64{}
		for _, l := range b.removed {
			if m := attrDef.FindStringSubmatch(l.code); m != nil {
				if v, ok := c.millis(m[2]); ok {
					before[m[1]] = v
				}
			}
		}
		for _, l := range b.added {
			m := attrDef.FindStringSubmatch(l.code)
			if m == nil {
				continue
			}
			old, had := before[m[1]]
			v, ok := c.millis(m[2])
			switch {
			case !had || !ok:
			case v > old && c.waitAttribute(m[1]):
				out = append(out, c.finding("timeout-attribute-raised", Concern, l,
					fmt.Sprintf("@%s, which a wait reads, went from %s to %s: a longer wait, not a fix", m[1], ms(old), ms(v))))
			case v > old && c.test && slackWords.MatchString(m[1]):
				out = append(out, c.finding("timeout-attribute-raised", Concern, l,
					fmt.Sprintf("@%s went from %d to %d: the test allows more time or more tries, not a fix", m[1], old, v)))
			case v > old && !c.test && retryWords.MatchString(m[1]) && c.after.sleeps():
				out = append(out, c.finding("timeout-attribute-raised", Concern, l,
					fmt.Sprintf("@%s went from %d to %d in code that sleeps between tries: it retries longer, the failure is waited out, not fixed", m[1], old, v)))
			case v < old && c.test && raceWords.MatchString(m[1]):
				out = append(out, c.finding("concurrency-reduced", Concern, l,
					fmt.Sprintf("@%s went from %d to %d: the test races fewer at once, the flake is rarer, not fixed", m[1], old, v)))
			}
		}
	}
	return out
}

var (
	waitWords = regexp.MustCompile(`(?i)timeout|wait|sleep|delay|interval`)
	// slackWords name, in a test, a bound on time or tries; raceWords how
	// many things a test runs at once.
	slackWords = regexp.MustCompile(`(?i)(^|_)(ms|millis|duration|elapsed|time|attempts|retries|tries|tolerance|slack|margin|max_\w+)($|_)`)
	// retryWords name, in the code under test, how often or how long it
	// tries again.
	retryWords = regexp.MustCompile(`(?i)(^|_)(attempts|retries|tries|retry|backoff)($|_)`)
	raceWords  = regexp.MustCompile(`(?i)concurren|parallel|(^|_)(workers|tasks|processes|clients|callers|racers)($|_)`)
)

func (c change) waitAttribute(name string) bool {
	if waitWords.MatchString(name) || c.after.passesToWait("@"+name) {
		return true
	}
	for _, l := range c.all {
		line := l.code
		if !strings.Contains(line, "@"+name) {
			continue
		}
		for _, w := range append(append(append([]string{}, receiveMacros...), sleepCalls...), awaitCalls...) {
			if indexWord(line, w) >= 0 {
				return true
			}
		}
	}
	return false
}

// passesToWait reports whether a wait call of the file (a receive macro,
// a sleep, an await) takes expr among its arguments: a module attribute
// read far from the lines the diff shows. False for a side not read.
func (s *source) passesToWait(expr string) bool {
	if s == nil {
		return false
	}
	for _, names := range [][]string{receiveMacros, sleepCalls, awaitCalls} {
		for _, n := range names {
			for _, i := range s.named[n] {
				for _, a := range s.calls[i].args {
					if indexWord(a, expr) >= 0 {
						return true
					}
				}
			}
		}
	}
	return false
}

// awaitCalls take a timeout (5 s by default) as their last argument.
var awaitCalls = []string{"Task.await", "Task.await_many", "Task.yield", "Task.yield_many", "GenServer.call", ":gen_server.call", ":gen_statem.call", "Agent.get", "Agent.update"}

const defaultCallTimeout = 5000

// callTimeouts: in tests, a Task.await or GenServer.call given more time
// than before (5 s when left out).
func callTimeouts(c change) []Finding {
	if !c.test {
		return nil
	}
	slept := c.sleptBefore()
	waited := c.blockRemoved(func(l Line) bool { _, ok := c.awaitTimeout(l.code); return ok })
	out := longerWaits(c, c.awaitTimeout, defaultCallTimeout, func(l Line, old, now int64) Finding {
		if slept[l.New] > 0 && !waited[l.New] {
			return Finding{} // awaiting the task where a sleep waited blindly: it ends when the task does
		}
		return c.finding("call-timeout-raised", Concern, l,
			fmt.Sprintf("the call now waits up to %s (was %s): the test gives a slow or stuck process more time instead of finding why", ms(now), ms(old)))
	})
	return dropEmpty(out)
}

// awaitTimeout reads the timeout of an await call on line; a call with
// fewer arguments than its timeout position uses the default.
func (c change) awaitTimeout(line string) (int64, bool) {
	positions := map[string]int{"Task.await": 1, "Task.await_many": 1, "Task.yield": 1, "Task.yield_many": 1, "GenServer.call": 2, ":gen_server.call": 2, ":gen_statem.call": 2, "Agent.get": 2, "Agent.update": 2}
	for _, n := range awaitCalls {
		args, found := callArgs(line, n)
		if !found {
			continue
		}
		pos := positions[n]
		if piped(line, n) {
			pos--
		}
		if pos >= len(args) {
			return defaultCallTimeout, true
		}
		return c.millis(args[pos])
	}
	return 0, false
}

var tagLine = regexp.MustCompile(`^\s*@(tag|moduletag|describetag)\s`)

const defaultTestTimeout = 60_000

// tagTimeouts: a test's timeout raised by @tag, @moduletag or
// @describetag, or for every test by ExUnit's configuration (ExUnit gives
// a test 60 s).
func tagTimeouts(c change) []Finding {
	read := func(line string) (int64, bool) {
		if tagLine.MatchString(line) || strings.Contains(line, "ExUnit.") || strings.Contains(line, ":ex_unit") {
			return c.keyword(line, "timeout")
		}
		return 0, false
	}
	return longerWaits(c, read, defaultTestTimeout, func(l Line, old, now int64) Finding {
		return c.finding("test-timeout-raised", Concern, l, fmt.Sprintf("the test may now run for %s (was %s): more time, not a fix", ms(now), ms(old)))
	})
}
