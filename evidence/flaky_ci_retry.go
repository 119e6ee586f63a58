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
	if !c.ci || strings.Contains(c.path, "compose") {
		return nil // a service's health check retries a probe, not the tests
	}
	_, at, o := c.outlineView()
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
	o.entriesOnce.Do(func() {
		o.entries = map[string][]int{}
		for k := range o.lines {
			if o.keys[k] == "name" || o.keys[k] == "stage" {
				entry := o.keys[k] + "=" + yamlValue(o.lines[k].Text)
				o.entries[entry] = append(o.entries[entry], k)
			}
		}
	})
	named := false
	for _, k := range o.entries[key+"="+yamlValue(o.lines[i].Text)] {
		if k == i || o.under(k, "allow_failures") {
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
