package evidence

import (
	"fmt"
	"math"
	"regexp"
	"strings"
)

// The flaky rule about waiting for a message: a receive macro given more
// time than the one it replaces.

// receiveMacro waits for a message, ExUnit's assert_receive_timeout
// (100 ms) unless its call gives a timeout: at argument pos, which a
// call with fewer arguments leaves out. Phoenix's channel assertions wait
// the same way; Oban's assert_enqueued waits only when given a timeout.
type receiveMacro struct {
	name string
	pos  int   // -1: it takes no timeout
	def  int64 // the wait when the call gives none
}

var receiveMacroList = []receiveMacro{
	{"assert_receive", 1, defaultReceiveTimeout}, {"refute_receive", 1, defaultReceiveTimeout}, {"assert_received", -1, defaultReceiveTimeout},
	{"assert_push", 2, defaultReceiveTimeout}, {"refute_push", 2, defaultReceiveTimeout},
	{"assert_broadcast", 2, defaultReceiveTimeout}, {"refute_broadcast", 2, defaultReceiveTimeout},
	{"assert_reply", 3, defaultReceiveTimeout}, {"refute_reply", 3, defaultReceiveTimeout},
	{"assert_push_event", 3, defaultReceiveTimeout}, {"assert_redirect", 2, defaultReceiveTimeout}, {"assert_patch", 2, defaultReceiveTimeout},
	{"render_async", 1, defaultReceiveTimeout},
	{"assert_enqueued", 1, 0}, {"refute_enqueued", 1, 0},
	// Membrane.Testing.Assertions wait 2 s unless given a timeout.
	{"assert_pipeline_play", 1, membraneTimeout}, {"assert_pipeline_setup", 1, membraneTimeout},
	{"assert_sink_buffer", 3, membraneTimeout}, {"assert_sink_event", 3, membraneTimeout},
	{"assert_end_of_stream", 3, membraneTimeout}, {"assert_start_of_stream", 3, membraneTimeout},
	{"assert_pipeline_notified", 3, membraneTimeout},
}

const membraneTimeout = 2000

var keywordArg = regexp.MustCompile(`^[a-z_]\w*:\s`)

// unreadWait is a timeout a call names that pitcrew cannot read (@t
// defined outside the hunks, timeout()): given where the default was, it
// is a longer wait.
const unreadWait int64 = math.MaxInt64 - 1

// receiveMacros are the names of receiveMacroList.
var receiveMacros = func() []string {
	var names []string
	for _, m := range receiveMacroList {
		names = append(names, m.name)
	}
	return names
}()

const defaultReceiveTimeout = 100

// receiveTimeouts: a macro that waits for a message (receiveMacroList)
// waiting longer than the same macro it replaces, or a new one with a
// long explicit timeout, unless it replaces a sleep at least as long; and
// ExUnit's own receive timeouts raised for every test (suiteTimeouts).
func receiveTimeouts(c change) []Finding {
	var out []Finding
	slept := c.sleptBefore()
	waited := c.blockRemoved(func(l Line) bool { m, _, _ := c.receiveTimeout(l.code); return m != "" })
	// A block that removed a poll's call waited for the same event.
	polled := c.blockRemoved(func(l Line) bool { return pollCall.MatchString(l.code) || c.before != nil && c.pollAtOld(l) })
	blindWaitsGone := c.blindWaitsOnlyRemoved()
	type reading struct {
		macro string
		v     int64
		ok    bool
	}
	seen := map[string]reading{} // each line is read once, not once per macro
	for _, m := range receiveMacros {
		read := func(line string) (int64, bool) {
			r, done := seen[line]
			if !done {
				r.macro, r.v, r.ok = c.receiveTimeout(line)
				seen[line] = r
			}
			if r.macro == m {
				return r.v, r.ok
			}
			return 0, false
		}
		out = append(out, longerWaits(c, read, defaultReceiveTimeout, func(l Line, old, now int64) Finding {
			switch {
			case now <= slept[l.New]:
				return Finding{} // waits for the message where a sleep waited blindly
			case slept[l.New] > 0 && old == defaultReceiveTimeout && !waited[l.New]:
				// A new wait for a message where a sleep was: a handshake,
				// however long its bound (:infinity included), ends when
				// the message comes; the sleep always waited.
				return Finding{}
			case polled[l.New] && old == defaultReceiveTimeout && !waited[l.New]:
				return Finding{} // a wait for the message where a poll asked until it came: the same handshake
			case blindWaitsGone && old == defaultReceiveTimeout && !waited[l.New]:
				// The file's sleeps and polls are gone and a wait for a
				// message is new: a handshake, written once in a helper the
				// tests that slept or polled now call.
				return Finding{}
			case strings.HasPrefix(m, "refute_"):
				return Finding{} // waiting longer for what must not come only makes the test stricter
			case c.newTest(l) || c.file.OldPath == "":
				return Finding{} // a new test's or a new file's wait was chosen, not raised
			}
			return c.finding("receive-timeout-raised", Concern, l,
				fmt.Sprintf("the %s timeout went from %s to %s: waiting longer for the message hides why it is late", m, ms(old), ms(now)))
		})...)
	}
	return append(dropEmpty(out), suiteTimeouts(c)...)
}

// blindWaitsOnlyRemoved reports whether the change removes sleeps or
// polls from the file and adds none.
func (c change) blindWaitsOnlyRemoved() bool {
	removed := false
	for _, l := range c.removed() {
		_, slept, _ := c.sleepOf(l.code)
		removed = removed || slept || pollCall.MatchString(l.code) || c.before != nil && c.pollAtOld(l)
	}
	if !removed {
		return false
	}
	for _, l := range c.added() {
		if _, slept, _ := c.sleepOf(l.code); slept && !c.stubSleep(l) || pollCall.MatchString(l.code) || c.after != nil && c.pollAt(l) {
			return false
		}
	}
	return true
}

// sleptBefore maps each added line to the longest sleep its block removed.
func (c change) sleptBefore() map[int]int64 {
	out := map[int]int64{}
	for _, b := range c.blocks {
		var longest int64
		for _, l := range b.removed {
			if v, found, known := c.sleepOf(l.code); found && known {
				longest = max(longest, v)
			}
		}
		for _, l := range b.added {
			out[l.New] = longest
		}
	}
	return out
}

// blockRemoved maps each added line to whether its block removed a line
// that holds what a rule asks of it (a wait for a message, an await):
// what the line adds then replaces it, it is not new.
func (c change) blockRemoved(holds func(l Line) bool) map[int]bool {
	out := map[int]bool{}
	for _, b := range c.blocks {
		had := false
		for _, l := range b.removed {
			had = had || holds(l)
		}
		for _, l := range b.added {
			out[l.New] = had
		}
	}
	return out
}

func dropEmpty(in []Finding) []Finding {
	out := in[:0]
	for _, f := range in {
		if f.Rule != "" {
			out = append(out, f)
		}
	}
	return out
}

// receiveTimeout finds a receive macro on line and reads its timeout.
func (c change) receiveTimeout(line string) (macro string, ms int64, ok bool) {
	if !strings.Contains(line, "_receive") && !strings.Contains(line, "assert_") && !strings.Contains(line, "refute_") && !strings.Contains(line, "render_async") {
		return "", 0, false // every macro's name holds one of these
	}
	for _, m := range receiveMacroList {
		args, found := callArgs(line, m.name)
		if !found {
			continue
		}
		pos := m.pos
		switch {
		case m.name == "assert_reply" && len(args) == 3 && !strings.HasPrefix(args[1], ":"):
			pos = 2 // LiveView's assert_reply(view, payload, timeout)
		case (m.name == "assert_patch" || m.name == "assert_redirect") && len(args) == 2:
			if v, ok := c.millis(args[1]); ok {
				return m.name, v, true // (view, timeout)
			}
		}
		if pos < 0 || len(args) <= pos || keywordArg.MatchString(args[pos]) {
			return m.name, m.def, true // none given (assert_enqueued worker: W, args: a)
		}
		if ms, ok = c.millis(args[pos]); !ok && args[pos] != "" {
			return m.name, unreadWait, true
		}
		return m.name, ms, ok
	}
	return "", 0, false
}

var (
	afterClause   = hinted{regexp.MustCompile(`^\s*after\s+(.+?)\s*->`), []string{"after"}}
	afterAlone    = hinted{regexp.MustCompile(`^\s*after\s*$`), []string{"after"}}
	afterValue    = hinted{regexp.MustCompile(`^\s*(.+?)\s*->`), []string{"->"}}
	receiveAfter  = hinted{regexp.MustCompile(`\breceive\s+do\s+after\s+(.+?)\s*->`), []string{"receive"}}
	receiveOpened = hinted{regexp.MustCompile(`\breceive\s+do\s*$`), []string{"receive"}}
)

// receiveAfters: in tests, a receive whose only clause is after N (a
// sleep written otherwise); in tests and the code under test, an after
// clause given more time than the one it replaces.
func receiveAfters(c change) []Finding {
	if !elixirFile(c.path) || configFile(c.path) || strings.HasPrefix(c.path, "config/") {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		if !c.test {
			break
		}
		for i, l := range b.added {
			alone := receiveAfter.MatchString(l.code) ||
				receiveOpened.MatchString(l.code) && i+1 < len(b.added) && (afterClause.MatchString(b.added[i+1].code) || afterAlone.MatchString(b.added[i+1].code))
			if alone {
				out = append(out, c.finding("sleep-added", Concern, l, "a receive with only an after clause waits for a fixed time: a sleep written otherwise, not a fix"))
			}
		}
	}
	// An after clause's time may sit on the line below "after": read the
	// diff's lines as the rules see them, with that line's time.
	afterOf := map[string]string{}
	for i, l := range c.all {
		if !afterAlone.MatchString(l.code) {
			continue
		}
		// The line below it, on each side: the first removed and the
		// first added line, or the one both keep.
		seen := map[byte]bool{}
		for j := i + 1; j < len(c.all) && j <= i+maxJoined; j++ {
			next := c.all[j]
			if m := afterValue.FindStringSubmatch(next.code); m != nil && !seen[next.Kind] {
				afterOf[next.code] = m[1]
			}
			seen[next.Kind] = true
			if next.Kind == ' ' || seen['-'] && seen['+'] {
				break
			}
		}
	}
	read := func(line string) (int64, bool) {
		if m := afterClause.FindStringSubmatch(line); m != nil {
			return c.millis(m[1])
		}
		if v, ok := afterOf[line]; ok {
			return c.millis(v)
		}
		return 0, false
	}
	return append(out, longerWaits(c, read, Infinity, func(l Line, old, now int64) Finding {
		return c.finding("receive-timeout-raised", Concern, l, fmt.Sprintf("the receive now waits up to %s (was %s): waiting longer for the message hides why it is late", ms(now), ms(old)))
	})...)
}

// narrowedRefutes: in tests, a refutation that waits less for a message
// that must not come than the one it replaces (a shorter timeout, or
// refute_received, which does not wait at all): the late message the
// test was written to catch now passes it.
func narrowedRefutes(c change) []Finding {
	if !c.test {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		var was []refuteWait
		for _, l := range b.removed {
			if r, ok := c.refuteWaitOf(l.code); ok {
				was = append(was, r)
			}
		}
		for _, l := range b.added {
			now, ok := c.refuteWaitOf(l.code)
			if !ok {
				continue
			}
			for _, w := range was {
				if w.pattern == now.pattern && now.ms < w.ms {
					out = append(out, c.finding("refute-narrowed", Concern, l, fmt.Sprintf("the %s window went from %s to %s: a late message the test must not get now passes it", w.macro, ms(w.ms), ms(now.ms))))
					break
				}
			}
		}
	}
	return out
}

// refuteWait is a refutation of a message: its pattern and how long it
// waits for the message (0 for refute_received).
type refuteWait struct {
	macro, pattern string
	ms             int64
}

func (c change) refuteWaitOf(line string) (refuteWait, bool) {
	if args, ok := callArgs(line, "refute_received"); ok && len(args) > 0 {
		return refuteWait{"refute_received", squashSpace(args[0]), 0}, true
	}
	m, v, ok := c.receiveTimeout(line)
	if !ok || !strings.HasPrefix(m, "refute_") || v == unreadWait {
		return refuteWait{}, false
	}
	args, _ := callArgs(line, m)
	if len(args) == 0 {
		return refuteWait{}, false
	}
	return refuteWait{m, squashSpace(args[0]), v}, true
}
