package evidence

import (
	"regexp"
	"strings"
)

// A test tagged with a tag the suite excludes no longer runs: the tag is
// a skip, whatever it is called (:integration, :external), when the
// project's test_helper.exs excludes it.

// addedTag is a tag line's tags: @tag :integration, @moduletag
// external: true.
var addedTag = hinted{regexp.MustCompile(`^\s*@(?:tag|moduletag|describetag)\s+(.*)$`), []string{"tag"}}

// tagsOf lists the tags a tag line sets (true-valued keys and atoms).
func tagsOf(opts string) []string {
	var out []string
	for _, m := range tagValue.FindAllStringSubmatch(opts, -1) {
		out = append(out, m[1]+m[2])
	}
	return out
}

var tagValue = regexp.MustCompile(`(?:^|[\s\[,])(?::(\w+)|(\w+):\s*true\b)`)

// suiteHelper is the test_helper.exs that runs a test file: the one in
// its project's test/ folder (an umbrella app's own).
func suiteHelper(testPath string) string {
	if i := strings.LastIndex(testPath, "test/"); i >= 0 && (i == 0 || testPath[i-1] == '/') {
		return testPath[:i] + "test/test_helper.exs"
	}
	return ""
}

// suiteExcludes reads the tags each test_helper.exs read at head excludes
// (ExUnit.start(exclude: [...]), ExUnit.configure), by its path.
func suiteExcludes(head map[string]string) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for p, content := range head {
		if !strings.HasSuffix(p, "test_helper.exs") {
			continue
		}
		var read strings.Builder
		for _, l := range strings.Split(content, "\n") {
			read.WriteString(code(l) + " ")
		}
		tags := map[string]bool{}
		for _, m := range excludeList.FindAllStringSubmatch(squashSpace(read.String()), -1) {
			for _, t := range tagName.FindAllStringSubmatch(m[1], -1) {
				tags[t[1]] = true
			}
		}
		for _, t := range excludedByVariable(strings.Split(content, "\n")) {
			tags[t] = true
		}
		out[p] = tags
	}
	return out
}

// excludedByVariable is what a test_helper.exs that builds its exclusion
// in a variable may exclude: each atom of a list in the assignment, over
// the lines indented under it (exclude = if ... do [] else [:slow] end).
func excludedByVariable(lines []string) []string {
	var out []string
	for i, l := range lines {
		if !excludeVar.MatchString(code(l)) {
			continue
		}
		indent := len(l) - len(strings.TrimLeft(l, " \t"))
		for j := i; j < len(lines) && j < i+maxJoined; j++ {
			next := lines[j]
			if j > i && (strings.TrimSpace(next) == "" || len(next)-len(strings.TrimLeft(next, " \t")) <= indent) {
				break
			}
			for _, m := range listAtom.FindAllStringSubmatch(code(next), -1) {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// runElsewhere reports whether the diff adds a run of the tests tagged t
// (a CI job's mix test --only t or --include t): excluded from the main
// run, they still run.
func (c change) runElsewhere(t string) bool { return c.diff.runTags[t] }

// tagRun is a test command's choice of tags to run.
var tagRun = hinted{regexp.MustCompile(`--(?:only|include)[= ]+:?(\w+)`), []string{"--only", "--include"}}

// addsTag reports whether a change adds a tag line.
func addsTag(c change) bool {
	for _, l := range c.added() {
		if addedTag.MatchString(l.code) {
			return true
		}
	}
	return false
}

// tagsExcludedBySuite: a test, describe or module given a tag its
// test_helper.exs excludes: it no longer runs.
func tagsExcludedBySuite(c change) []Finding {
	if !c.test || !strings.HasSuffix(c.path, "_test.exs") {
		return nil
	}
	excluded := c.diff.suiteTags[suiteHelper(c.path)]
	if len(excluded) == 0 {
		return nil
	}
	var out []Finding
	for _, l := range c.added() {
		m := addedTag.FindStringSubmatch(l.code)
		if m == nil || c.removedSame(l) {
			continue
		}
		for _, t := range tagsOf(m[1]) {
			if excluded[t] && !c.runElsewhere(t) {
				out = append(out, c.finding("test-skipped", Concern, l, "test_helper.exs excludes the tag "+t+": what it tags no longer runs"))
				break
			}
		}
	}
	return out
}

// conditionLine opens an if or unless; orTerm joins its conditions.
var (
	conditionLine = regexp.MustCompile(`^\s*(?:\w+\s*=\s*)?(?:if|unless)\b.*\bdo\s*$`)
	orTerm        = regexp.MustCompile(`\bor\b|\|\|`)
)

// exclusionWidened: in test_helper.exs, the condition under which the
// suite excludes tags made to hold more often: an environment variable
// now read in it, or another `or`. Wherever it holds (CI included), the
// tests so tagged stop running.
func exclusionWidened(c change) []Finding {
	if !strings.HasSuffix(c.path, "test_helper.exs") || c.head == nil {
		return nil
	}
	var out []Finding
	read := 0 // conditions read: a helper has a few, a diff at the bounds thousands
	for _, b := range c.blocks {
		readEnv, ors := false, 0
		for _, l := range b.removed {
			readEnv = readEnv || envRead.MatchString(l.code)
			ors = max(ors, len(orTerm.FindAllString(l.code, -1)))
		}
		for _, l := range b.added {
			if !conditionLine.MatchString(l.code) || (readEnv || !envRead.MatchString(l.code)) && len(orTerm.FindAllString(l.code, -1)) <= ors {
				continue
			}
			if read++; read > maxPinned {
				return out
			}
			for _, t := range c.excludedUnder(l.New) {
				if !c.runElsewhere(t) {
					out = append(out, c.finding("tag-excluded", Concern, l, "the suite now excludes the tests tagged "+t+" whenever this holds: where it does (CI among them), they no longer run"))
					break
				}
			}
		}
	}
	return out
}

// excludedUnder lists the tags of the branch a condition on line n (at
// head) opens, when it decides what the suite excludes: the statement
// names exclude on its line or the two before.
func (c change) excludedUnder(n int) []string {
	if n < 1 || n > len(c.head) {
		return nil
	}
	context := ""
	for i := max(0, n-3); i < n; i++ {
		context += c.head[i].code + " "
	}
	if !strings.Contains(context, "exclude") {
		return nil
	}
	var out []string
	depth := indentOf(c.head[n-1].Text)
	for i := n; i < len(c.head) && i < n+50; i++ {
		t := strings.TrimSpace(c.head[i].code)
		if d := indentOf(c.head[i].Text); d >= 0 && d <= depth && (strings.HasPrefix(t, "else") || strings.HasPrefix(t, "end")) {
			break
		}
		for _, m := range tagList.FindAllStringSubmatch(c.head[i].code, -1) {
			for _, t := range tagName.FindAllStringSubmatch(m[1], -1) {
				out = append(out, t[1])
			}
		}
	}
	return out
}

// tagList is a list of atoms, as an exclude list is written.
var tagList = regexp.MustCompile(`\[\s*(:\w+(?:\s*,\s*:\w+)*)\s*\]`)
