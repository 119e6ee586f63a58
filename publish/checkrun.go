package publish

import (
	"fmt"
	"strings"

	"github.com/pitcrew/pitcrew/runs"
)

// maxCheckSummary is GitHub's limit on a check run's summary.
const maxCheckSummary = 65535

// RenderCheckRun writes the title and Markdown summary of the check run
// that reports a CI run's flaky tests: per test, its name and module, the
// failed attempt's seed and first failure lines, how often it has flaked,
// and its fix run.
func RenderCheckRun(v runs.View) (title, summary string) {
	st, byID, now := v.Status, v.Runs, v.Now
	var b strings.Builder
	if len(st.Entries) == 0 {
		title = "No flaky test found"
		b.WriteString(st.Notice + "\n")
		writeSetAside(&b, st.Rejected)
		return title, b.String()
	}
	started := 0
	for _, e := range st.Entries {
		if e.Relation == runs.ClaimNew {
			started++
		}
	}
	title = fmt.Sprintf("%d flaky %s, %d new fix %s", len(st.Entries), Plural(len(st.Entries), "test", "tests"), started, Plural(started, "run", "runs"))
	fmt.Fprintf(&b, "These tests failed in an earlier attempt of %s on this commit and passed on re-run. pitcrew sends an agent to fix each one; this check never blocks a merge.\n", st.Heading)
	for _, e := range st.Entries {
		fmt.Fprintf(&b, "\n### `%s`\n", e.About)
		if e.Name != "" {
			fmt.Fprintf(&b, "%s (%s)", Text(e.Name, 200), Code(e.Module, 200))
		}
		if e.Seed != nil {
			fmt.Fprintf(&b, " · seed `%d`", *e.Seed)
		}
		fmt.Fprintf(&b, " · seen flaking %d %s\n", e.Sightings, Plural(int(e.Sightings), "time", "times"))
		if owners := OwnersNamed(e.Owners); owners != "" {
			b.WriteString("\n" + owners + ".\n")
		}
		if len(e.Excerpt) > 0 {
			b.WriteString("\n" + CodeBlock(e.Excerpt))
		}
		b.WriteString("\nFix: ")
		if r, ok := byID[e.RunID]; ok {
			b.WriteString(describeRun(e, r, st.Label, now) + "\n")
		} else if e.Note != "" {
			b.WriteString(e.Note + ".\n")
		} else {
			b.WriteString("the run record has expired.\n")
		}
	}
	writeSetAside(&b, st.Rejected)
	writeUnreadAnswers(&b, st, byID)
	return title, Clip(b.String(), maxCheckSummary)
}

// writeSetAside lists the failures that were not taken for flaky tests,
// each with why.
func writeSetAside(b *strings.Builder, notes []string) {
	if len(notes) == 0 {
		return
	}
	b.WriteString("\nNot counted as flaky:\n")
	for _, n := range notes {
		b.WriteString("- " + n + "\n")
	}
}

// Plural picks the singular or plural form of a word for n.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
