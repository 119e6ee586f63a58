package evidence

import (
	"regexp"
	"strings"
)

var (
	// matrixForgiven is a job's continue-on-error read from its matrix:
	// continue-on-error: ${{ matrix.experimental }}.
	matrixForgiven = hinted{regexp.MustCompile(`^\s*continue-on-error:\s*\$\{\{\s*matrix\.([\w-]+)(?:\s*==\s*true)?\s*\}\}`), []string{"continue-on-error"}}
	// matrixFlag is a matrix entry's key set true.
	matrixFlag = hinted{regexp.MustCompile(`^\s*(?:-\s+)?([\w-]+):\s*true\s*(#.*)?$`), []string{"true"}}
)

// matrixAllowedToFail: in a GitHub Actions workflow whose job reads
// continue-on-error from its matrix, an entry the workflow already ran
// given that key: the entry may now fail without failing the CI. A new
// entry so marked (a pre-release tried) is left alone.
func matrixAllowedToFail(c change) []Finding {
	if !strings.HasPrefix(c.path, ".github/workflows/") {
		return nil
	}
	lines, at := c.headView()
	keys := map[string]bool{}
	for _, l := range lines {
		if m := matrixForgiven.FindStringSubmatch(l.code); m != nil {
			keys[m[1]] = true
		}
	}
	if len(keys) == 0 {
		return nil
	}
	added := c.addedLines()
	var out []Finding
	for _, l := range c.added() {
		m := matrixFlag.FindStringSubmatch(l.code)
		if m == nil || !keys[m[1]] {
			continue
		}
		if i, ok := at[l.New]; ok && entryExisted(lines, i, added) {
			out = append(out, c.finding("failure-ignored", Concern, l, "a matrix entry the CI ran is now marked "+m[1]+", which the job's continue-on-error reads: its failures no longer fail the CI"))
		}
	}
	return out
}

// entryExisted reports whether the list entry that line i (of the file
// at head) belongs to holds a line the diff did not add: the entry was
// there before.
func entryExisted(lines []Line, i int, added map[int]bool) bool {
	depth := indentOf(lines[i].Text)
	for j := i - 1; j >= 0 && j >= i-maxJoined; j-- {
		d := indentOf(lines[j].Text)
		if d < 0 {
			continue
		}
		kept := !added[lines[j].New]
		if kept && d <= depth {
			return true
		}
		if strings.HasPrefix(strings.TrimSpace(lines[j].Text), "- ") && d < depth {
			return kept
		}
	}
	return false
}
