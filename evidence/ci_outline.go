package evidence

import (
	"strings"
	"sync"
)

// A CI file is read as an outline: each line's parent by indentation (or
// the braces of a Jenkinsfile), where its block ends, and counts of what
// the lines before it hold, indexed once so that each question a rule
// asks about a line costs no more than its depth.

// outline is a CI file's lines read by indentation (YAML) or braces
// (a Jenkinsfile's blocks), indexed once so that each question about a
// line costs no more than its depth.
type outline struct {
	lines  []Line
	parent []int // the nearest line before indented less, -1 for none
	end    []int // where the block a line opens by indentation ends
	tests  []int // tests[k]: how many of the lines before k run the tests
	cmds   []int // cmds[k]: how many of the lines before k name what a job runs
	infra  []int // infra[k]: how many of the lines before k retry only a lost machine
	other  []int // other[k]: how many of the lines before k retry failed scripts
	braced []int // where the braced block a line opens ends, -1 when it opens none
	keys   []string
	// retryKey says which lines' keys name a retry setting.
	retryKey []bool
	// testJobs are the jobs defined under jobs: that run the tests, by
	// name (runsTestsAt); added, the words the diff adds outside a matrix's
	// exclude: (matrixExcluded); entries, the lines of each name: or
	// stage: value (namesOtherJob). Each is read once, when first asked:
	// the rules that ask run at once.
	testJobs, added                      map[string]bool
	entries                              map[string][]int
	testJobsOnce, addedOnce, entriesOnce sync.Once
}

// maxDepth bounds the parents walked up from a line.
const maxDepth = 50

func newOutline(lines []Line) *outline {
	n := len(lines)
	o := &outline{lines: lines, parent: make([]int, n), end: make([]int, n), tests: make([]int, n+1), cmds: make([]int, n+1),
		infra: make([]int, n+1), other: make([]int, n+1), braced: make([]int, n), keys: make([]string, n), retryKey: make([]bool, n)}
	count := func(counts []int, i int, yes bool) {
		counts[i+1] = counts[i]
		if yes {
			counts[i+1]++
		}
	}
	var open []int // lines whose block has not ended, indentation rising
	for i, l := range lines {
		count(o.tests, i, testCommand.MatchString(l.Text))
		key := yamlKey(l.Text)
		count(o.cmds, i, jobCommands[key])
		isInfra := infraRetry(l.Text)
		count(o.infra, i, isInfra)
		count(o.other, i, !isInfra && (strings.Contains(l.Text, "script_failure") || strings.Contains(l.Text, "exit_status") || strings.Contains(l.Text, "always")))
		if key != "" {
			o.keys[i], o.retryKey[i] = key, retryNamed(key)
		}
		o.parent[i], o.end[i] = -1, n
		d := indentOf(l.Text)
		if d < 0 {
			continue
		}
		for len(open) > 0 && indentOf(lines[open[len(open)-1]].Text) >= d {
			o.end[open[len(open)-1]] = i
			open = open[:len(open)-1]
		}
		if len(open) > 0 {
			o.parent[i] = open[len(open)-1]
		}
		open = append(open, i)
	}
	o.readBraces()
	return o
}

// readBraces finds where each line's braced block ends: the first line
// after which the brace depth is back to what it was before it, found for
// every line in one pass (the lines still waiting for a lower depth form
// a stack).
func (o *outline) readBraces() {
	depth := make([]int, len(o.lines)+1) // depth[k]: open braces before line k
	for i, l := range o.lines {
		depth[i+1] = depth[i] + strings.Count(l.Text, "{") - strings.Count(l.Text, "}")
		o.braced[i] = -1
	}
	var waiting []int
	for j := range o.lines {
		for len(waiting) > 0 && depth[j+1] <= depth[waiting[len(waiting)-1]] {
			o.braced[waiting[len(waiting)-1]] = j + 1
			waiting = waiting[:len(waiting)-1]
		}
		if depth[j+1] > depth[j] {
			waiting = append(waiting, j)
		}
	}
	for _, i := range waiting {
		o.braced[i] = len(o.lines) // never closed: to the end
	}
}

// ancestor is the nearest parent of line i marked in is, -1 for none.
func (o *outline) ancestor(i int, is []bool) int {
	for j, depth := o.parent[i], 0; j >= 0 && depth < maxDepth; j, depth = o.parent[j], depth+1 {
		if is[j] {
			return j
		}
	}
	return -1
}

// parentKeyed is the nearest parent of line i with the key, -1 for none.
func (o *outline) parentKeyed(i int, key string) int {
	for j, depth := o.parent[i], 0; j >= 0 && depth < maxDepth; j, depth = o.parent[j], depth+1 {
		if o.keys[j] == key {
			return j
		}
	}
	return -1
}

// under reports whether line i sits under a key.
func (o *outline) under(i int, key string) bool { return o.parentKeyed(i, key) >= 0 }

// block is where the block line i opens starts and ends: the lines after
// it indented more, or, when it opens a brace, up to the brace that
// closes it.
func (o *outline) block(i int) (from, to int) {
	if o.braced[i] >= 0 {
		return i + 1, o.braced[i]
	}
	return i + 1, o.end[i]
}

// testsIn reports whether the block line i opens runs the tests.
func (o *outline) testsIn(i int) bool {
	from, to := o.block(i)
	return o.tests[to] > o.tests[from]
}

// outlineCache holds a change's file at head read as an outline, built
// by the first rule that asks.
type outlineCache struct {
	once  sync.Once
	lines []Line
	at    map[int]int
	o     *outline
}

// outlineView is headView read as an outline, once per change: the CI
// rules each ask it.
func (c change) outlineView() ([]Line, map[int]int, *outline) {
	if c.outline == nil {
		lines, at := c.headView()
		return lines, at, newOutline(lines)
	}
	c.outline.once.Do(func() {
		c.outline.lines, c.outline.at = c.headView()
		c.outline.o = newOutline(c.outline.lines)
	})
	return c.outline.lines, c.outline.at, c.outline.o
}

// headView is the file at head as far as it is known: whole when it was
// read, else the lines the diff shows of it; at gives each head line
// number's place in it.
func (c change) headView() ([]Line, map[int]int) {
	lines := c.head
	if lines == nil {
		for _, l := range c.all {
			if l.Kind != '-' {
				lines = append(lines, l)
			}
		}
	}
	at := make(map[int]int, len(lines))
	for i, l := range lines {
		at[l.New] = i
	}
	return lines, at
}

// indentOf is a line's indentation, or -1 for a blank or comment line.
func indentOf(text string) int {
	t := strings.TrimLeft(text, " \t")
	if t == "" || strings.HasPrefix(t, "#") {
		return -1
	}
	return len(text) - len(t)
}

// yamlKey is a YAML line's key, after its indentation and a list's dash
// (`^\s*(?:-\s+)?([\w.-]+)\s*:`), or "" when the line has none.
func yamlKey(line string) string {
	skip := func(i int) int {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '\n' || line[i] == '\r' || line[i] == '\f') {
			i++
		}
		return i
	}
	keyAt := func(i int) string {
		j := i
		for j < len(line) && (asciiWord(line[j]) || line[j] == '.' || line[j] == '-') {
			j++
		}
		if k := skip(j); j > i && k < len(line) && line[k] == ':' {
			return line[i:j]
		}
		return ""
	}
	i := skip(0)
	if after := skip(i + 1); i < len(line) && line[i] == '-' && after > i+1 {
		if key := keyAt(after); key != "" {
			return key
		}
	}
	return keyAt(i)
}
