package publish

import (
	"fmt"
	"strings"

	"github.com/pitcrew/pitcrew/internal/github"
)

// KnownFlakesCheckName is the check run that says why a failed workflow
// run's jobs were re-run, or not.
const KnownFlakesCheckName = "pitcrew / known flakes"

// KnownFlake is a known flaky test that failed in a workflow run: its fix's
// pull request (0 when none yet), how often pitcrew saw it, and why it is
// out of quarantine ("" when it is in).
type KnownFlake struct {
	Test  string
	PR    int
	PRURL string
	Seen  int64
	Out   string
}

// KnownFlakesCheck is the neutral check run on a failed run's head: the
// known flaky tests that failed and whether the failed jobs were re-run,
// with each reason they were not. why is pitcrew's own words, with any
// outside text already made safe.
func KnownFlakesCheck(workflow string, rerun bool, known []KnownFlake, why []string, held string) github.CheckOutput {
	out := github.CheckOutput{Name: KnownFlakesCheckName, Conclusion: "neutral"}
	var b strings.Builder
	names := make([]string, 0, len(known))
	for _, k := range known {
		names = append(names, k.Test)
	}
	switch {
	case rerun:
		out.Title = Line("Only known flaky tests failed: "+strings.Join(names, ", ")+"; re-ran the failed jobs", 200)
		fmt.Fprintf(&b, "Every failure of %s's failed jobs is a test pitcrew knows as flaky, whose fix is not merged yet: pitcrew re-ran the failed jobs once, so the known flake does not block this change. This check never blocks a merge.\n\n", Text(workflow, 100))
	case held != "":
		out.Title = Line("Only known flaky tests failed: "+strings.Join(names, ", ")+"; not re-run", 200)
		fmt.Fprintf(&b, "Every failure of %s's failed jobs is a test pitcrew knows as flaky, whose fix is not merged yet, but the failed jobs were not re-run: %s.\n\n", Text(workflow, 100), held)
	default:
		out.Title = Line(fmt.Sprintf("Not re-run: %d of the failures %s not a known flake in quarantine", len(why), Plural(len(why), "is", "are")), 200)
		fmt.Fprintf(&b, "Known flaky tests failed in %s, but not only they: pitcrew re-runs a failed run's jobs only when every failure is a known flaky test in quarantine. Not re-run, because:\n\n", Text(workflow, 100))
		for _, w := range why {
			b.WriteString("- " + w + "\n")
		}
		b.WriteString("\n")
	}
	b.WriteString("| known flaky test | its fix | seen | quarantine |\n|---|---|---|---|\n")
	for _, k := range known {
		fix := "no pull request yet"
		if k.PR > 0 {
			fix = fmt.Sprintf("[#%d](%s)", k.PR, SafeURL(k.PRURL))
		}
		state := "in"
		if k.Out != "" {
			state = "out: " + k.Out
		}
		fmt.Fprintf(&b, "| %s | %s | %d %s | %s |\n", Code(k.Test, 300), fix, k.Seen, Plural(int(k.Seen), "time", "times"), state)
	}
	out.Summary = Clip(b.String(), maxCheckSummary)
	return out
}
