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
	list := strings.NewReplacer(",", " ", "[", " ", "]", " ", "(", " ", ")", " ").Replace(withStrings(m[2]))
	return m[1], len(strings.Fields(strings.TrimPrefix(strings.TrimSpace(list), "~w"))), true
}

// listFor is a comprehension over a literal list or a module attribute,
// written over any number of lines: its pattern, and the list's start or
// the attribute's name.
var (
	listFor  = regexp.MustCompile(`(?m)^\s*for\s+(.+?)\s*<-\s*(\[|~w[(\[]|@(\w+)\b)`)
	attrList = regexp.MustCompile(`(?m)^\s*@(\w+)\s+(\[|~w[(\[])`)
)

// shorterLists compares, with both sides read whole, the lists a test
// file's comprehensions go over (inline, or a module attribute's): one
// with fewer values at head runs or checks the others no more.
func (c change) shorterLists() *Finding {
	if !c.test || c.before == nil || c.after == nil || c.before.fragment || c.after.fragment {
		return nil
	}
	was, now := listSizes(c.before.text), listSizes(c.after.text)
	for key, n := range now {
		if old, had := was[key]; had && n.values < old.values {
			l := Line{Kind: '+', New: n.line, Text: n.text}
			f := c.finding("test-deleted", Concern, l, fmt.Sprintf("the comprehension over %s now takes %d values instead of %d: the tests or checks of the others no longer run", key, n.values, old.values))
			return &f
		}
	}
	return nil
}

// listSize is how many values a comprehension's list holds, and the line
// of the comprehension.
type listSize struct {
	values, line int
	text         string // the comprehension's first line
}

// listSizes reads each comprehension of a file by its pattern and list
// (the attribute's name, or the pattern alone for an inline list).
func listSizes(text string) map[string]listSize {
	attrs := map[string]int{}
	for _, m := range attrList.FindAllStringSubmatchIndex(text, -1) {
		attrs[text[m[2]:m[3]]] = countValues(text[m[4]:])
	}
	out := map[string]listSize{}
	for _, m := range listFor.FindAllStringSubmatchIndex(text, -1) {
		pattern := squashSpace(text[m[2]:m[3]])
		line := strings.Count(text[:m[0]], "\n") + 1
		first, _, _ := strings.Cut(text[m[0]:], "\n")
		if m[6] >= 0 { // over an attribute
			name := text[m[6]:m[7]]
			if n, ok := attrs[name]; ok {
				out[pattern+" <- @"+name] = listSize{n, line, first}
			}
			continue
		}
		out[pattern+" <- [...]"] = listSize{countValues(text[m[4]:]), line, first}
	}
	return out
}

// countValues counts the top-level values of the list text starts with
// ([...] or a ~w sigil), strings and nested brackets skipped; 0 when the
// list does not end.
func countValues(text string) int {
	if strings.HasPrefix(text, "~w") {
		end := strings.IndexAny(text[3:], ")]")
		if end < 0 {
			return 0
		}
		return len(strings.Fields(text[3 : 3+end]))
	}
	depth, values, item := 0, 0, false
	var quote byte
	for i := 0; i < len(text); i++ {
		ch := text[i]
		switch {
		case quote != 0:
			if ch == '\\' {
				i++
			} else if ch == quote {
				quote = 0
			}
			continue
		case ch == '"' || ch == '\'':
			quote = ch
		case ch == '#' && depth > 0:
			for i < len(text) && text[i] != '\n' {
				i++
			}
			continue
		case ch == '[' || ch == '{' || ch == '(':
			depth++
			if depth == 1 {
				continue
			}
		case ch == ']' || ch == '}' || ch == ')':
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
	return 0
}
