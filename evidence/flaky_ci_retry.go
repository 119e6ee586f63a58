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
	// retryWord names a retry: a key (retry:, retries:), a step
	// (retry(3) {), a wrapper command (travis_retry, retry 3).
	retryWord = hinted{regexp.MustCompile(`(?i)\b\w*retr(y|ies)\w*\b`), []string{"retr", "Retr", "RETR"}}
	// infraRetry is what retries only a failure of the machine the job
	// ran on, never a failing test.
	infraRetry = regexp.MustCompile(`(?i)runner_system_failure|stuck_or_timeout_failure|api_failure|scheduler_failure|data_integrity_failure|unmet_prerequisites|archived_failure|job_execution_timeout|exit_status:\s*["']?(-1|255|-10)\b|signal_reason|agent_stop|agent_lost|lost`)
	// yamlKey is a YAML line's key, list dash or not.
	yamlKey = regexp.MustCompile(`^\s*(?:-\s+)?([\w.-]+)\s*:`)
)

// ciRetries: an added line that makes a CI system retry the job or step
// that runs the tests: a retry wrapper around the test command, a retry
// block holding it, or a retry setting (or a value in one) of a job that
// runs the tests, other than one that only retries a lost machine.
func ciRetries(c change) []Finding {
	if !configFile(c.path) || strings.Contains(c.path, "compose") {
		return nil // a service's health check retries a probe, not the tests
	}
	lines, at := c.headView()
	var out []Finding
	for _, l := range c.added() {
		text := strings.TrimSpace(l.Text)
		if strings.HasPrefix(text, "#") || strings.HasPrefix(text, "//") || infraRetry.MatchString(l.Text) {
			continue
		}
		i, ok := at[l.New]
		if !ok {
			continue
		}
		if yamlFile(c.path) && exitCodesAllowed(lines, i) && !c.removedSame(l) {
			out = append(out, c.finding("failure-ignored", Concern, l, "the job may now fail with these exit codes and the CI still pass ("+text+"): mix test exits 2 when tests fail"))
			continue
		}
		inRetry := retryWord.MatchString(l.Text)
		if !inRetry {
			inRetry = underRetry(lines, i)
		}
		if !inRetry || c.removedSame(l) || retriesOnlyInfra(lines, i) || underKey(lines, i, "healthcheck") || strings.Contains(l.Text, "--health") {
			continue
		}
		if testCommand.MatchString(l.Text) || testCommandIn(blockOf(lines, i)) || yamlFile(c.path) && jobRunsTests(lines, i) {
			out = append(out, c.finding("ci-retry", Concern, l, "the CI runs the tests again when they fail ("+text+"): a flake that passes on a later try no longer fails the CI"))
		}
	}
	return out
}

// exitCodesAllowed reports whether a YAML line lists exit codes a job
// may fail with (GitLab's allow_failure: exit_codes:), for a job that runs
// the tests or is not shown.
func exitCodesAllowed(lines []Line, i int) bool {
	if !underKey(lines, i, "allow_failure") {
		return false
	}
	if m := yamlKey.FindStringSubmatch(lines[i].Text); m != nil && m[1] != "exit_codes" {
		return false
	}
	for j := parentOf(lines, i); j >= 0; j = parentOf(lines, j) {
		if m := yamlKey.FindStringSubmatch(lines[j].Text); m != nil && m[1] == "allow_failure" {
			job := parentOf(lines, j)
			return job < 0 || testCommandIn(blockOf(lines, job))
		}
	}
	return false
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

// parentOf is the nearest line before lines[i] indented less, or -1.
func parentOf(lines []Line, i int) int {
	in := indentOf(lines[i].Text)
	for j := i - 1; j >= 0 && in > 0; j-- {
		if d := indentOf(lines[j].Text); d >= 0 && d < in {
			return j
		}
	}
	return -1
}

// underRetry reports whether a YAML line sits in a retry setting: one of
// its parents' keys is a retry.
func underRetry(lines []Line, i int) bool {
	for j := parentOf(lines, i); j >= 0; j = parentOf(lines, j) {
		if m := yamlKey.FindStringSubmatch(lines[j].Text); m != nil && retryWord.MatchString(m[1]) {
			return true
		}
	}
	return false
}

// underKey reports whether a YAML line sits under the key.
func underKey(lines []Line, i int, key string) bool {
	for j := parentOf(lines, i); j >= 0; j = parentOf(lines, j) {
		if m := yamlKey.FindStringSubmatch(lines[j].Text); m != nil && m[1] == key {
			return true
		}
	}
	return false
}

// retriesOnlyInfra reports whether the retry setting a line is in names
// only failures of the machine (every value it lists is one).
func retriesOnlyInfra(lines []Line, i int) bool {
	for j := i; j >= 0; j = parentOf(lines, j) {
		if m := yamlKey.FindStringSubmatch(lines[j].Text); m != nil && retryWord.MatchString(m[1]) {
			block := append([]Line{lines[j]}, blockOf(lines, j)...)
			infra, other := false, false
			for _, l := range block {
				switch {
				case infraRetry.MatchString(l.Text):
					infra = true
				case strings.Contains(l.Text, "script_failure") || strings.Contains(l.Text, "exit_status") || strings.Contains(l.Text, "always"):
					other = true
				}
			}
			return infra && !other
		}
	}
	return false
}

// blockOf is what a line opens: the lines after it indented more (YAML,
// Python-like scripts) or, when it opens a brace, up to the brace that
// closes it (a Jenkinsfile's retry(3) { ... }).
func blockOf(lines []Line, i int) []Line {
	if strings.Count(lines[i].Text, "{") > strings.Count(lines[i].Text, "}") {
		depth := 0
		for j := i; j < len(lines); j++ {
			depth += strings.Count(lines[j].Text, "{") - strings.Count(lines[j].Text, "}")
			if depth <= 0 {
				return lines[i+1 : j+1]
			}
		}
		return lines[i+1:]
	}
	in := indentOf(lines[i].Text)
	j := i + 1
	for ; j < len(lines); j++ {
		if d := indentOf(lines[j].Text); d >= 0 && d <= in {
			break
		}
	}
	return lines[i+1 : j]
}

// testCommandIn reports whether one of lines runs the tests.
func testCommandIn(lines []Line) bool {
	for _, l := range lines {
		if testCommand.MatchString(l.Text) {
			return true
		}
	}
	return false
}

// jobRunsTests reports whether the YAML job or step a line belongs to
// (the block of the parent of its retry setting) runs the tests, runs
// nothing of its own (a template its test jobs extend), or is not shown
// (a hunk far below it, the file not read whole): a retry of failed
// scripts is taken to cover the tests unless the job is seen to run
// something else.
func jobRunsTests(lines []Line, i int) bool {
	j := i
	for ; j >= 0; j = parentOf(lines, j) {
		if m := yamlKey.FindStringSubmatch(lines[j].Text); m != nil && retryWord.MatchString(m[1]) {
			break
		}
	}
	if j < 0 {
		return false
	}
	job := parentOf(lines, j)
	if job < 0 {
		return true
	}
	block := blockOf(lines, job)
	if testCommandIn(block) {
		return true
	}
	for _, l := range block {
		if m := yamlKey.FindStringSubmatch(l.Text); m != nil && (m[1] == "script" || m[1] == "command" || m[1] == "commands" || m[1] == "run" || m[1] == "steps") {
			return false
		}
	}
	return true
}
