package evidence

import (
	"regexp"
	"strings"
)

// A CI system's own retry is a retry of the tests when the job it retries
// runs them: GitLab's retry: when: script_failure, Buildkite's retry:
// automatic: exit_status: 2, Jenkins' retry(3) { sh 'mix test' }, Travis'
// travis_retry mix test. Retries of what a lost runner or agent did
// (runner_system_failure, exit_status: -1) leave a failing test failing.

var (
	// lostExit is an exit status a lost agent gives (Buildkite).
	lostExit = hinted{regexp.MustCompile(`exit_status:\s*["']?(-1|255|-10)\b`), []string{"exit_status"}}
	// jobCommands are the keys under which a job says what it runs.
	jobCommands = map[string]bool{"script": true, "command": true, "commands": true, "run": true, "steps": true}
)

// infraWords retry only a failure of the machine the job ran on, never a
// failing test.
var infraWords = []string{"runner_system_failure", "stuck_or_timeout_failure", "api_failure", "scheduler_failure", "data_integrity_failure",
	"unmet_prerequisites", "archived_failure", "job_execution_timeout", "signal_reason", "agent_stop", "agent_lost"}

// infraRetry reports whether a line names only a lost machine's failure.
func infraRetry(text string) bool {
	for _, w := range infraWords {
		if strings.Contains(text, w) {
			return true
		}
	}
	return lostExit.MatchString(text)
}

// retryNamed reports whether s names a retry: a key (retry:, retries:),
// a step (retry(3) {), a wrapper command (travis_retry, retry 3).
func retryNamed(s string) bool {
	s = strings.ToLower(s)
	return strings.Contains(s, "retry") || strings.Contains(s, "retries")
}

// ciRetries: an added line that makes a CI system retry the job or step
// that runs the tests: a retry wrapper around the test command, a retry
// block holding it, or a retry setting (or a value in one) of a job that
// runs the tests, other than one that only retries a lost machine; and a
// job allowed to fail with the exit codes of failing tests.
func ciRetries(c change) []Finding {
	if !configFile(c.path) || strings.Contains(c.path, "compose") {
		return nil // a service's health check retries a probe, not the tests
	}
	lines, at := c.headView()
	o := newOutline(lines)
	var out []Finding
	for _, l := range c.added() {
		text := strings.TrimSpace(l.Text)
		if strings.HasPrefix(text, "#") || strings.HasPrefix(text, "//") || c.removedSame(l) {
			continue
		}
		i, ok := at[l.New]
		if !ok || o.infra[i+1] > o.infra[i] {
			continue
		}
		if yamlFile(c.path) && o.exitCodesAllowed(i) {
			out = append(out, c.finding("failure-ignored", Concern, l, "the job may now fail with these exit codes and the CI still pass ("+text+"): mix test exits 2 when tests fail"))
			continue
		}
		if yamlFile(c.path) && o.under(i, "allow_failures") && !o.namesOtherJob(i) {
			out = append(out, c.finding("failure-ignored", Concern, l, "the CI passes when these jobs fail ("+text+", under allow_failures): a flaky test on them fails unseen"))
			continue
		}
		// A retry wrapper (travis_retry mix test, retry(3) { ... }) retries
		// what it wraps; a retry setting (retry:, or a value under it),
		// the job it belongs to.
		named := retryNamed(l.Text)
		wrapper := named && !o.retryKey[i]
		retry := i
		if !named {
			retry = o.ancestor(i, o.retryKey)
		}
		if retry < 0 || o.onlyInfra(retry) || o.under(i, "healthcheck") || strings.Contains(l.Text, "--health") {
			continue
		}
		if testCommand.MatchString(l.Text) || o.testsIn(i) || !wrapper && yamlFile(c.path) && o.jobRunsTests(retry) {
			out = append(out, c.finding("ci-retry", Concern, l, "the CI runs the tests again when they fail ("+text+"): a flake that passes on a later try no longer fails the CI"))
		}
	}
	return out
}

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

// onlyInfra reports whether a retry setting names only failures of the
// machine (every value it lists is one).
func (o *outline) onlyInfra(retry int) bool {
	_, to := o.block(retry)
	return o.infra[to] > o.infra[retry] && o.other[to] == o.other[retry]
}

// jobRunsTests reports whether the YAML job or step a setting belongs to
// (the block of its parent) runs the tests, runs nothing of its own (a
// template its test jobs extend), or is not shown (a hunk far below it,
// the file not read whole): a retry of failed scripts is taken to cover
// the tests unless the job is seen to run something else.
func (o *outline) jobRunsTests(setting int) bool {
	job := o.parent[setting]
	if job < 0 {
		return true
	}
	from, to := o.block(job)
	return o.tests[to] > o.tests[from] || o.cmds[to] == o.cmds[from]
}

// namesOtherJob reports whether a Travis allow_failures entry names, by
// its name: or stage:, jobs whose own script runs something else than the
// tests (a dialyzer or format job): their failures were never the tests'.
func (o *outline) namesOtherJob(i int) bool {
	key := o.keys[i]
	if key != "name" && key != "stage" {
		return false
	}
	value := yamlValue(o.lines[i].Text)
	named := false
	for k := range o.lines {
		if k == i || o.keys[k] != key || yamlValue(o.lines[k].Text) != value || o.under(k, "allow_failures") {
			continue
		}
		entry := k
		if !strings.HasPrefix(strings.TrimSpace(o.lines[k].Text), "- ") {
			entry = o.parent[k]
		}
		if entry < 0 || o.runsTestsAt(entry) {
			return false
		}
		if from, to := o.block(entry); o.cmds[to] == o.cmds[from] {
			return false // no script of its own: it runs the file's, the tests
		}
		named = true
	}
	return named
}

// exitCodesAllowed reports whether a YAML line lists exit codes a job
// may fail with (GitLab's allow_failure: exit_codes:, Buildkite's
// soft_fail: - exit_status:), for a job that runs the tests or is not
// shown.
func (o *outline) exitCodesAllowed(i int) bool {
	allow := o.parentKeyed(i, "allow_failure")
	if allow < 0 {
		allow = o.parentKeyed(i, "soft_fail")
	}
	if allow < 0 || o.keys[i] != "" && o.keys[i] != "exit_codes" && o.keys[i] != "exit_status" || !testExitCode.MatchString(o.lines[i].Text) {
		return false
	}
	job := o.parent[allow]
	return job < 0 || o.testsIn(job)
}

// testExitCode is an exit code failing tests give: mix test exits 2 (1
// on old Elixir, or through a script).
var testExitCode = regexp.MustCompile(`(^|[\s\[,:-])[12]\b`)

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
