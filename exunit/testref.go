// Package exunit understands the names ExUnit gives to tests: the
// `path/to/file_test.exs:LINE` references users paste into issues.
package exunit

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// MaxRefsPerText bounds how many tests one issue may name, so a pasted log
// cannot start dozens of runs.
const MaxRefsPerText = 10

// TestRef names one ExUnit test the way `mix test path:line` accepts it.
// Only values that passed validation are ever stored in a TestRef.
type TestRef struct {
	Path string
	Line int
}

// String renders the reference as `path:line`.
func (t TestRef) String() string { return t.Path + ":" + strconv.Itoa(t.Line) }

// Rejected is a mention that looks like a test path but cannot be used,
// with the reason shown to the user.
type Rejected struct {
	Text   string
	Reason string
}

var (
	validRef   = regexp.MustCompile(`^((?:apps/[a-z0-9_]+/)?test/(?:[A-Za-z0-9_][A-Za-z0-9_-]*/)*[A-Za-z0-9_][A-Za-z0-9_-]*_test\.exs):([0-9]+)$`)
	blobLink   = regexp.MustCompile(`^https://github\.com/[^/]+/[^/]+/blob/[^/]+/(.+_test\.exs)#L([0-9]+)(?:-L[0-9]+)?$`)
	allowedRef = regexp.MustCompile(`^[A-Za-z0-9_./:-]+$`)
)

// isBoundary reports whether r ends a token: whitespace and the punctuation
// Markdown puts around code. Shell metacharacters, parentheses included, are
// deliberately not boundaries, so a mention containing them is seen whole
// and rejected; parentheses around a whole mention are trimmed.
func isBoundary(r byte) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '`', '"', '\'', '[', ']', '<', '>', ',', '*':
		return true
	}
	return false
}

// ExtractTestRefs finds every mention of an ExUnit test file in text and
// splits them into valid references (deduplicated, in order of appearance,
// at most MaxRefsPerText) and rejected mentions with a reason each.
func ExtractTestRefs(text string) (refs []TestRef, rejected []Rejected) {
	seen := map[TestRef]bool{}
	rest := text
	offset := 0
	for {
		i := strings.Index(rest, "_test.exs")
		if i < 0 {
			return refs, rejected
		}
		at := offset + i
		start := at
		for start > 0 && !isBoundary(text[start-1]) {
			start--
		}
		end := at + len("_test.exs")
		for end < len(text) && !isBoundary(text[end]) {
			end++
		}
		token := strings.TrimLeft(text[start:end], "(")
		token = strings.TrimRight(token, ".:;!?)")
		offset = end
		rest = text[end:]

		ref, err := ParseTestRef(token)
		switch {
		case err != nil:
			rejected = append(rejected, Rejected{Text: clip(token), Reason: err.Error()})
		case seen[ref]:
		case len(refs) >= MaxRefsPerText:
			rejected = append(rejected, Rejected{Text: ref.String(), Reason: fmt.Sprintf("only the first %d tests of an issue are taken", MaxRefsPerText)})
		default:
			seen[ref] = true
			refs = append(refs, ref)
		}
	}
}

// ParseTestRef validates one mention: `test/...:LINE`, `apps/<app>/test/...:LINE`
// (umbrella projects), an optional leading `./`, or a GitHub blob link with
// a `#L<line>` anchor.
func ParseTestRef(token string) (TestRef, error) {
	if m := blobLink.FindStringSubmatch(token); m != nil {
		token = m[1] + ":" + m[2]
	}
	token = strings.TrimPrefix(token, "./")
	switch {
	case strings.Contains(token, ".."):
		return TestRef{}, fmt.Errorf("contains `..`")
	case !allowedRef.MatchString(token):
		return TestRef{}, fmt.Errorf("contains characters a test path cannot have")
	case strings.HasPrefix(token, "/"):
		return TestRef{}, fmt.Errorf("is an absolute path; write it relative to the project root")
	case !strings.Contains(token, "_test.exs:"):
		return TestRef{}, fmt.Errorf("has no line number; write it as path_test.exs:LINE")
	}
	m := validRef.FindStringSubmatch(token)
	if m == nil {
		return TestRef{}, fmt.Errorf("is not under `test/` or `apps/<app>/test/`")
	}
	line, err := strconv.Atoi(m[2])
	if err != nil || line < 1 || line > 1_000_000 {
		return TestRef{}, fmt.Errorf("has a line number out of range")
	}
	return TestRef{Path: m[1], Line: line}, nil
}

func clip(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
