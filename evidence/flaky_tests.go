package evidence

import (
	"fmt"
	"regexp"
	"strings"
)

// The flaky rules about what a fix does to the tests themselves: retry
// them, skip or exclude them, delete or loosen them, run them alone.

var retryCall = regexp.MustCompile(`(?:^|[^\w.:])(?:defp?\s+)?(retry|retry_\w+|with_retr\w*|\w+_with_retr\w*|eventually|eventually_\w+|assert_eventually|wait_until\w*|wait_for\w*|poll|poll_until\w*|until_\w+|repeat_until)[!?]?\s*\(`)

// retries: a retry or polling loop added to a test, or reduce_while
// around a sleep.
func retries(c change) []Finding {
	if !c.test {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		sleepy := false
		for _, l := range b.added {
			if _, ok := c.callTimeout(l.code, sleepCalls, 0, -1); ok {
				sleepy = true
			}
		}
		for _, l := range b.added {
			line := l.code
			switch {
			case retryCall.MatchString(line) && !strings.HasPrefix(strings.TrimSpace(line), "@"):
				out = append(out, c.finding("retry-loop", Concern, l, "the test tries again until it passes: the flake is retried, not fixed"))
			case sleepy && (indexWord(line, "Enum.reduce_while") >= 0 || indexWord(line, "Stream.repeatedly") >= 0 || strings.Contains(line, "for _ <-")):
				out = append(out, c.finding("retry-loop", Concern, l, "a loop with a sleep in it polls until the test passes: the flake is retried, not fixed"))
			}
		}
	}
	return out
}

var (
	rescueLine = regexp.MustCompile(`^\s*(rescue|catch)\b|\b(rescue|catch)\s*(_|e|error|ExUnit\.AssertionError|:exit|kind)\b|\btry\s+do\b`)
	assertion  = regexp.MustCompile(`^\s*(assert|refute)\w*\b`)
)

// rescues: rescue or catch added in a test, a concern when the test's
// assertions sit in it (an assertion that fails is then swallowed).
func rescues(c change) []Finding {
	if !c.test {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		asserts := false
		for _, l := range b.added {
			if assertion.MatchString(l.code) || strings.Contains(l.Text, "AssertionError") {
				asserts = true
			}
		}
		for _, l := range b.added {
			if !rescueLine.MatchString(l.code) {
				continue
			}
			if asserts {
				out = append(out, c.finding("rescue-around-assertion", Concern, l, "a rescue or catch around assertions lets a failing assertion pass"))
			} else {
				out = append(out, c.finding("rescue-in-test", Note, l, "a rescue or catch in a test can hide the failure it is meant to show"))
			}
		}
	}
	return out
}

var skipTag = regexp.MustCompile(`^\s*@(tag|moduletag|describetag)\s+(.*[\s,\[])?(:skip\b|skip:|:pending\b|pending:|:wip\b)`)

// skips: a test, describe block or module tagged to be skipped.
func skips(c change) []Finding {
	var out []Finding
	for _, l := range c.added() {
		if skipTag.MatchString(l.code) {
			out = append(out, c.finding("test-skipped", Concern, l, "the test is skipped: it no longer runs, so it can no longer flake or fail"))
		}
	}
	return out
}

var (
	excludeList = regexp.MustCompile(`\bexclude:\s*(\[[^\]]*\]|:\w+|\w+:\s*\w+)`)
	excludeCLI  = regexp.MustCompile(`--(?:exclude|only)[= ]+([\w:.-]+)`)
	tagName     = regexp.MustCompile(`:?(\w+)`)
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
				if !was[t] {
					out = append(out, c.finding("tag-excluded", Concern, l, "tests tagged "+t+" no longer run: the flaky test is excluded, not fixed"))
					break
				}
			}
		}
	}
	return out
}

var testDef = regexp.MustCompile(`^\s*(test|property|feature)\s+("|~s|~S)`)

// deletedTests: tests or whole test files removed.
func deletedTests(c change) []Finding {
	if !c.test {
		return nil
	}
	if c.file.Deleted() {
		for _, l := range c.removed() {
			return []Finding{c.finding("test-deleted", Concern, l, "the whole test file is deleted")}
		}
		return []Finding{{Rule: "test-deleted", Severity: Concern, File: c.path, Why: "the whole test file is deleted"}}
	}
	if strings.HasSuffix(c.file.OldPath, "_test.exs") && !strings.HasSuffix(c.file.NewPath, "_test.exs") {
		return []Finding{{Rule: "test-deleted", Severity: Concern, File: c.path, Text: c.file.OldPath + " → " + c.file.NewPath,
			Why: "the test file is renamed to a name mix test does not run (only *_test.exs files are)"}}
	}
	var gone []Line
	kept := 0
	for _, l := range c.removed() {
		if testDef.MatchString(l.Text) {
			gone = append(gone, l)
		}
	}
	for _, l := range c.added() {
		if testDef.MatchString(l.Text) {
			kept++
		}
	}
	if len(gone) <= kept {
		return nil
	}
	return []Finding{c.finding("test-deleted", Concern, gone[kept], fmt.Sprintf("%d %s removed and %d added: a test that is gone cannot flake", len(gone), plural(len(gone), "test", "tests"), kept))}
}

// deletedAssertions: fewer assertions in a test file than before.
func deletedAssertions(c change) []Finding {
	if !c.test || c.file.Deleted() {
		return nil
	}
	var gone []Line
	added := 0
	for _, l := range c.removed() {
		if assertion.MatchString(l.code) {
			gone = append(gone, l)
		}
	}
	for _, l := range c.added() {
		if assertion.MatchString(l.code) {
			added++
		}
	}
	if len(gone) <= added {
		return nil
	}
	return []Finding{c.finding("assertion-deleted", Concern, gone[0], fmt.Sprintf("%d %s removed and %d added: the test checks less than before", len(gone), plural(len(gone), "assertion", "assertions"), added))}
}

// strength orders assertions from strict to loose: equality on a value,
// then a match or a regex, then a comparison or a type check, then mere
// truthiness.
func strength(line string) (score, wildcards int) {
	s := line
	switch {
	case strings.Contains(s, "==="), strings.Contains(s, "=="):
		score = 4
	case indexWord(s, "assert_receive") >= 0, indexWord(s, "assert_received") >= 0, strings.Contains(s, "match?("), matchAssert.MatchString(s):
		score = 3
	case strings.Contains(s, "=~"):
		score = 3
	case looseAssert.MatchString(s):
		score = 2
	default:
		score = 1
	}
	return score, len(wildcard.FindAllString(s, -1))
}

var (
	matchAssert = regexp.MustCompile(`^\s*assert\s+[%{\[].*[^=!<>]=[^=~]`)
	looseAssert = regexp.MustCompile(`!=|>=|<=|[^-=]>|<[^-=>]|\bis_\w+\(|\blength\(|\bnot\b|\bin\b`)
	wildcard    = regexp.MustCompile(`(^|[^\w])_(\w*)`)
)

// weakenedAssertions: an assertion replaced by a looser one: == turned
// into a match, a comparison or truthiness, or a pattern given more
// wildcards. Each removed assertion is compared with the added one most
// like it (same macro, most names in common), so unrelated new
// assertions are not read as replacements.
func weakenedAssertions(c change) []Finding {
	if !c.test {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		was, now := asserts(b.removed), asserts(b.added)
		used := map[int]bool{}
		for _, w := range was {
			best, bestScore := -1, 0.5
			for i, n := range now {
				if used[i] || w.macro != n.macro {
					continue
				}
				if sim := similarity(w.words, n.words); sim >= bestScore {
					best, bestScore = i, sim
				}
			}
			if best < 0 {
				continue
			}
			used[best] = true
			n := now[best]
			s0, w0 := strength(w.line.code)
			s1, w1 := strength(n.line.code)
			switch {
			case s1 < s0:
				out = append(out, c.finding("assertion-weakened", Concern, n.line, "the assertion checks less than the one it replaces ("+strings.TrimSpace(w.line.Text)+"): it may pass without the behaviour"))
			case s1 == s0 && w1 > w0:
				out = append(out, c.finding("assertion-weakened", Concern, n.line, "the pattern accepts more than the one it replaces ("+strings.TrimSpace(w.line.Text)+"): a wildcard took a value's place"))
			}
		}
	}
	return out
}

// maxPaired bounds the assertions of a block compared pairwise.
const maxPaired = 200

// assertLine is an assert-family assertion with what pairing reads of it.
// refute is left out: a looser refutation is a stricter test.
type assertLine struct {
	line  Line
	macro string
	words map[string]bool
}

func asserts(lines []Line) []assertLine {
	var out []assertLine
	for _, l := range lines {
		m := macro(l.code)
		if m == "" || strings.HasPrefix(m, "refute") {
			continue
		}
		words := map[string]bool{}
		for _, w := range word.FindAllString(l.code, -1) {
			words[w] = true
		}
		if out = append(out, assertLine{l, m, words}); len(out) == maxPaired {
			break
		}
	}
	return out
}

var word = regexp.MustCompile(`[A-Za-z_][\w?!]*`)

// macro is an assertion's macro: assert, refute, assert_receive, ...; ""
// for a line that is not an assertion.
func macro(line string) string { return assertion.FindString(strings.TrimSpace(line)) }

// similarity is the share of names two lines have in common (Jaccard).
func similarity(x, y map[string]bool) float64 {
	common := 0
	for w := range x {
		if y[w] {
			common++
		}
	}
	if union := len(x) + len(y) - common; union > 0 {
		return float64(common) / float64(union)
	}
	return 0
}

var (
	asyncFalse = regexp.MustCompile(`^\s*use\s+[\w.]+,.*\basync:\s*false\b`)
	asyncTrue  = regexp.MustCompile(`^\s*use\s+[\w.]+,.*\basync:\s*true\b`)
	useCase    = regexp.MustCompile(`^\s*use\s+[\w.]*(Case|Test)\b`)
	// globalState is what makes tests of one module interfere with others
	// running at the same time.
	globalState = []struct {
		pattern *regexp.Regexp
		what    string
	}{
		{regexp.MustCompile(`\bApplication\.(put_env|delete_env|put_all_env)\b`), "Application.put_env"},
		{regexp.MustCompile(`\bSystem\.(put_env|delete_env)\b`), "System.put_env"},
		{regexp.MustCompile(`\b(Mox\.)?set_mox_global\b`), "Mox.set_mox_global"},
		{regexp.MustCompile(`:named_table\b`), "a named ETS table"},
		{regexp.MustCompile(`:persistent_term\.(put|erase)\b`), ":persistent_term"},
		{regexp.MustCompile(`\bProcess\.register\b|\bname:\s*(__MODULE__|[A-Z][\w.]*|\{:global|\{:via)`), "a named process"},
		{regexp.MustCompile(`\bLogger\.(configure|put_module_level|add_backend)\b|\bcapture_log\b`), "the Logger configuration"},
		{regexp.MustCompile(`\b:global\.register_name\b`), "a globally registered name"},
		{regexp.MustCompile(`\bEcto\.Adapters\.SQL\.Sandbox\.mode\([^,]+,\s*\{:shared`), "the shared SQL sandbox mode"},
		{regexp.MustCompile(`\bFile\.(write|rm|mkdir)`), "the file system"},
	}
)

// asyncOff: a test module made synchronous. A note when the diff shows it
// touching global state (what async: false protects), a concern when it
// shows none: then the change may only hide a race in the code under
// test.
func asyncOff(c change) []Finding {
	if !c.test {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		wasAsync := false
		for _, l := range b.removed {
			wasAsync = wasAsync || asyncTrue.MatchString(l.code)
		}
		for _, l := range b.added {
			line := l.code
			off := (asyncFalse.MatchString(line) && c.file.OldPath != "") || wasAsync && useCase.MatchString(line) && !asyncTrue.MatchString(line)
			if !off {
				continue
			}
			if len(c.touched) > 0 {
				out = append(out, c.finding("async-disabled", Note, l, "the module now runs alone; it touches "+strings.Join(c.touched, ", ")+", which tests running at the same time would share"))
			} else {
				out = append(out, c.finding("async-disabled", Concern, l, "the module now runs alone, but the diff shows it touching no global state: running serially may only hide a race in the code under test"))
			}
		}
	}
	return out
}

// touches lists the global state lines touch.
func touches(lines []Line) []string {
	var what []string
	for _, g := range globalState {
		for _, l := range lines {
			if g.pattern.MatchString(l.code) {
				what = append(what, g.what)
				break
			}
		}
	}
	return what
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
