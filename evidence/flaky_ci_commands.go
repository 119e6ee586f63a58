package evidence

import (
	"fmt"
	"regexp"
	"strings"
)

// A test command can run less or wait longer while it still reads as the
// same command: a tag it included dropped, a --timeout raised on a line a
// backslash continues.

// includesDropped: a test command (in CI, a script or a mix alias) that
// ran the tests of a tag the suite excludes (--include integration, --only
// slow) no longer names it, and nothing the diff adds or the file keeps
// runs them: those tests no longer run. A tag the diff stops excluding in
// test_helper.exs runs without being named.
func includesDropped(c change) []Finding {
	alias := strings.HasSuffix(c.path, "mix.exs")
	if !configFile(c.path) && !alias {
		return nil
	}
	runs := func(text string) bool {
		return testCommand.MatchString(text) || alias && strings.Contains(text, `"test`)
	}
	lines, _ := c.headView()
	var out []Finding
	for _, b := range c.blocks {
		var gone []string
		for _, l := range b.removed {
			if runs(l.Text) {
				for _, m := range tagRun.FindAllStringSubmatch(l.Text, -1) {
					gone = append(gone, m[1])
				}
			}
		}
		for _, l := range b.added {
			if len(gone) == 0 || !runs(l.Text) {
				continue
			}
			for _, t := range gone {
				if !runsTag(l.Text, t) && !c.diff.runTags[t] && !c.diff.unexcluded[t] && !headRunsTag(lines, t) {
					out = append(out, c.finding("tag-excluded", Concern, l, "the tests tagged "+t+" are no longer included here, and nothing else runs them: the flaky test among them no longer runs"))
					gone = nil
					break
				}
			}
		}
	}
	return out
}

// runsTag reports whether a command includes the tests of tag t.
func runsTag(text, t string) bool {
	for _, m := range tagRun.FindAllStringSubmatch(text, -1) {
		if m[1] == t {
			return true
		}
	}
	return false
}

// headRunsTag reports whether a line of the file at head runs tag t.
func headRunsTag(lines []Line, t string) bool {
	for _, l := range lines {
		if runsTag(l.Text, t) {
			return true
		}
	}
	return false
}

// timeoutFlag is a command's --timeout.
var timeoutFlag = regexp.MustCompile(`--timeout[= ]+([0-9][0-9_]*)`)

// testTimeoutsRaised: a test command's --timeout raised, the command read
// at head whole over the lines a backslash continues (a Makefile recipe,
// a script): every test is given more time.
func testTimeoutsRaised(c change) []Finding {
	if !configFile(c.path) && !strings.HasSuffix(c.path, "Makefile") {
		return nil
	}
	timeout := func(lines []Line, i int) int64 {
		cmd := shellCommand(lines, i)
		if m := testTimeout.FindStringSubmatch(cmd); m != nil {
			v, _ := largestLiteral(m[1])
			return v
		}
		return 0
	}
	after, afterAt := c.headView()
	var out []Finding
	for _, b := range c.blocks {
		var old int64
		for _, l := range b.removed {
			if m := timeoutFlag.FindStringSubmatch(l.Text); m != nil {
				v, _ := largestLiteral(m[1])
				old = max(old, v)
			}
		}
		for _, l := range b.added {
			if now := timeout(after, afterAt[l.New]); old > 0 && now > old && strings.Contains(l.Text, "--timeout") {
				out = append(out, c.finding("test-timeout-raised", Concern, l, fmt.Sprintf("every test is given more time (--timeout %d, was %d): a longer wait, not a fix", now, old)))
			}
		}
	}
	return out
}

// shellCommand is the command line i belongs to, joined over the lines a
// trailing backslash continues.
func shellCommand(lines []Line, i int) string {
	start := i
	for start > 0 && i-start < maxJoined && strings.HasSuffix(strings.TrimRight(lines[start-1].Text, " \t"), "\\") {
		start--
	}
	var b strings.Builder
	for j := start; j < len(lines) && j-start < maxJoined; j++ {
		text := strings.TrimRight(lines[j].Text, " \t")
		b.WriteString(strings.TrimSuffix(text, "\\") + " ")
		if !strings.HasSuffix(text, "\\") {
			break
		}
	}
	return b.String()
}
