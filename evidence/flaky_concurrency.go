package evidence

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The flaky rule about a test that raced things: made sequential, or
// made to race fewer.

// concurrentCalls start work that runs at the same time as the test.
var concurrentCalls = []string{"Task.async_stream", "Task.async", "Task.start", "Task.start_link", "Task.Supervisor.async", "Task.Supervisor.async_nolink",
	"Task.Supervisor.async_stream", "Task.Supervisor.start_child", "spawn", "spawn_link", "spawn_monitor", "Flow.from_enumerable",
	"start_supervised", "start_supervised!", "GenServer.start", "GenServer.start_link", "Agent.start_link", "DynamicSupervisor.start_child"}

var (
	// oneCase runs the suite one module at a time.
	oneCase        = hinted{regexp.MustCompile(`\bmax_cases:\s*[1-2]\b|--max-cases[= ]+[1-2]\b|\bmix\s+test\b[^#]*\s--trace\b|^\s*(test|"test"):\s*.*--trace\b`), []string{"max_cases", "--max-cases", "--trace"}}
	rangeEnd       = regexp.MustCompile(`\.\.\s*([0-9][0-9_]*)`)
	maxConcurrency = regexp.MustCompile(`\bmax_concurrency:\s*([0-9][0-9_]*)`)
)

func concurrent(line string) bool { return concurrentIn(line) != "" }

// concurrentIn is the first of concurrentCalls the line makes, "" for
// none.
func concurrentIn(line string) string {
	for _, n := range concurrentCalls {
		if indexWord(line, n) >= 0 {
			return n
		}
	}
	return ""
}

// concurrencyReduced: in a test, code that ran things concurrently
// replaced by code that runs them one after another, or made to start
// fewer of them: the race the test exists to find no longer happens.
func concurrencyReduced(c change) []Finding {
	var out []Finding
	for _, l := range c.added() {
		if (c.test || c.ci || strings.HasSuffix(c.path, "mix.exs")) && oneCase.MatchString(l.Text) && !strings.HasPrefix(strings.TrimSpace(l.Text), "#") {
			out = append(out, c.finding("concurrency-reduced", Concern, l, "the suite now runs fewer test modules at once (--trace: one test at a time): the tests no longer race each other, the flake is hidden"))
		}
	}
	if !c.test {
		return out
	}
	// What the change starts, counted over all its lines: a start moved
	// to another place of the file (after a setup it now needs) is kept.
	started := map[string]int{}
	for _, l := range c.all {
		if n := concurrentIn(l.code); n != "" && l.Kind != ' ' {
			started[n] += map[byte]int{'+': 1, '-': -1}[l.Kind]
		}
	}
	for _, b := range c.blocks {
		var raced []Line
		for _, l := range b.removed {
			if concurrent(l.code) {
				raced = append(raced, l)
			}
		}
		if len(raced) == 0 {
			continue
		}
		var still []Line
		for _, l := range b.added {
			if concurrent(l.code) {
				still = append(still, l)
			}
		}
		slept := false
		for _, l := range b.removed {
			_, found, _ := c.sleepOf(l.code)
			slept = slept || found
		}
		// A task and a sleep to wait for it, made a direct call, is a fix;
		// so is a test that still starts as many, read as code (moved).
		if len(still) == 0 && len(b.added) > 0 && !slept && started[concurrentIn(raced[0].code)] < 0 && !c.testKeeps(raced[0], concurrentCall) && !c.fixtureStarted(raced[0]) {
			out = append(out, c.finding("concurrency-reduced", Concern, raced[0], "the test no longer runs this concurrently: the race it exists to find cannot happen, the flake is hidden"))
			continue
		}
		was, now := c.racers(b.removed), c.racers(b.added)
		if len(still) > 0 && was > 0 && now > 0 && now < was {
			out = append(out, c.finding("concurrency-reduced", Concern, still[0], fmt.Sprintf("the test races %d instead of %d: fewer at once makes the flake rarer, not fixed", now, was)))
		}
	}
	return out
}

// racers is how many things the lines start at once: the largest range
// end or max_concurrency among them, 0 when none is written.
func (c change) racers(lines []Line) int64 {
	var n int64
	for _, l := range lines {
		for _, re := range []*regexp.Regexp{rangeEnd, maxConcurrency} {
			for _, m := range re.FindAllStringSubmatch(l.code, -1) {
				if v, ok := c.millis(m[1]); ok && v > n {
					n = v
				}
			}
		}
	}
	return n
}

// processStarts start one process: a fixture, unless a test starts them
// to race each other.
var processStarts = []string{"start_supervised", "start_supervised!", "GenServer.start", "GenServer.start_link", "Agent.start_link", "DynamicSupervisor.start_child"}

// fixtureStarted reports whether a removed line starts one process
// outside any test (a setup's collector, a helper's server), read at the
// base: what it served is not a race the test makes.
func (c change) fixtureStarted(l Line) bool {
	return c.before != nil && !c.before.fragment && slices.Contains(processStarts, concurrentIn(l.code)) && c.before.testAt(l.Old) == nil
}
