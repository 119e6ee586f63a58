package evidence

import "strings"

// How Elixir reads across lines: a call whose arguments go on over lines,
// and the documentation heredocs whose lines are text, not code.

// maxJoined bounds the lines one call is read across.
const maxJoined = 30

// joinCalls reads a call that spans lines (an assert_receive whose pattern
// and timeout sit on lines of their own) as the line it starts on: that
// line's code becomes the call up to its closing bracket and any argument
// after a trailing comma.
func joinCalls(lines []Line) {
	for i := range lines {
		depth := bracketDepth(lines[i].code)
		// An assertion ending in a comma takes its timeout from the next
		// line; one ending in an operator (assert {:ok, x} =) its right
		// side.
		if depth <= 0 && !(continued(lines[i].code) && anyAssertion.MatchString(lines[i].code)) {
			continue
		}
		joined := lines[i].code
		for j := i + 1; j < len(lines) && j < i+maxJoined && (depth > 0 || continued(joined)); j++ {
			joined += " " + strings.TrimSpace(lines[j].code)
			depth += bracketDepth(lines[j].code)
		}
		lines[i].code = joined
	}
}

// continued reports whether code ends where Elixir reads on: a comma or
// an operator whose right side is on the next line. Not `or` and `and`:
// the assertion rules pair each side of those apart.
func continued(code string) bool {
	code = strings.TrimSpace(code)
	for _, op := range []string{",", " =", "==", "=~", "!=", " in", "<>", "++", "|>"} {
		if strings.HasSuffix(code, op) {
			return true
		}
	}
	return false
}

func bracketDepth(s string) int {
	d := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			d++
		case ')', ']', '}':
			d--
		}
	}
	return d
}

// blankDocs blanks the code of the lines inside a heredoc (@moduledoc
// """ ... """, @doc, a ~S""" string): a usage example there is text, not
// code the rules should read. Each side of a hunk is read apart; a hunk
// that starts inside a heredoc is found by its closing line (one that
// starts with """), as mix format lays heredocs out; a whole file
// (fromStart) starts outside any.
func blankDocs(lines []Line, fromStart bool) {
	for _, side := range []byte{'-', '+'} {
		in, start, prev := false, 0, ""
		for i := range lines {
			l := &lines[i]
			if l.Kind != ' ' && l.Kind != side {
				continue
			}
			t := strings.TrimSpace(l.Text)
			quotes := strings.HasPrefix(t, `"""`) || strings.HasPrefix(t, `'''`)
			// A heredoc given as an argument opens on a line of its own
			// (query!(\n Repo,\n """): the line before it reads on.
			closes := quotes && (in || !fromStart && !continued(prev) && !strings.HasSuffix(prev, "("))
			opens := !closes && (strings.HasSuffix(t, `"""`) || strings.HasSuffix(t, `'''`))
			if t != "" {
				prev = strings.TrimSpace(l.code)
			}
			switch {
			case closes && !in:
				// The hunk began inside a heredoc: what this side showed
				// of it so far was text.
				for j := start; j < i; j++ {
					if lines[j].Kind == ' ' || lines[j].Kind == side {
						lines[j].code = ""
					}
				}
				start = i + 1
			case closes:
				in, start = false, i+1
			case in:
				l.code = ""
			case opens:
				in = true
			}
		}
	}
}

// wholeDocs are the lines inside heredocs of the sides read whole (nil
// for a side that was not): there a heredoc is known from its opening
// line, which a hunk may not show.
type wholeDocs struct{ base, head map[int]bool }

// wholeLines is a file read whole as the rules read it, line by line,
// its heredocs' text blanked when it is Elixir; nil when src is empty.
func wholeLines(src string, elixir bool) []Line {
	if src == "" {
		return nil
	}
	texts := strings.Split(src, "\n")
	lines := make([]Line, len(texts))
	for i, t := range texts {
		lines[i] = Line{Kind: ' ', Text: t, Old: i + 1, New: i + 1, code: code(t)}
	}
	if elixir {
		blankDocs(lines, true)
	}
	return lines
}

// heredocLines are the numbers of the lines of text inside the heredocs
// of a file read whole (wholeLines), nil when it was not read.
func heredocLines(lines []Line) map[int]bool {
	if lines == nil {
		return nil
	}
	out := map[int]bool{}
	for _, l := range lines {
		if l.code == "" && strings.TrimSpace(l.Text) != "" {
			out[l.New] = true
		}
	}
	return out
}

// blank makes a changed line of a side read whole text or code as the
// whole file says, whatever its hunk alone suggested.
func (d wholeDocs) blank(lines []Line) {
	for i, l := range lines {
		doc, at := d.head, l.New
		if l.Kind == '-' {
			doc, at = d.base, l.Old
		}
		switch {
		case doc == nil || l.Kind == ' ':
		case doc[at]:
			lines[i].code = ""
		default:
			lines[i].code = code(l.Text)
		}
	}
}
