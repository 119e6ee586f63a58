package evidence

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Siblings: the tests elsewhere in a suite that share the cause a fix
// addressed, so a reviewer sees what will flake next. The cause is read
// from the fix's diff (CauseOf); the suite's test modules are read as code
// (FindSiblings).

// StateKey is one piece of global state: what kind (Application env, a
// Mox mock in global mode, a named ETS table, a :persistent_term key) and
// its key as written (":hexpm, :cdn_url", "Hexpm.HTTPMock", ":cache").
type StateKey struct {
	Kind string `json:"kind"`
	Key  string `json:"key"`
}

// Cause is what a fix shows it addressed: global state its tests shared,
// a sleep standing in for an event, the wall clock read in a test.
type Cause struct {
	State []StateKey `json:"state,omitempty"`
	Wait  bool       `json:"wait,omitempty"`
	// Receive says the fix removed a wait for a message longer than
	// ExUnit's 100 ms (a raised receive timeout).
	Receive bool `json:"receive,omitempty"`
	Clock   bool `json:"clock,omitempty"`
}

// Empty reports whether the fix shows no cause a scan can look for.
func (c Cause) Empty() bool { return len(c.State) == 0 && !c.Wait && !c.Receive && !c.Clock }

// longReceive is the wait for a message from which a test's receive
// counts as the same wait shape as a raised timeout.
const longReceive = 1000

// Sibling is a test that shares the cause: where, and why. Rank orders
// them: 1 the same state written in another async module, 2 the same
// state read from an async module, 3 the same wait or time shape.
type Sibling struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Test string `json:"test,omitempty"`
	// TestLine is where the test is defined (0 outside any test: a
	// module's setup): file:TestLine runs it.
	TestLine int    `json:"test_line,omitempty"`
	Rank     int    `json:"rank"`
	Why      string `json:"why"`
}

var (
	moxGlobal  = regexp.MustCompile(`\bset_mox_global\b`)
	asyncTrueU = regexp.MustCompile(`\buse\s+[\w.]+,.*\basync:\s*true\b`)
	clockCalls = []string{"DateTime.utc_now", "NaiveDateTime.utc_now", "Date.utc_today", "System.system_time", "System.os_time", ":os.system_time", ":erlang.system_time", "Time.utc_now"}
	// asyncWork starts or awaits something outside the test process.
	asyncWork = append(append([]string{}, concurrentCalls...), "send", "GenServer.cast", "Phoenix.PubSub.broadcast", "PubSub.broadcast", "Oban.insert", "Process.send_after")
)

// CauseOf reads the cause a fix addressed from its diff: the global state
// its removed lines touched (also what a test module made to run alone
// touches at the base, base[path] when given), a sleep removed from a
// test, the wall clock no longer read in a test.
func CauseOf(d Diff, base map[string]string) Cause {
	var c Cause
	add := func(k StateKey) {
		if !slices.Contains(c.State, k) {
			c.State = append(c.State, k)
		}
	}
	for _, f := range d.Files {
		if !elixirFile(f.Path()) {
			continue
		}
		ch := newFileChange(f, wholeDocs{})
		var removed []string
		for _, l := range ch.removed() {
			removed = append(removed, withStrings(l.Text))
		}
		if len(asyncOff(ch)) > 0 {
			if whole, ok := base[f.OldPath]; ok {
				removed = append(removed, codeLines(whole)...)
			}
		}
		for _, k := range stateIn(removed) {
			add(k)
		}
		if slices.ContainsFunc(removed, moxGlobal.MatchString) {
			// Global mode dropped: the mocks the module uses, wherever in it.
			var module []string
			for _, l := range ch.all {
				module = append(module, withStrings(l.Text))
			}
			if whole, ok := base[f.OldPath]; ok {
				module = append(module, codeLines(whole)...)
			}
			for _, k := range stateIn(module) {
				if k.Kind == "mox-global" {
					add(k)
				}
			}
		}
		if !ch.test {
			continue
		}
		for _, l := range ch.removed() {
			if _, found, _ := ch.sleepOf(l.code); found {
				c.Wait = true
			}
			if _, v, ok := ch.receiveTimeout(l.code); ok && v > defaultReceiveTimeout && v != unreadWait {
				c.Receive = true
			}
			for _, n := range clockCalls {
				c.Clock = c.Clock || indexWord(l.code, n) >= 0
			}
		}
	}
	return c
}

// codeLines is a file's lines without their comments, strings kept (a
// PubSub topic is one).
func codeLines(src string) []string {
	lines := strings.Split(src, "\n")
	for i := range lines {
		lines[i] = withStrings(lines[i])
	}
	return lines
}

// MaxSiblings bounds the siblings reported; the rest are counted.
const MaxSiblings = 20

// FindSiblings reads each test module of files (path to content) as code
// and returns the tests that share cause, ranked, at most MaxSiblings,
// with how many more there were. skip names the files the fix changed.
func FindSiblings(cause Cause, files map[string]string, skip []string) (found []Sibling, more int) {
	if cause.Empty() {
		return nil, 0
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		if strings.HasSuffix(p, "_test.exs") && !slices.Contains(skip, p) {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		found = append(found, siblingsIn(cause, p, files[p])...)
	}
	sort.SliceStable(found, func(i, j int) bool {
		if found[i].Rank != found[j].Rank {
			return found[i].Rank < found[j].Rank
		}
		return found[i].File < found[j].File || found[i].File == found[j].File && found[i].Line < found[j].Line
	})
	if len(found) > MaxSiblings {
		return found[:MaxSiblings], len(found) - MaxSiblings
	}
	return found, 0
}

// siblingsIn finds, in one test module, what shares the cause: once per
// test and reason.
func siblingsIn(cause Cause, path, content string) []Sibling {
	lines := codeLines(content)
	async := false
	for _, l := range lines {
		async = async || asyncTrueU.MatchString(l)
	}
	src := parseSource([]byte(content))
	testName := func(n int) (string, int) {
		if t := src.testAt(n); t != nil {
			return strings.TrimPrefix(t.name, "/"), t.start
		}
		return "", 0
	}
	var out []Sibling
	seen := map[string]bool{}
	note := func(n, rank int, why string) {
		name, at := testName(n)
		k := fmt.Sprintf("%s\x00%d", name, rank)
		if seen[k] {
			return
		}
		seen[k] = true
		out = append(out, Sibling{File: path, Line: n, Test: name, TestLine: at, Rank: rank, Why: why})
	}
	if async {
		written := stateIn(lines)
		for _, k := range cause.State {
			rank, verb, match := 2, "reads", reads
			if slices.Contains(written, k) {
				rank, verb, match = 1, "writes", writes
			}
			for i, l := range lines {
				if match(l, k) {
					note(i+1, rank, fmt.Sprintf("%s %s (%s) in a module that runs async", verb, k.Key, k.Kind))
				}
			}
		}
	}
	for ti := range src.tests {
		var sleepAt, clockAt int
		asserted, asyncDone := false, false
		for _, c := range src.calls {
			if c.test != ti {
				continue
			}
			switch {
			case slices.Contains(sleepCalls, c.name) && !c.inFn && sleepAt == 0:
				sleepAt = c.start
			case slices.Contains(clockCalls, c.name) && clockAt == 0:
				clockAt = c.start
			case slices.Contains(asyncWork, c.name):
				asyncDone = true
			case assertionCall(c.name) && (sleepAt > 0 && c.start > sleepAt || clockAt > 0):
				asserted = true
			}
		}
		if cause.Wait && sleepAt > 0 && asserted && asyncDone {
			note(sleepAt, 3, "a sleep stands in for an asynchronous event before an assertion")
		}
		if cause.Clock && clockAt > 0 && asserted {
			note(clockAt, 3, "reads the wall clock in a test that asserts on time")
		}
		if cause.Receive {
			for _, c := range src.calls {
				if c.test == ti {
					if v := receiveWait(c); v >= longReceive {
						note(c.start, 3, fmt.Sprintf("waits up to %s for a message", ms(v)))
						break
					}
				}
			}
		}
	}
	return out
}

// receiveWait is the time a receive macro's call waits for its message,
// as written (0 when it names none, or not one pitcrew reads).
func receiveWait(c callSite) int64 {
	for _, m := range receiveMacroList {
		if m.name != c.name || m.pos < 0 || m.pos >= len(c.args) {
			continue
		}
		if v, ok := (change{}).millis(c.args[m.pos]); ok && v != unreadWait {
			return v
		}
	}
	return 0
}
