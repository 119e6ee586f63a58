package evidence

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// A CI can stop running the flaky test without touching it or the test
// command: the job or step that runs the tests is made to run only on
// the main branch or a schedule, the workflow stops running on pull
// requests, or the matrix excludes a combination it ran.

var (
	// narrowingCondition is a job or step condition that leaves pull
	// requests out: the main branch, tags, a schedule, a manual run, a
	// push only.
	narrowingCondition = regexp.MustCompile(`schedule|nightly|workflow_dispatch|refs/(heads|tags)/|['"](main|master|trunk)['"]|[!=]=\s*['"]?(pull_request|push)\b|CI_DEFAULT_BRANCH|CI_COMMIT_TAG|CIRCLE_BRANCH|BUILDKITE_(BRANCH|SOURCE)`)
	// dedupedRun is a condition that only avoids running the same commit
	// twice (a push and the pull request of a branch of the repository)
	// or honours [skip ci]: pull requests still run the tests.
	dedupedRun = regexp.MustCompile(`head\.repo|full_name|fork|skip ci|ci skip`)
	// pullRequestTrigger names pull requests among a workflow's triggers.
	pullRequestTrigger = regexp.MustCompile(`^\s*(-\s*)?['"]?pull_request(_target)?['"]?\s*:?\s*(#.*)?$|^on:.*\bpull_request\b`)
)

// testsGatedByEvent: a condition added to a CI job or step that runs the
// tests (if:, GitLab's rules: - if:, only:) that leaves pull requests out:
// the flaky test no longer runs where the fix is reviewed. A condition
// the block had before (reworded, a branch renamed) or two added
// conditions that complete each other (one step for pushes, one for pull
// requests) are left alone.
func testsGatedByEvent(c change) []Finding {
	if !yamlFile(c.path) || !c.ci || strings.Contains(c.path, "compose") {
		return nil
	}
	for _, l := range c.removed() {
		if k := yamlKey(l.Text); (k == "if" || k == "only") && narrowingCondition.MatchString(l.Text) {
			return nil
		}
	}
	lines, at, o := c.outlineView()
	conditions, added, removed := map[string]bool{}, c.addedLines(), map[string]bool{}
	for _, l := range c.added() {
		conditions[squashSpace(l.Text)] = true
	}
	for _, l := range c.removed() {
		removed[unitName(l.Text)] = true
	}
	var out []Finding
	for _, l := range c.added() {
		key := yamlKey(l.Text)
		i, ok := at[l.New]
		if !ok || key != "if" && key != "only" || c.removedSame(l) || dedupedRun.MatchString(l.Text) {
			continue
		}
		if key == "if" && (!narrowingCondition.MatchString(l.Text) || conditions[complement(squashSpace(l.Text))]) {
			continue
		}
		// A job or step the diff adds, not one rewritten from a removed
		// line (a release job that tests before it publishes), runs the
		// tests where none ran before.
		if unit := o.gatedUnit(i); unit >= 0 && !(added[lines[unit].New] && !removed[unitName(lines[unit].Text)]) && o.runsTestsAt(unit) {
			out = append(out, c.finding("test-skipped", Concern, l, "the tests here now run only when this holds ("+strings.TrimSpace(l.Text)+"): not on the pull request, where the flaky test is reviewed"))
		}
	}
	return out
}

// unitName is a job or step's first line as its name: - test and
// - test: (made so to take a filter) are one.
func unitName(line string) string { return strings.TrimSuffix(squashSpace(line), ":") }

// complement is a condition with == and != swapped.
func complement(cond string) string {
	return strings.NewReplacer("==", "!=", "!=", "==").Replace(cond)
}

// gatedUnit is the job or step a condition on line i belongs to: its
// nearest parent that is a list entry, a job under jobs:, or a top-level
// key (a GitLab job); -1 for none.
func (o *outline) gatedUnit(i int) int {
	for j, depth := o.parent[i], 0; j >= 0 && depth < maxDepth; j, depth = o.parent[j], depth+1 {
		if strings.HasPrefix(strings.TrimSpace(o.lines[j].Text), "- ") || indentOf(o.lines[j].Text) == 0 {
			return j
		}
		if p := o.parent[j]; p >= 0 && o.keys[p] == "jobs" {
			return j
		}
	}
	return -1
}

// runsTestsAt reports whether the job or step opened at line j runs the
// tests: on its line, in its block, or (a CircleCI workflow naming a job
// defined under jobs:) in the job it names.
func (o *outline) runsTestsAt(j int) bool {
	if testCommand.MatchString(o.lines[j].Text) || o.testsIn(j) {
		return true
	}
	name := o.keys[j]
	if name == "" {
		name = strings.Trim(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(o.lines[j].Text), "- ")), `'"`)
	}
	o.testJobsOnce.Do(func() {
		o.testJobs = map[string]bool{}
		for k := range o.lines {
			if o.keys[k] != "" && o.parent[k] >= 0 && o.keys[o.parent[k]] == "jobs" && o.testsIn(k) {
				o.testJobs[o.keys[k]] = true
			}
		}
	})
	return o.testJobs[name]
}

// pullRequestsDropped: a workflow that runs the tests no longer runs on
// pull requests: the trigger is removed and the file at head names it
// nowhere among its triggers.
func pullRequestsDropped(c change) []Finding {
	if !strings.HasPrefix(c.path, ".github/workflows/") {
		return nil
	}
	lines, _, o := c.outlineView()
	if o.tests[len(lines)] == 0 {
		return nil
	}
	for _, l := range lines {
		if strings.HasPrefix(l.Text, "jobs:") {
			break
		}
		if strings.Contains(l.Text, "pull_request") {
			return nil
		}
	}
	for _, l := range c.removed() {
		if pullRequestTrigger.MatchString(l.Text) {
			return []Finding{c.finding("test-skipped", Concern, l, "this workflow runs the tests and no longer runs on pull requests: the flaky test is not run where the fix is reviewed")}
		}
	}
	return nil
}

// matrixExcluded: an entry added to a test job's matrix exclude: list
// that names only values the matrix already had: a combination the CI ran
// no longer runs. An exclusion of a version the diff adds (a new Elixir
// not built for an old OTP) is how a matrix grows.
func matrixExcluded(c change) []Finding {
	if !yamlFile(c.path) || !c.ci {
		return nil
	}
	lines, at, o := c.outlineView()
	added := c.addedLines()
	for _, l := range c.added() {
		i, ok := at[l.New]
		travis := c.path == ".travis.yml" // its matrix expands the file's own script
		if !ok || !strings.HasPrefix(strings.TrimSpace(l.Text), "- ") || !o.under(i, "exclude") || !o.under(i, "matrix") && !travis {
			continue
		}
		end := o.end[i]
		newValues := false
		for k := i; k < end; k++ {
			if indentOf(lines[k].Text) < 0 {
				continue // blank or a comment
			}
			if !added[lines[k].New] {
				newValues = true // an entry that was there, given another line
				break
			}
			if v := yamlValue(lines[k].Text); v != "" && addedValues(c, o, at)[v] {
				newValues = true
				break
			}
		}
		strategy := o.parentKeyed(i, "strategy")
		if newValues || strategy < 0 && !travis {
			continue
		}
		if job := o.gatedUnit(max(strategy, 0)); travis && o.tests[len(lines)] > 0 || !travis && job >= 0 && o.runsTestsAt(job) {
			return []Finding{c.finding("test-skipped", Concern, l, "the matrix now excludes a combination it ran ("+strings.TrimSpace(l.Text)+"): the tests no longer run there")}
		}
	}
	return nil
}

// yamlValue is what follows a YAML line's key, quotes trimmed.
func yamlValue(line string) string {
	k := yamlKey(line)
	if k == "" {
		return ""
	}
	_, v, _ := strings.Cut(line, k+":")
	return strings.Trim(strings.TrimSpace(v), `'"`)
}

// addedValues are the words (versions included) of the lines the diff
// adds outside a matrix's exclude: lists, read once per change.
func addedValues(c change, o *outline, at map[int]int) map[string]bool {
	o.addedOnce.Do(func() {
		o.added = map[string]bool{}
		for _, l := range c.added() {
			if i, ok := at[l.New]; ok && o.under(i, "exclude") {
				continue
			}
			for _, w := range strings.FieldsFunc(l.Text, func(r rune) bool {
				return !(r == '.' || r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r))
			}) {
				o.added[w] = true
			}
		}
	})
	return o.added
}

var (
	// partitionCount is the number of partitions a test command splits
	// the suite into.
	partitionCount = regexp.MustCompile(`--partitions[= ]+([0-9]+)`)
	// intList is a YAML key given an inline list of numbers.
	intList = regexp.MustCompile(`^\s*(?:-\s+)?([\w-]+):\s*\[\s*([0-9][0-9,\s]*)\]`)
)

// partitionsDropped: a matrix's list of partitions made shorter while the
// test command still splits the suite into as many: the tests of the
// partitions left out no longer run.
func partitionsDropped(c change) []Finding {
	if !yamlFile(c.path) || !c.ci {
		return nil
	}
	lines, _ := c.headView()
	parts := 0
	for _, l := range lines {
		if m := partitionCount.FindStringSubmatch(l.Text); m != nil && testCommand.MatchString(l.Text) {
			parts, _ = strconv.Atoi(m[1])
		}
	}
	if parts == 0 {
		return nil
	}
	for _, b := range c.blocks {
		had := map[string]int{}
		for _, l := range b.removed {
			if m := intList.FindStringSubmatch(l.Text); m != nil {
				had[m[1]] = len(strings.FieldsFunc(m[2], func(r rune) bool { return r == ',' || r == ' ' }))
			}
		}
		for _, l := range b.added {
			m := intList.FindStringSubmatch(l.Text)
			if m == nil {
				continue
			}
			if now := len(strings.FieldsFunc(m[2], func(r rune) bool { return r == ',' || r == ' ' })); now < had[m[1]] && now < parts {
				return []Finding{c.finding("test-skipped", Concern, l, fmt.Sprintf("the matrix now runs %d of the %d partitions the test command splits the suite into: the tests of the others no longer run", now, parts))}
			}
		}
	}
	return nil
}
