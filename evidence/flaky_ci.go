package evidence

import (
	"regexp"
	"strings"
)

// A flaky test can also be hidden outside the tests: the CI is told to
// let the test run fail, or to run the failures again until they pass.

var (
	// testCommand runs the test suite: mix test, mix coveralls.* (which
	// runs it), or a mix do chain with a test step.
	testCommand = regexp.MustCompile(`\bmix\s+(test|coveralls(\.[\w-]+)?)\b|\bmix\s+do\b[^#]*\btest\b`)
	// forgiven ends a command in a way that makes its failure a success.
	forgiven = regexp.MustCompile(`\|\|\s*(true|:|exit\s+0|echo\b|/bin/true)|;\s*(true|exit\s+0)\s*(["']|$)`)
	// retried runs the tests again when they failed.
	retried = regexp.MustCompile(`\|\|\s*(\w+=\S+\s+)*mix\s+(test|coveralls)`)
	// continueOnError is a workflow step or job (GitLab: a job) whose
	// failure does not fail the run.
	continueOnError = regexp.MustCompile(`^\s*(continue-on-error|allow_failure):\s*(true|\$\{\{\s*true\s*\}\})\s*$`)
	// retryAction is a workflow step that uses an action retrying its command.
	retryAction = regexp.MustCompile(`^\s*(-\s+)?uses:\s*\S*retry`)
	// shellRetry runs the tests in a loop until they pass.
	shellRetry = regexp.MustCompile(`\b(for|while|until)\b.*\bmix\s+test\b.*\b(break|done)\b|\buntil\s+mix\s+test\b`)
	// testTimeout gives every test more time from the command line.
	testTimeout = regexp.MustCompile(`\bmix\s+test\b.*--timeout[= ]+([0-9][0-9_]*)`)
	// ignoredRecipe is a Makefile recipe line whose failure make ignores.
	ignoredRecipe = regexp.MustCompile("^\t+-")
)

// ciFailure is what one added line of a CI workflow, a script or a
// Makefile does to a failing test run; "" when nothing.
func ciFailure(path, line string) (rule, why string) {
	if strings.HasPrefix(strings.TrimSpace(line), "#") {
		return "", ""
	}
	workflow := strings.HasPrefix(path, ".github/workflows/") || path == ".gitlab-ci.yml"
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
	case workflow && continueOnError.MatchString(line):
		return "failure-ignored", "the CI passes when this fails: a failing test run no longer fails the CI"
	case tests && testTimeout.MatchString(line):
		return "test-timeout-raised", "every test is given more time from the command line: a longer wait, not a fix"
	case workflow && retryAction.MatchString(line):
		return "ci-retry", "the step is retried until it passes: a flake that passes the second time no longer fails the CI"
	}
	return "", ""
}

// ciForgives: CI workflows, scripts and Makefiles made to let a failing
// test run pass, or to retry it. A forgiving line the block already had
// (moved or reformatted) is not reported.
func ciForgives(c change) []Finding {
	if !configFile(c.path) {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		had := map[string]bool{}
		for _, l := range b.removed {
			if rule, _ := ciFailure(c.path, l.Text); rule != "" {
				had[rule] = true
			}
		}
		for _, l := range b.added {
			if rule, why := ciFailure(c.path, l.Text); rule != "" && !had[rule] {
				out = append(out, c.finding(rule, Concern, l, why))
			}
		}
	}
	return out
}
