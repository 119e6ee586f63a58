package evidence

import (
	"fmt"
	"regexp"
	"strings"
)

// A flaky test can also be hidden outside the tests: the CI is told to
// let the test run fail, or to run the failures again until they pass.

var (
	// testCommand runs the test suite: mix test, mix coveralls.* (which
	// runs it), or a mix do chain with a test step.
	testCommand = hinted{regexp.MustCompile(`(\bmix|\$[({]?MIX[)}]?)\s+(test|coveralls(\.[\w-]+)?)\b|\bmix\s+do\b[^#]*\btest\b`), []string{"mix", "MIX"}}
	// forgiven ends a command in a way that makes its failure a success.
	forgiven = regexp.MustCompile(`\|\|\s*(true|:|exit\s+0|echo\b|/bin/true)|;\s*(true|exit\s+0)\s*(["']|$)`)
	// retried runs the tests again when they failed.
	retried = regexp.MustCompile(`\|\|\s*(\w+=\S+\s+)*mix\s+(test|coveralls)|\b\w*retry\w*\b[^#|;&]*\bmix\s+(test|coveralls)`)
	// continueOnError is a workflow step or job (GitLab: a job) whose
	// failure does not fail the run.
	continueOnError = hinted{regexp.MustCompile(`^\s*(-\s+)?(continue-on-error|allow_failure|soft_fail|ignore_failure|failure):\s*(true|ignore|\$\{\{\s*true\s*\}\})\s*(#.*)?$`), []string{"continue-on-error", "failure", "soft_fail"}}
	// retryAction is a workflow step that uses an action retrying its command.
	retryAction = hinted{regexp.MustCompile(`^\s*(-\s+)?uses:\s*\S*retry`), []string{"uses:"}}
	// shellRetry runs the tests in a loop until they pass.
	shellRetry = regexp.MustCompile(`\b(for|while|until)\b.*\bmix\s+test\b.*\b(break|done)\b|\buntil\s+mix\s+test\b`)
	// testTimeout gives every test more time from the command line.
	testTimeout = regexp.MustCompile(`\bmix\s+test\b.*--timeout[= ]+([0-9][0-9_]*)`)
	// ignoredRecipe is a Makefile recipe line whose failure make ignores.
	ignoredRecipe = regexp.MustCompile("^\t+-")
	// travisWait runs a command with a longer limit on silence.
	travisWait = regexp.MustCompile(`\btravis_wait\s+[0-9]+\s`)
	// skipVariable is an environment variable set to skip, exclude or
	// switch off something (SKIP_DISTRIBUTED=1, RUN_SLOW_TESTS: false).
	skipVariable = hinted{regexp.MustCompile(`\b((SKIP|EXCLUDE|DISABLE|NO)_[A-Z0-9_]+|[A-Z0-9_]+_(SKIP|SKIPPED|DISABLED|OFF))["']?\s*[:=]\s*["']?(1|true|yes|on)\b|\b(RUN|INCLUDE|ENABLE|WITH)_[A-Z0-9_]+["']?\s*[:=]\s*["']?(0|false|no|off)\b`), []string{"SKIP", "EXCLUDE", "DISABLE", "NO_", "_OFF", "RUN_", "INCLUDE_", "ENABLE_", "WITH_"}}
	// jobOff is a workflow job or step switched off.
	jobOff = hinted{regexp.MustCompile(`^\s*(-\s+)?if:\s*(false|\$\{\{\s*false\s*\}\})\s*$`), []string{"if:"}}
	// shellSleep waits a fixed time in a script, not in a loop that polls
	// for a service (until pg_isready; do sleep 1; done).
	shellSleep = hinted{regexp.MustCompile(`(^\s*|[;&|]\s*|-c\s+["']\s*|\b(run|command|script|cmd):\s*|\bRUN\s+|-\s+)sleep\s+["']?(\$\{\w+:-)?[0-9]`), []string{"sleep"}}
	shellLoop  = hinted{regexp.MustCompile(`\b(until|while|for|do|done)\b`), []string{"until", "while", "for", "do"}}
	loopOpens  = hinted{regexp.MustCompile(`^\s*(-\s+|run:\s*|[@+-]+)?(until|while|for)\b`), []string{"until", "while", "for"}}
	loopCloses = hinted{regexp.MustCompile(`\bdone\b`), []string{"done"}}
)

// ciFailure is what one added line of a CI workflow, a script or a
// Makefile does to a failing test run; "" when nothing.
func ciFailure(path, line string) (rule, why string) {
	if strings.HasPrefix(strings.TrimSpace(line), "#") {
		return "", ""
	}
	workflow := strings.HasPrefix(path, ".github/") && yamlFile(path) || path == ".gitlab-ci.yml" // composite actions too
	tests := testCommand.MatchString(line)
	switch {
	case tests && retried.MatchString(line):
		return "ci-retry", "the tests run again when they fail: a flake that passes the second time no longer fails the CI"
	case tests && shellRetry.MatchString(line):
		return "ci-retry", "the tests run in a loop until they pass: a flake that passes on a later try no longer fails the CI"
	case tests && (workflow || !strings.HasSuffix(path, "Makefile")) && strings.Contains(line, "--failed"):
		return "ci-retry", "the failed tests run again: a flake that passes the second time no longer fails the CI"
	case tests && forgiven.MatchString(line):
		return "failure-ignored", "a failing test run no longer fails the CI: the flaky test can fail unseen"
	case tests && strings.HasSuffix(path, "Makefile") && ignoredRecipe.MatchString(line):
		return "failure-ignored", "make ignores this recipe line's failure: the flaky test can fail unseen"
	case yamlFile(path) && !strings.Contains(path, "compose") && continueOnError.MatchString(line):
		return "failure-ignored", "the CI passes when this fails: a failing test run no longer fails the CI"
	case tests && travisWait.MatchString(line):
		return "test-timeout-raised", "Travis waits longer for output before it fails the run: a test that hangs now has more time, not a fix"
	case tests && testTimeout.MatchString(line):
		return "test-timeout-raised", "every test is given more time from the command line: a longer wait, not a fix"
	case tests && fixedSeed.MatchString(line):
		return "seed-fixed", seedFixedWhy
	case skipVariable.MatchString(line) && !strings.Contains(line, "NO_COLOR"):
		return "test-skipped", "CI now sets a variable that skips or switches off what it names: where the tests run, that part no longer does"
	case workflow && jobOff.MatchString(line):
		return "test-skipped", "a job or step of the CI is switched off: what it ran no longer runs"
	case workflow && retryAction.MatchString(line):
		return "ci-retry", "the step is retried until it passes: a flake that passes the second time no longer fails the CI"
	}
	return "", ""
}

// ciForgives: CI workflows, scripts and Makefiles made to let a failing
// test run pass, or to retry it. A forgiving line the block already had
// (moved or reformatted) is not reported.
func ciForgives(c change) []Finding {
	if !c.ci && !strings.HasSuffix(c.path, "mix.exs") { // mix.exs: its aliases run the tests too
		return nil
	}
	out := testRunsDropped(c)
	stillRuns := c.stillRuns()
	looped := shellLoops(c)
	for _, l := range c.added() {
		if shellSleep.MatchString(l.Text) && !shellLoop.MatchString(l.Text) && !looped[l.New] && !c.removedSame(l) && !strings.HasPrefix(strings.TrimSpace(l.Text), "#") {
			out = append(out, c.finding("sleep-added", Concern, l, "the CI waits a fixed time before going on: a wait for what the tests need (a health check, a loop on it) is the fix"))
		}
	}
	for _, b := range c.blocks {
		had := map[string]bool{}
		numbers := map[string]int64{}
		ranAll := map[string]bool{} // the test commands the block removes that ran every test
		for _, l := range b.removed {
			if rule, _ := ciFailure(c.path, l.Text); rule != "" {
				had[rule] = true
			}
			if testCommand.MatchString(l.Text) && !tagRun.MatchString(l.Text) {
				ranAll[squashSpace(l.Text)] = true
			}
			if !keyValued(l.Text) {
				continue
			}
			if m := ciNumber.FindStringSubmatch(l.Text); m != nil {
				numbers[m[1]], _ = largestLiteral(m[2])
			}
		}
		for _, l := range b.added {
			if rule, why := ciFailure(c.path, l.Text); rule != "" && !had[rule] {
				out = append(out, c.finding(rule, Concern, l, why))
			} else if f := raisedCINumber(c, l, numbers); f != nil {
				out = append(out, *f)
			} else if c.seedFromFixedVariable(l) {
				out = append(out, c.finding("seed-fixed", Concern, l, seedFixedWhy))
			} else if m := onlyRun.FindStringSubmatch(l.Text); m != nil && ranAll[squashSpace(onlyRun.ReplaceAllString(l.Text, ""))] && !stillRuns(squashSpace(onlyRun.ReplaceAllString(l.Text, ""))) {
				out = append(out, c.finding("tag-excluded", Concern, l, "only the tests tagged "+m[1]+" run here now: the others, the flaky one among them, no longer do"))
			} else if all := narrowed(l.Text); all != "" && ranAll[all] && !stillRuns(all) {
				out = append(out, c.finding("test-skipped", Concern, l, "the tests here now run only the paths named: the ones left out, the flaky one among them, no longer run"))
			}
		}
	}
	return out
}

// testRunsDropped: a CI file that runs the tests fewer times than it did
// (a step or job that ran mix test removed), where the diff runs them
// nowhere else: what that run covered (an OTP version, a tag included)
// no longer runs.
func testRunsDropped(c change) []Finding {
	if c.diff.runsTests {
		return nil // run elsewhere, or rewritten: the other rules read it
	}
	var gone []Line
	for _, l := range c.removed() {
		if t := strings.TrimSpace(l.Text); testCommand.MatchString(l.Text) && !strings.HasPrefix(t, "#") {
			gone = append(gone, l)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	return []Finding{c.finding("test-skipped", Concern, gone[0], "the CI no longer runs this test command, and the diff runs it nowhere else: the tests it ran no longer run there")}
}

// ciNumber is a CI setting that counts tries or bounds a wait
// (max_attempts, retry: 2, timeout-minutes).
var ciNumber = regexp.MustCompile(`(?i)^\s*(?:-\s+)?([\w-]*(?:attempt|retr|timeout|wait)[\w-]*):\s*["']?([0-9][0-9_]*)`)

// raisedCINumber: in a CI's YAML, more tries than before (or tries where
// there were none), or a wait made longer. A new job timeout is left
// alone: it lowers the runner's default; so is a service's health check
// (docker compose), which polls.
func raisedCINumber(c change, l Line, before map[string]int64) *Finding {
	if !keyValued(l.Text) || !yamlFile(c.path) || strings.Contains(c.path, "compose") {
		return nil
	}
	m := ciNumber.FindStringSubmatch(l.Text)
	if m == nil {
		return nil
	}
	now, _ := largestLiteral(m[2])
	old, had := before[m[1]]
	tries := !strings.Contains(strings.ToLower(m[1]), "timeout") && !strings.Contains(strings.ToLower(m[1]), "wait")
	switch {
	case tries && now > 1 && (!had || now > old):
		f := c.finding("ci-retry", Concern, l, "the CI tries this again ("+m[1]+": "+m[2]+"): a flake that passes on a later try no longer fails it")
		return &f
	case !tries && had && now > old:
		f := c.finding("test-timeout-raised", Concern, l, fmt.Sprintf("the CI waits longer (%s: %d, was %d): a longer wait, not a fix", m[1], now, old))
		return &f
	}
	return nil
}

// shellLoops are the lines the diff shows inside a shell loop written
// over several lines (until pg_isready; do / sleep 1 / done): a sleep
// there is how the loop polls.
func shellLoops(c change) map[int]bool {
	out := map[int]bool{}
	depth := 0
	for _, l := range c.all {
		if l.Kind == '-' {
			continue
		}
		if depth > 0 {
			out[l.New] = true
		}
		if loopOpens.MatchString(l.Text) && !loopCloses.MatchString(l.Text) {
			depth++
		} else if loopCloses.MatchString(l.Text) && depth > 0 {
			depth--
		}
	}
	return out
}

// fixedSeed runs the tests in one order: mix test --seed N, or a seed
// given to ExUnit.start/configure.
var fixedSeed = regexp.MustCompile(`--seed[= ]+[0-9]|\bseed:\s*[0-9]`)

// stillRuns answers whether the file at head still has a command (a
// job of its own added beside it, the diff aligned otherwise), from the
// file's lines read once.
func (c change) stillRuns() func(command string) bool {
	var kept map[string]bool
	return func(command string) bool {
		if kept == nil {
			kept = map[string]bool{}
			for _, l := range c.all {
				if l.Kind != '-' {
					kept[squashSpace(l.Text)] = true
				}
			}
		}
		return kept[command]
	}
}

// narrowed is a test command narrowed to paths with the paths left out,
// "" for a line that is not one.
func narrowed(line string) string {
	if !testCommand.MatchString(line) || !testPaths.MatchString(line) {
		return ""
	}
	return squashSpace(testPaths.ReplaceAllString(line, ""))
}

// testPaths are the paths a test command is narrowed to (test/unit,
// apps/core/test, a _test.exs file).
var testPaths = regexp.MustCompile(`\s(?:\./)?(?:(?:test|apps)/[\w./*-]*|[\w./-]+_test\.exs(?::\d+)?)`)

// onlyRun narrows a test command to the tests of one tag.
var onlyRun = hinted{regexp.MustCompile(`--only[= ]+:?(\w+)`), []string{"--only"}}

// seedVariable is a test command's seed given by a variable: --seed
// $(CI_SEED), --seed "${SEED}".
var seedVariable = regexp.MustCompile(`--seed[= ]+["']?\$[({]?(\w+)`)

// seedFromFixedVariable reports whether an added test command takes its
// seed from a variable the file sets to a number (CI_SEED ?= 20240611).
func (c change) seedFromFixedVariable(l Line) bool {
	m := seedVariable.FindStringSubmatch(l.Text)
	if m == nil || !testCommand.MatchString(l.Text) || c.removedSame(l) {
		return false
	}
	set := regexp.MustCompile(`^\s*(export\s+|-\s+)?` + regexp.QuoteMeta(m[1]) + `\s*(\?=|:=|=|:)\s*["']?[0-9]+["']?\s*(#.*)?$`)
	lines, _ := c.headView()
	for _, h := range lines {
		if set.MatchString(h.Text) {
			return true
		}
	}
	return false
}

const seedFixedWhy = "the tests run in one fixed order: a flake that depends on the order no longer shows"

// seedsFixed: in the tests' setup (test_helper.exs, mix.exs aliases), the
// seed fixed, so the tests always run in the same order. CI files are
// read by ciForgives.
func seedsFixed(c change) []Finding {
	if !strings.HasSuffix(c.path, "test_helper.exs") && !strings.HasSuffix(c.path, "mix.exs") {
		return nil
	}
	var out []Finding
	for _, l := range c.added() {
		if fixedSeed.MatchString(l.code) && (strings.HasSuffix(c.path, "test_helper.exs") || strings.Contains(l.Text, "test")) && !c.removedSame(l) {
			out = append(out, c.finding("seed-fixed", Concern, l, seedFixedWhy))
		}
	}
	return out
}
