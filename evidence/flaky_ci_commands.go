package evidence

import (
	"fmt"
	"regexp"
	"slices"
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
	if !c.ci && !alias {
		return nil
	}
	runs := func(text string) bool {
		return testCommand.MatchString(text) || alias && strings.Contains(text, `"test`)
	}
	var headTags map[string]bool // the tags a line of the file at head runs, read once
	var out []Finding
	for _, b := range c.blocks {
		gone, kept := map[string]bool{}, map[string]bool{}
		var first *Line // the first test command the block adds
		for _, l := range b.removed {
			if runs(l.Text) {
				tagsRun(l.Text, gone)
			}
		}
		for i, l := range b.added {
			if runs(l.Text) {
				tagsRun(l.Text, kept)
				if first == nil {
					first = &b.added[i]
				}
			}
		}
		if first == nil || len(gone) == 0 {
			continue
		}
		if headTags == nil {
			headTags = map[string]bool{}
			lines, _ := c.headView()
			for _, l := range lines {
				tagsRun(l.Text, headTags)
			}
		}
		var dropped []string
		for t := range gone {
			if !kept[t] && !headTags[t] && !c.diff.runTags[t] && !c.diff.unexcluded[t] {
				dropped = append(dropped, t)
			}
		}
		if len(dropped) > 0 {
			slices.Sort(dropped)
			out = append(out, c.finding("tag-excluded", Concern, *first, "the tests tagged "+strings.Join(dropped, ", ")+" are no longer included here, and nothing else runs them: the flaky test among them no longer runs"))
		}
	}
	return out
}

// tagsRun adds the tags a command includes (--include t, --only t) to
// into.
func tagsRun(text string, into map[string]bool) {
	for _, m := range tagRun.FindAllStringSubmatch(text, -1) {
		into[m[1]] = true
	}
}

// timeoutFlag is a command's --timeout.
var timeoutFlag = regexp.MustCompile(`--timeout[= ]+([0-9][0-9_]*)`)

// testTimeoutsRaised: a test command's --timeout raised, the command read
// at head whole over the lines a backslash continues (a Makefile recipe,
// a script): every test is given more time.
func testTimeoutsRaised(c change) []Finding {
	if !c.ci && !strings.HasSuffix(c.path, "Makefile") {
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
