package publish

import (
	"fmt"
	"strings"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/weburl"
)

// WithSiblings adds to an evidence check run the section "Siblings that
// share the cause": each test of the repository that shares the fix's
// cause, linked at the commit scanned, with one line of why; or what was
// not scanned. A review with neither adds nothing.
func WithSiblings(out github.CheckOutput, repo string, r evidence.Review) github.CheckOutput {
	if len(r.Siblings) == 0 && r.SiblingsNote == "" {
		return out
	}
	var b strings.Builder
	b.WriteString("\n\n### Siblings that share the cause\n")
	if r.SiblingsNote != "" {
		b.WriteString(Text(r.SiblingsNote, 300) + ".\n")
	}
	if len(r.Siblings) > 0 {
		fmt.Fprintf(&b, "Tests of the default branch (at %s) that may flake next for the same reason:\n", Code(shortSHA(r.SiblingsAt), 20))
	}
	for _, s := range r.Siblings {
		where := fmt.Sprintf("%s:%d", s.File, s.Line)
		link := SafeURL(weburl.Line(repo, r.SiblingsAt, s.File, s.Line))
		test := ""
		if s.Test != "" {
			test = " " + Code(s.Test, 120)
		}
		fmt.Fprintf(&b, "- [%s](%s)%s: %s\n", Text(where, 200), link, test, Text(s.Why, 200))
	}
	if r.MoreSiblings > 0 {
		fmt.Fprintf(&b, "- and %d more\n", r.MoreSiblings)
	}
	out.Summary = Clip(out.Summary+b.String(), maxCheckSummary)
	return out
}

func shortSHA(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
