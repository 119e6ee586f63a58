package evidence

import (
	"fmt"
	"regexp"
	"strings"
)

// Tests generated from a list (for value <- [...] do test ...), and loops
// in a test over a list: given fewer values, they run or check less.

var generator = regexp.MustCompile(`^\s*for\s+(\w+)\s+<-\s+(\[.*\]|~w\(.*\)\w*)\s*do\s*$`)

// fewerGenerated finds a comprehension that defines tests given fewer
// values: the tests of the values gone no longer run.
func fewerGenerated(c change) *Finding {
	if f := c.shorterLists(); f != nil {
		return f
	}
	for _, b := range c.blocks {
		was := map[string]int{}
		for _, l := range b.removed {
			if v, n, ok := generated(l); ok {
				was[v] = n
			}
		}
		for _, l := range b.added {
			v, n, ok := generated(l)
			if old, had := was[v]; ok && had && n < old {
				f := c.finding("test-deleted", Concern, l, fmt.Sprintf("the tests are generated for %d values instead of %d: the tests of the others no longer run", n, old))
				return &f
			}
		}
	}
	return nil
}

// generated reads a comprehension's variable and how many values it
// takes (for format <- [:csv, :json] do: format, 2).
func generated(l Line) (variable string, values int, ok bool) {
	m := generator.FindStringSubmatch(l.code)
	if m == nil {
		return "", 0, false
	}
	return m[1], countValues(withStrings(m[2])), true
}

// listFor is a comprehension over a literal list or a module attribute,
// written over any number of lines: its pattern, and the list's start or
// the attribute's name.
var (
	listFor  = regexp.MustCompile(`(?m)^[ \t]*for\s+(.+?)\s*<-\s*(\[|~w[(\[]|@(\w+)\b)`)
	attrList = regexp.MustCompile(`(?m)^[ \t]*@(\w+)\s+(\[|~w[(\[])`)
)

// shorterLists compares, with both sides read whole and parsed, the lists
// a test file's comprehensions go over (inline, or a module attribute's):
// one with fewer values at head runs or checks the others no more.
func (c change) shorterLists() *Finding {
	if !c.test || c.before == nil || c.after == nil || c.before.fragment || c.after.fragment || c.before.broken || c.after.broken {
		return nil
	}
	was, now := listSizes(c.before.text), listSizes(c.after.text)
	for key, n := range now {
		if old, had := was[key]; had && n.values >= 0 && old.values >= 0 && n.values < old.values {
			l := Line{Kind: '+', New: n.line, Text: n.text}
			f := c.finding("test-deleted", Concern, l, fmt.Sprintf("the comprehension over %s now takes %d values instead of %d: the tests or checks of the others no longer run", key, n.values, old.values))
			return &f
		}
	}
	return nil
}

// listSize is how many values a comprehension's list holds (-1: it
// could not be counted), and the comprehension's line and text.
type listSize struct {
	values, line int
	text         string
}

// listSizes reads each comprehension of a file by its pattern, its list
// (the attribute's name, or "[...]" for an inline one) and, when several
// share both, which of them it is: the n-th stays the n-th only when the
// count of such loops did not change, which shorterLists relies on by
// comparing keys alone.
func listSizes(text string) map[string]listSize {
	attrs := map[string]int{}
	for _, m := range attrList.FindAllStringSubmatchIndex(text, -1) {
		attrs[text[m[2]:m[3]]] = countValues(text[m[4]:])
	}
	out := map[string]listSize{}
	seen := map[string]int{}
	line, counted := 1, 0
	for _, m := range listFor.FindAllStringSubmatchIndex(text, -1) {
		line += strings.Count(text[counted:m[0]], "\n")
		counted = m[0]
		first, _, _ := strings.Cut(text[m[0]:], "\n")
		key, values := squashSpace(text[m[2]:m[3]])+" <- [...]", 0
		if m[6] >= 0 { // over an attribute
			name := text[m[6]:m[7]]
			n, ok := attrs[name]
			if !ok {
				continue
			}
			key, values = squashSpace(text[m[2]:m[3]])+" <- @"+name, n
		} else {
			values = countValues(text[m[4]:])
		}
		seen[key]++
		if seen[key] > 1 {
			key = fmt.Sprintf("%s (#%d)", key, seen[key])
		}
		out[key] = listSize{values, line, strings.TrimSpace(first)}
	}
	return out
}

// maxListScan bounds how far countValues reads for a list's end.
const maxListScan = 64 << 10

// countValues counts the top-level values of the list text starts with
// ([...] or a ~w sigil); -1 when it cannot tell (the list does not end
// within maxListScan). Strings, heredocs, sigils, character literals
// (?[), binaries (<<1, 2>>), nested brackets and comments are skipped.
func countValues(text string) int {
	if len(text) > maxListScan {
		text = text[:maxListScan]
	}
	if strings.HasPrefix(text, "~w") {
		end := strings.IndexAny(text[3:], ")]")
		if end < 0 {
			return -1
		}
		return len(strings.Fields(text[3 : 3+end]))
	}
	depth, values, item := 0, 0, false
	for i := 0; i < len(text); i++ {
		ch := text[i]
		switch {
		case ch == '?' && i+1 < len(text) && (i == 0 || !isWordByte(text[i-1])):
			i++ // a character literal: ?[ or ?"
			if text[i] == '\\' {
				i++
			}
		case ch == '"' || ch == '\'':
			i = skipString(text, i)
		case ch == '~' && i+2 < len(text) && isWordByte(text[i+1]):
			i = skipSigil(text, i)
		case ch == '#':
			for i < len(text) && text[i] != '\n' {
				i++
			}
			continue
		case ch == '[' || ch == '{' || ch == '(' || ch == '<' && i+1 < len(text) && text[i+1] == '<':
			if ch == '<' {
				i++
			}
			depth++
			if depth == 1 {
				continue
			}
		case ch == ']' || ch == '}' || ch == ')' || ch == '>' && i+1 < len(text) && text[i+1] == '>' && depth > 1:
			if ch == '>' {
				i++
			}
			depth--
			if depth == 0 {
				if item {
					values++
				}
				return values
			}
		case ch == ',' && depth == 1:
			if item {
				values++
			}
			item = false
			continue
		}
		if depth >= 1 && ch != ' ' && ch != '\n' && ch != '\t' && ch != '\r' {
			item = true
		}
	}
	return -1
}

// skipString returns the index of the quote that ends the string (or
// heredoc) starting at i.
func skipString(text string, i int) int {
	q := text[i]
	if strings.HasPrefix(text[i:], strings.Repeat(string(q), 3)) {
		if end := strings.Index(text[i+3:], strings.Repeat(string(q), 3)); end >= 0 {
			return i + 3 + end + 2
		}
		return len(text)
	}
	return closing(text, i+1, q)
}

// closing returns the index of the first end at or after from that no
// backslash escapes; len(text) when there is none.
func closing(text string, from int, end byte) int {
	for j := from; j < len(text); j++ {
		switch text[j] {
		case '\\':
			j++
		case end:
			return j
		}
	}
	return len(text)
}

// sigilEnds pairs a sigil's opening delimiter with its closing one.
var sigilEnds = map[byte]byte{'(': ')', '[': ']', '{': '}', '<': '>', '/': '/', '|': '|', '"': '"', '\'': '\''}

// skipSigil returns the index of the delimiter that ends the sigil
// starting at i (~r/a,b/, ~S|x|, ~c"a,b"), its modifiers left to the
// caller as plain letters.
func skipSigil(text string, i int) int {
	j := i + 1
	for j < len(text) && isWordByte(text[j]) {
		j++
	}
	if j >= len(text) {
		return len(text)
	}
	if text[j] == '"' || text[j] == '\'' {
		return skipString(text, j)
	}
	end, ok := sigilEnds[text[j]]
	if !ok {
		return j - 1
	}
	return closing(text, j+1, end)
}
