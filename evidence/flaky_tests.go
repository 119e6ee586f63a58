package evidence

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The flaky rules about what a fix does to the tests themselves: retry
// them, skip or exclude them, delete or loosen them, run them alone.
// The rules about deleted or loosened assertions are in
// flaky_assertions.go, the one about running alone in flaky_async.go.

var (
	retryCall = hinted{regexp.MustCompile(`(?:^|[^\w.:])(?:defp?\s+)?(retry|retry_\w+|with_retr\w*|\w+_with_retr\w*|repeat_until)[!?]?\s*(\(|with:)`), []string{"retr", "repeat_until"}}
	// checks are what a repeat tries again: a comparison or an assertion
	// on its own line (a range that builds rows checks nothing).
	checks = regexp.MustCompile(`\b(assert|refute)\w*\b|==|match\?\(`)
	// repeats run what they are given a number of times, not once per
	// item of the test's data: around a check, they try it again.
	repeats = hinted{regexp.MustCompile(`\b\d[\d_]*\.\.\d|Stream\.(repeatedly|cycle|iterate|interval)\b`), []string{"..", "Stream."}}
	// pollCall calls a helper that waits for a condition, the recommended
	// replacement of a fixed sleep.
	pollCall = hinted{regexp.MustCompile(`(?:^|[^\w.:])(?:defp?\s+)?(` + pollNames + `)[!?]?\s*\(`), []string{"eventually", "assert_", "wait_", "poll", "until_", "await_", "with_", "retr"}}
	// pollDef is a definition of such a helper, which may have a shorter
	// name than a call pitcrew would read as one (wait, until, soon).
	pollDef = regexp.MustCompile(`^\s*defp?\s+(` + pollNames + `|soon|wait|until)[!?]?\b`)
)

// pollNames are the names of helpers that poll for a condition (ExUnit
// has none, so each project names its own); pollCall, pollDef and the
// AST's pollName are built from them.
const pollNames = `eventually|eventually_\w+|assert_eventually|assert_soon|assert_until\w*|wait_until\w*|wait_for\w*|await_\w+|poll|poll_until\w*|until_\w+|with_retry|with_retries|with_backoff|retry_until\w*|retrying`

// pollingHelper reports whether a block defines a helper that polls for a
// condition, by its name or by what it does (definesPoller): its sleep
// and rescue are how it polls.
func (c change) pollingHelper(b block) bool {
	for _, l := range b.added {
		if m := pollDef.FindStringSubmatch(l.code); m != nil && c.pollNamed(m[1]) {
			return true
		}
	}
	return c.definesPoller(b)
}

// namedPoll reports whether a line calls or defines a helper named like a
// poll (pollNamed).
func (c change) namedPoll(line string) bool {
	m := pollCall.FindStringSubmatch(line)
	return m != nil && c.pollNamed(m[1])
}

// pollNamed reports whether a helper named like a poll polls: unless the
// file read whole defines it as something that does not.
func (c change) pollNamed(name string) bool {
	return c.after == nil || c.after.pollsByName(name, true)
}

// retries: a retry loop added to a test (the test run again until it
// passes), or reduce_while around a sleep, is a concern; polling for a
// condition (wait_until, eventually), the way to replace a fixed sleep, is
// a note.
func retries(c change) []Finding {
	if !c.test {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		sleepy, helper, noted := false, c.pollingHelper(b), false
		for _, l := range b.added {
			if _, ok := c.callTimeout(l.code, sleepCalls, 0, -1); ok {
				sleepy = true
			}
		}
		immediate := c.immediateAssertionReplaced(b)
		for _, l := range b.added {
			line := l.code
			attr := strings.HasPrefix(strings.TrimSpace(line), "@")
			polls := !attr && (c.namedPoll(line) || c.pollAt(l))
			switch {
			case retryCall.MatchString(line) && !attr:
				out = append(out, c.finding("retry-loop", Concern, l, "the test tries again until it passes: the flake is retried, not fixed"))
			case polls && immediate && !noted:
				noted = true
				out = append(out, c.finding("retry-loop", Concern, l, "an assertion that was checked once is now polled until it passes: the flake is retried, not fixed"))
			case polls:
				if !noted { // once per block: a helper's clauses and its recursion are one helper
					out = append(out, c.finding("polling", Note, l, "the test polls for a condition: a fix when it waits for the state the test needs, not for the assertion to pass by chance"))
				}
				noted = true
			case immediate && !helper && repeats.MatchString(line) && checks.MatchString(line) && !attr:
				out = append(out, c.finding("retry-loop", Concern, l, "an assertion that was checked once is now tried a number of times: the flake is retried, not fixed"))
			case sleepy && !helper && (indexWord(line, "Enum.reduce_while") >= 0 || indexWord(line, "Stream.repeatedly") >= 0 || strings.Contains(line, "for _ <-")):
				out = append(out, c.finding("retry-loop", Concern, l, "a loop with a sleep in it polls until the test passes: the flake is retried, not fixed"))
			}
		}
	}
	return out
}

var (
	rescueLine = hinted{regexp.MustCompile(`^\s*(rescue|catch)\b|\b(rescue|catch)\s*(_|e|error|ExUnit\.AssertionError|:exit|kind)\b|\btry\s+do\b`), []string{"rescue", "catch", "try"}}
	assertion  = hinted{regexp.MustCompile(`^\s*(assert|refute)\w*\b`), []string{"assert", "refute"}}
	// anyAssertion is an assertion anywhere on a line: at its start, or as
	// the body of a function a polling helper calls (fn -> assert ... end).
	anyAssertion = hinted{regexp.MustCompile(`(^\s*|->\s*|\bdo:?\s+)([A-Z][\w.]*\.)?(assert|refute)\w*\b`), []string{"assert", "refute"}}
)

// rescues: rescue or catch added in a test, a concern when the test's
// assertions sit in it (an assertion that fails is then swallowed); not
// inside a polling helper, which retries notes.
func rescues(c change) []Finding {
	if !c.test {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		asserts, helper := false, c.pollingHelper(b)
		for _, l := range b.added {
			if assertion.MatchString(l.code) || strings.Contains(l.Text, "AssertionError") {
				asserts = true
			}
		}
		for _, l := range b.added {
			if !rescueLine.MatchString(l.code) || c.cleanupOnly(l) {
				continue
			}
			if helper {
				continue // how the helper polls: retries notes it
			} else if asserts {
				out = append(out, c.finding("rescue-around-assertion", Concern, l, "a rescue or catch around assertions lets a failing assertion pass"))
			} else {
				out = append(out, c.finding("rescue-in-test", Note, l, "a rescue or catch in a test can hide the failure it is meant to show"))
			}
		}
	}
	return append(out, c.assertionErrorsCaught()...)
}

// assertionErrorsCaught: ExUnit.AssertionError newly named among what a
// test helper rescues or retries on (@transient [..., ExUnit.AssertionError])
// and not raised again: a failing assertion is then tried again or passed.
// A polling helper defined in the same lines rescues it to poll (retries
// notes it).
func (c change) assertionErrorsCaught() []Finding {
	reraised := false
	for _, l := range c.added() {
		reraised = reraised || strings.Contains(l.code, "reraise")
	}
	if reraised || c.removedMentions("ExUnit.AssertionError") {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		if c.pollingHelper(b) || slices.ContainsFunc(b.added, func(l Line) bool { return rescueLine.MatchString(l.code) }) {
			continue // a rescue the lines show is read above
		}
		for _, l := range b.added {
			if strings.Contains(l.code, "ExUnit.AssertionError") {
				out = append(out, c.finding("rescue-around-assertion", Concern, l, "ExUnit.AssertionError is now among what is caught here: a failing assertion is tried again or let pass"))
			}
		}
	}
	return out
}

// removedMentions reports whether a removed line of the change holds s.
func (c change) removedMentions(s string) bool {
	for _, l := range c.removed() {
		if strings.Contains(l.code, s) {
			return true
		}
	}
	return false
}

// ciOnly wraps tests in a condition on the CI's environment.
var ciOnly = regexp.MustCompile(`^\s*(if|unless)\b.*System\.(get_env|fetch_env!?)\(\s*"(CI|GITHUB_ACTIONS|GITLAB_CI)"`)

// neverRuns is a block whose condition is a constant that skips it.
var neverRuns = regexp.MustCompile(`^\s*(if\s+(false|nil)|unless\s+true)\s+do\s*$`)

var skipTag = regexp.MustCompile(`^\s*@(tag|moduletag|describetag)\s+(.*[\s,\[])?(:skip\b|skip:|:pending\b|pending:|:wip\b)`)

// skips: a test, describe block or module tagged to be skipped.
func skips(c change) []Finding {
	var out []Finding
	for _, l := range c.added() {
		switch {
		case skipTag.MatchString(l.code):
			out = append(out, c.finding("test-skipped", Concern, l, "the test is skipped: it no longer runs, so it can no longer flake or fail"))
		case c.test && neverRuns.MatchString(l.code):
			out = append(out, c.finding("test-skipped", Concern, l, "the code inside never runs: the tests in it no longer run, so they can no longer flake or fail"))
		case c.test && ciOnly.MatchString(l.Text):
			out = append(out, c.finding("test-skipped", Concern, l, "the tests inside run or not depending on the CI's environment: where the flake shows, they may not run"))
		}
	}
	return out
}

var (
	excludeList = regexp.MustCompile(`\bexclude:\s*(\[[^\]]*\]|:\w+|\w+:\s*\w+)`)
	excludeCLI  = regexp.MustCompile(`--exclude[= ]+([\w:.-]+)`)
	tagName     = regexp.MustCompile(`:?(\w+)`)
	// excludeVar assigns the variable a test_helper.exs passes as exclude:.
	excludeVar = regexp.MustCompile(`^\s*exclude\w*\s*=([^=]|$)`)
	// listAtom is an atom written in a list literal.
	listAtom = regexp.MustCompile(`[\[,|]\s*:(\w+)`)
)

// excludedTags lists the tags a line excludes from test runs: ExUnit's
// exclude: option (ExUnit.start, configure, config) or mix test
// --exclude/--only in CI and scripts.
func excludedTags(path string, l Line) []string {
	var out []string
	text := l.Text
	if elixirFile(path) {
		for _, m := range excludeList.FindAllStringSubmatch(l.code, -1) {
			for _, t := range tagName.FindAllStringSubmatch(m[1], -1) {
				out = append(out, t[1])
			}
		}
	}
	// A test_helper.exs that builds its exclusion in a variable (exclude =
	// if System.get_env("CI"), do: [:flaky_on_ci | exclude], else: exclude)
	// excludes each tag the lists of that line name.
	if strings.HasSuffix(path, "test_helper.exs") && excludeVar.MatchString(l.code) {
		for _, m := range listAtom.FindAllStringSubmatch(l.code, -1) {
			out = append(out, m[1])
		}
	}
	if configFile(path) || strings.HasSuffix(path, "mix.exs") || strings.Contains(text, "mix test") {
		for _, m := range excludeCLI.FindAllStringSubmatch(text, -1) {
			out = append(out, strings.TrimPrefix(m[1], ":"))
		}
	}
	return out
}

// exclusions: tags newly excluded from test runs.
func exclusions(c change) []Finding {
	var out []Finding
	for _, b := range c.blocks {
		was := map[string]bool{}
		for _, l := range b.removed {
			for _, t := range excludedTags(c.path, l) {
				was[t] = true
			}
		}
		for _, l := range b.added {
			for _, t := range excludedTags(c.path, l) {
				if !was[t] && !c.runElsewhere(t) {
					out = append(out, c.finding("tag-excluded", Concern, l, "tests tagged "+t+" no longer run: the flaky test is excluded, not fixed"))
					break
				}
			}
		}
	}
	return out
}

var testDef = regexp.MustCompile(`^\s*(test|property|feature)\s+("|~s|~S)`)

// deletedTests: tests or whole test files removed. A test added in
// another file of the same diff, by its name, moved and is not counted.
func deletedTests(c change) []Finding {
	if !c.test {
		return nil
	}
	if c.file.Deleted() {
		tests, moved := 0, 0
		for _, l := range c.removed() {
			if testDef.MatchString(l.Text) {
				tests++
				if c.movedTo(l.Text) {
					moved++
				}
			}
		}
		if tests > 0 && moved == tests {
			return nil // split or moved: every test is added in another file of the diff
		}
		for _, l := range c.removed() {
			return []Finding{c.finding("test-deleted", Concern, l, "the whole test file is deleted")}
		}
		return []Finding{{Rule: "test-deleted", Severity: Concern, File: c.path, Why: "the whole test file is deleted"}}
	}
	if strings.HasSuffix(c.file.OldPath, "_test.exs") && !strings.HasSuffix(c.file.NewPath, "_test.exs") {
		return []Finding{{Rule: "test-deleted", Severity: Concern, File: c.path, Text: c.file.OldPath + " → " + c.file.NewPath,
			Why: "the test file is renamed to a name mix test does not run (only *_test.exs files are)"}}
	}
	if f := fewerGenerated(c); f != nil {
		return []Finding{*f}
	}
	var gone []Line
	kept := 0
	for _, l := range c.removed() {
		if testDef.MatchString(l.Text) && !c.movedTo(l.Text) {
			gone = append(gone, l)
		}
	}
	for _, l := range c.added() {
		if testDef.MatchString(l.Text) {
			kept++
		}
	}
	if len(gone) <= kept || c.testsStay(gone) {
		return nil
	}
	return []Finding{c.finding("test-deleted", Concern, gone[kept], fmt.Sprintf("%d %s removed and %d added: a test that is gone cannot flake", len(gone), plural(len(gone), "test", "tests"), kept))}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
