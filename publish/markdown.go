// Package publish holds what pitcrew writes to GitHub. This file is its one
// Markdown-safety helper: every piece of text that comes from outside
// (CI logs, issue text, alert payloads, file and workflow names, the agent's
// answer) reaches a comment, an issue, or a check run only through one of
// these functions, so a hostile string cannot notify people, cross-reference
// or close issues, inject HTML or Markdown structure, break out of a code
// span, or hide what it says behind bidi and zero-width characters.
//
// It is pure and fuzzed; the rendering tests run a hostile corpus through
// every renderer that uses it.
package publish

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// zwsp is the zero-width space put after @ and # so that GitHub sees no
// mention and no issue reference; it is the one invisible character the
// helpers emit, and they strip every one they are given.
const zwsp = "\u200b"

// Line makes outside text one plain line: valid UTF-8, no control or
// invisible characters (bidi controls, zero-width characters, fillers),
// whitespace runs as one space, at most max runes plus an ellipsis. It adds
// no Markdown escaping: use it for plain-text fields (issue and check-run
// titles) and before storing text that a renderer will escape later.
func Line(s string, max int) string {
	return clip(strings.Join(strings.Fields(visible(s, true)), " "), max)
}

// Text makes outside text safe as one line of Markdown prose: Line, then
// every character Markdown or GitHub would act on is escaped: emphasis,
// links and images, code spans, HTML and entities, tables, math, strikes,
// a list or heading or quote marker at its start, and @mentions, #N and
// GH-N references and bare autolinks (which GitHub finds after rendering,
// so they get a zero-width space instead of a backslash).
func Text(s string, max int) string {
	s = autolink.ReplaceAllStringFunc(Line(s, max), func(m string) string { return m[:len(m)-1] + zwsp + m[len(m)-1:] })
	var b strings.Builder
	b.Grow(len(s) + 8)
	if m := blockStart.FindStringIndex(s); m != nil {
		b.WriteString(s[:m[1]-1] + `\`)
		s = s[m[1]-1:]
	}
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '&', '|', '~', '$', '!':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '@', '#', '＠', '＃':
			b.WriteRune(r)
			b.WriteString(zwsp)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// autolink matches what GitHub links in plain text, up to the character
// before which Text puts a zero-width space: "://", "www.", "GH-1".
var autolink = regexp.MustCompile(`(?i)(?:://|\bwww\.|\bgh-[0-9])`)

// blockStart matches what would open a list, heading, quote, setext
// underline or thematic break at the start of a line; Text escapes its last
// character.
var blockStart = regexp.MustCompile(`^(?:[-+=]|\d{1,9}[.)])`)

// Code makes outside text one inline code span: Line, delimited by a run
// of backticks longer than any inside it, padded when it starts or ends
// with a backtick. Inside a code span GitHub renders no mention, link or
// HTML, so nothing else is escaped.
func Code(s string, max int) string {
	s = Line(s, max)
	if s == "" {
		return "` `"
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// CodeBlock makes outside lines one fenced code block, its fence longer
// than any backtick run in them, each line cleaned of control and
// invisible characters (tabs kept).
func CodeBlock(lines []string) string {
	var body strings.Builder
	longest := 0
	for _, l := range lines {
		l = visible(l, false)
		longest = max(longest, longestRun(l, '`'))
		body.WriteString(l + "\n")
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + "\n" + body.String() + fence + "\n"
}

// Markdown keeps Markdown the agent wrote (its report) as written, but
// with invisible characters removed, @mentions that would notify people
// and closing keywords that would close issues defused by a zero-width
// space. GitHub sanitises its HTML itself.
func Markdown(md string) string {
	md = atEntity.ReplaceAllString(visible(md, false), "@")
	md = mention.ReplaceAllString(md, "$1@"+zwsp+"$2")
	return closing.ReplaceAllString(md, "$1$2$3#"+zwsp+"$4")
}

var (
	// GitHub finds mentions in the rendered text, where `_@x_`, `x`@y and
	// &#64;x all read as @name: only a letter or digit before @ (an email
	// address) keeps it from being one.
	atEntity = regexp.MustCompile(`(?i)&(?:#0*64|#x0*40|commat);`)
	mention  = regexp.MustCompile(`(^|[^A-Za-z0-9])@([A-Za-z0-9][A-Za-z0-9-]*)`)
	closing  = regexp.MustCompile(`(?i)\b(close[sd]?|fix(?:e[sd])?|resolve[sd]?)(\s*:?\s+)([\w.-]+/[\w.-]+)?#(\d+)`)
)

// visible drops invalid UTF-8 and every character that is not shown:
// controls (newlines and tabs become spaces when oneLine, else newlines
// are kept and a CR dropped), format characters (bidi controls, zero-width
// space and joiners, word joiner, BOM, soft hyphen), line and paragraph
// separators, and the Hangul fillers and combining grapheme joiner used to
// make text look empty.
func visible(s string, oneLine bool) string {
	if isPlain(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "")
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t' || r == '\u2028' || r == '\u2029':
			if oneLine || r == '\u2028' || r == '\u2029' {
				b.WriteByte(' ')
			} else {
				b.WriteRune(r)
			}
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r), invisible(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func invisible(r rune) bool {
	switch r {
	case '\u034f', '\u115f', '\u1160', '\u17b4', '\u17b5', '\u3164', '\uffa0', '\u2800':
		return true
	}
	return false
}

// isPlain is the fast path: printable ASCII and spaces only.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}

func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

func clip(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max]) + "…"
}

// SafeURL keeps only http(s) links with nothing Markdown could read as
// more than a link (no space of any kind, so no @mention after a tab; no
// brackets, quotes or backticks), so a sandbox answer or an alert cannot
// place a javascript: or other link, or a mention, in a comment.
func SafeURL(u string) string {
	if (strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://")) && !strings.ContainsAny(u, "()<>[]`\"'") &&
		!strings.ContainsFunc(u, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return u
	}
	return ""
}
