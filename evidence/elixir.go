package evidence

import (
	"regexp"
	"slices"
	"strings"
)

// change is one file's diff as the rules read it.
type change struct {
	path    string
	test    bool
	file    File
	blocks  []block // runs of removed then added lines, in order
	all     []Line  // every line the diff shows, context included
	attrs   map[string]string
	touched []string // the global state the diff (or the file at head) shows the file touching
	head    []Line   // the file at the pull request's head, when it was read whole (line n at n-1)
	// ownAdded counts this file's added lines by movedKey; movedTo reports
	// whether a line is added in another file of the diff (it moved there).
	ownAdded map[string]int
	movedTo  func(text string) bool
	// diff is what the rules read of the whole diff (readDiffWide).
	diff *diffWide
	// before and after are the file's two sides read as code (readCode);
	// nil for the side a file added or deleted lacks, or before reading.
	before, after *source
	// removedCode holds each removed line's code, spaces squashed: what a
	// rule asks to tell a line moved or reformatted from one added.
	removedCode map[string]bool
	// outline is the file at head read as an outline (outlineView), once
	// the file is read.
	outline *outlineCache
	// ci says the file configures how the tests run (ciFile).
	ci bool
}

// block is a run of removed lines followed by the added lines that
// replace them (either may be empty): the unit of "was X, is now Y".
type block struct {
	removed, added []Line
}

func newFileChange(f File, docs wholeDocs) change {
	c := change{path: f.Path(), test: testFile(f.Path()), file: f, attrs: map[string]string{}, ownAdded: map[string]int{}, movedTo: func(string) bool { return false }, removedCode: map[string]bool{}, diff: &diffWide{}, outline: &outlineCache{}, ci: configFile(f.Path())}
	for _, h := range f.Hunks {
		var cur block
		flush := func() {
			if len(cur.removed)+len(cur.added) > 0 {
				c.blocks = append(c.blocks, cur)
			}
			cur = block{}
		}
		lines := slices.Clone(h.Lines)
		for i := range lines {
			lines[i].code = code(lines[i].Text)
		}
		if elixirFile(c.path) {
			blankDocs(lines, false)
		}
		docs.blank(lines)
		for _, l := range lines {
			c.all = append(c.all, l)
			switch l.Kind {
			case '-':
				if len(cur.added) > 0 {
					flush()
				}
				cur.removed = append(cur.removed, l)
				c.removedCode[squashSpace(l.code)] = true
			case '+':
				cur.added = append(cur.added, l)
				c.ownAdded[movedKeyOf(l.code)]++
			default:
				flush()
			}
			// Module attributes as the new code sees them, for timeouts
			// named through them.
			if l.Kind != '-' {
				if m := attrDef.FindStringSubmatch(l.code); m != nil {
					c.attrs[m[1]] = strings.TrimSpace(m[2])
				}
			}
		}
		flush()
	}
	for i := range c.blocks {
		joinCalls(c.blocks[i].removed)
		joinCalls(c.blocks[i].added)
	}
	if c.test { // only test modules are read for it (asyncOff)
		c.touched = touches(c.all)
	}
	return c
}

// readHead adds what the whole file at the pull request's head shows to
// what the diff shows.
func (c *change) readHead(lines []Line) {
	c.head = lines
	for _, l := range lines {
		// An attribute the hunks do not show is read where the file sets it.
		if m := attrDef.FindStringSubmatch(l.code); m != nil && c.attrs[m[1]] == "" {
			c.attrs[m[1]] = strings.TrimSpace(m[2])
		}
	}
	for _, w := range touches(lines) {
		if !slices.Contains(c.touched, w) {
			c.touched = append(c.touched, w)
		}
	}
}

func (c change) added() []Line {
	var out []Line
	for _, b := range c.blocks {
		out = append(out, b.added...)
	}
	return out
}

// addedLines are the head line numbers of the lines the change adds.
func (c change) addedLines() map[int]bool {
	out := map[int]bool{}
	for _, b := range c.blocks {
		for _, l := range b.added {
			out[l.New] = true
		}
	}
	return out
}

func (c change) removed() []Line {
	var out []Line
	for _, b := range c.blocks {
		out = append(out, b.removed...)
	}
	return out
}

// finding makes a finding on line l of the change.
func (c change) finding(rule string, sev Severity, l Line, why string) Finding {
	n := l.New
	if l.Kind == '-' {
		n = l.Old
	}
	return Finding{Rule: rule, Severity: sev, File: c.path, Line: n, Text: quote(l), Why: why}
}

// quote is a changed line as a reviewer reads it: its sign, then the code.
func quote(l Line) string {
	t := strings.TrimSpace(l.Text)
	if r := []rune(t); len(r) > 200 {
		t = string(r[:200]) + "…"
	}
	return string(l.Kind) + " " + t
}

var attrDef = regexp.MustCompile(`^\s*@([a-z_][a-zA-Z0-9_]*)\s+((?:[^-|\s]|-[^>]|\|[^>]).*?)\s*$`) // not @x -> (a clause) nor @x |> f()

// code is a line without its comment and with string contents blanked,
// so that rules match code, not prose about it (string contents become
// dots, which no rule reads as a name or a wildcard).
func code(s string) string { return scan(s, true) }

// withStrings is a line without its comment, string contents kept: for
// rules that compare values (a role, a default) rather than find calls.
func withStrings(s string) string { return scan(s, false) }

func scan(s string, blank bool) string {
	var b strings.Builder
	inStr, esc := byte(0), false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case inStr != 0:
			switch {
			case esc:
				esc = false
			case ch == '\\':
				esc = true
			case ch == inStr:
				inStr = 0
				b.WriteByte(ch)
				continue
			}
			if inStr != 0 && blank {
				b.WriteByte('.')
				continue
			}
		case ch == '"' || ch == '\'':
			// ?" and ?' are character literals, not strings.
			if i > 0 && s[i-1] == '?' {
				b.WriteByte(ch)
				continue
			}
			inStr = ch
		case ch == '#':
			return b.String()
		}
		b.WriteByte(ch)
	}
	return b.String()
}

// callArgs finds the first call of name in line (with or without
// parentheses) and splits its arguments at top-level commas.
func callArgs(line, name string) ([]string, bool) {
	i := indexWord(line, name)
	if i < 0 {
		return nil, false
	}
	rest := line[i+len(name):]
	paren := strings.HasPrefix(rest, "(")
	if paren {
		rest = rest[1:]
	} else if !strings.HasPrefix(rest, " ") {
		return nil, false
	}
	var args []string
	depth, start := 0, 0
	for j := 0; j < len(rest); j++ {
		switch rest[j] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth == 0 {
				return append(args, strings.TrimSpace(rest[start:j])), true
			}
			depth--
		case ',':
			if depth == 0 {
				args = append(args, strings.TrimSpace(rest[start:j]))
				start = j + 1
			}
		}
	}
	tail := strings.TrimSpace(rest[start:])
	tail = strings.TrimSuffix(strings.TrimSuffix(tail, " do"), ",")
	return append(args, strings.TrimSpace(tail)), true
}

// indexWord finds name in s where it is not part of a longer name.
func indexWord(s, name string) int {
	if name == "" {
		return -1 // an empty name is everywhere and nowhere: it never advanced
	}
	for from := 0; ; {
		i := strings.Index(s[from:], name)
		if i < 0 {
			return -1
		}
		i += from
		before := i == 0 || !isIdent(s[i-1])
		after := i+len(name) >= len(s) || !isIdent(s[i+len(name)]) || s[i+len(name)] == '?' || s[i+len(name)] == '!'
		if before && after && (i == 0 || s[i-1] != '.' || strings.Contains(name, ".")) {
			return i
		}
		from = i + len(name)
	}
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '?' || c == '!'
}
