package evidence

import (
	"sort"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
)

// Reading a tree's nodes through the source: names and lines from the
// bytes, which costs no cgo call, unlike each question asked of a node.

// lineStarts lists the byte each line of src starts at.
func lineStarts(src []byte) []int {
	starts := []int{0}
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// line is the line (from 1) byte at is on: read from the source, not
// asked of tree-sitter, each question of which is a cgo call.
func (w *walker) line(at uint32) int {
	return sort.Search(len(w.lineStarts), func(i int) bool { return w.lineStarts[i] > int(at) })
}

// nameAt is the name of the call starting at byte at, as written: a name,
// or a dotted Module.fun / :mod.fun; "" for a call of an anonymous
// function (f.(x)) or of an expression. It reads the source, not the
// tree, whose every question is a cgo call.
func nameAt(src []byte, at int) string {
	end := at
	if end < len(src) && src[end] == ':' {
		end++ // an Erlang module
	}
	for end < len(src) && (isWordByte(src[end]) || src[end] == '.' || src[end] == '?' || src[end] == '!') {
		end++
	}
	name := string(src[at:end])
	if name == "" || name == ":" || strings.HasSuffix(name, ".") || name[0] >= '0' && name[0] <= '9' {
		return ""
	}
	return name
}

func namedChildOfType(n *sitter.Node, typ string) *sitter.Node {
	for i := 0; i < int(n.NamedChildCount()); i++ {
		if c := n.NamedChild(i); c.Type() == typ {
			return c
		}
	}
	return nil
}

// nameOf is a test or describe name without its quotes.
func nameOf(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}
