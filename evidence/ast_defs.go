package evidence

import (
	"regexp"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
)

// defUnit is one clause of a function: its name and arity, its head (the
// arguments' patterns and guard, as written) and what its body requires,
// as alternatives (any one admits) of conditions (all must hold): a body
// that is `true` or `{:ok, ...}` admits everyone ([[]]), one that is
// `false`, nil, `{:error, ...}` or raises admits no one (no alternative).
type defUnit struct {
	name       string
	arity      int
	head       string
	requires   [][]string
	start, end int
	names      []string // the names its head binds, in order
}

// def reads a def's arguments: its head call (a `when` guard around it
// included) and its body (`, do:` or a do block).
func (w *walker) def(args *sitter.Node, start, end int) (defUnit, bool) {
	if args.NamedChildCount() == 0 {
		return defUnit{}, false
	}
	head := args.NamedChild(0)
	d := defUnit{start: start, end: end, head: patternOf(w.text(head)), names: headNames(w.text(head))}
	call := head
	if head.Type() == "binary_operator" { // f(x) when guard
		call = head.ChildByFieldName("left")
	}
	switch {
	case call == nil:
		return defUnit{}, false
	case call.Type() == "identifier":
		d.name = w.text(call)
	case call.Type() == "call":
		d.name = w.callName(call)
		if a := namedChildOfType(call, "arguments"); a != nil {
			d.arity = int(a.NamedChildCount())
		}
	default:
		return defUnit{}, false
	}
	var body *sitter.Node
	for i := 1; i < int(args.NamedChildCount()); i++ {
		if kw := args.NamedChild(i); kw.Type() == "keywords" {
			for j := 0; j < int(kw.NamedChildCount()); j++ {
				pair := kw.NamedChild(j)
				if k := pair.ChildByFieldName("key"); k != nil && strings.TrimSpace(w.text(k)) == "do:" {
					body = pair.ChildByFieldName("value")
				}
			}
		}
	}
	if body == nil {
		if block := namedChildOfType(args.Parent(), "do_block"); block != nil && block.NamedChildCount() == 1 {
			body = block.NamedChild(0)
		} else if block != nil {
			d.requires = w.bodyRequirement(block)
			return d, true
		}
	}
	if body == nil {
		return defUnit{}, false
	}
	d.requires = w.requirement(body)
	if len(d.names) > 0 && passedOn[d.names[0]] && squashSpace(w.text(body)) == d.names[0] {
		d.requires = [][]string{{}} // the request handed on untouched: let through
	}
	return d, true
}

// requirement reads a boolean expression as alternatives of conditions.
func (w *walker) requirement(n *sitter.Node) [][]string {
	if alts, ok := w.branches(n); ok {
		return alts
	}
	switch n.Type() {
	case "binary_operator":
		op := n.ChildByFieldName("operator")
		left, right := n.ChildByFieldName("left"), n.ChildByFieldName("right")
		if op == nil || left == nil || right == nil {
			break
		}
		switch w.text(op) {
		case "||", "or":
			return append(w.requirement(left), w.requirement(right)...)
		case "&&", "and":
			lefts, rights := w.requirement(left), w.requirement(right)
			if len(lefts)*len(rights) > maxAlternatives {
				return [][]string{{squashSpace(w.text(n))}} // read whole: a change to it is one a reviewer must read
			}
			var out [][]string
			for _, a := range lefts {
				for _, b := range rights {
					out = append(out, append(append([]string{}, a...), b...))
				}
			}
			return out
		}
	case "block":
		if n.NamedChildCount() == 1 {
			return w.requirement(n.NamedChild(0))
		}
	case "body": // a case clause's, after its ->
		if n.NamedChildCount() == 1 {
			return w.requirement(n.NamedChild(0))
		}
		return w.bodyRequirement(n)
	}
	text := accessed(squashSpace(w.text(n)))
	switch {
	case text == "true" || text == ":ok" || strings.HasPrefix(text, "{:ok") || strings.HasPrefix(text, "{:cont"):
		return [][]string{{}}
	case text == "false" || text == "nil" || text == ":error" || strings.HasPrefix(text, "{:error") || strings.HasPrefix(text, "raise") || strings.HasPrefix(text, "{:halt") || halted.MatchString(text):
		return nil
	}
	return [][]string{{text}}
}

// halted is a plug's answer that stops the request: a pipe or a call
// ending in halt (send_resp(503) |> halt()), or an error handed to the
// fallback controller. Whatever it asked, it admits no one.
var halted = regexp.MustCompile(`(^|\|>\s*)halt\((conn)?\)$|^halt\(\w+\)$|^[\w.]*Fallback\w*\.call\(\s*\w+\s*,\s*\{:error\b`)

func squashSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// keyAccess is a map's key read by brackets, assigns[:current_user], or
// by Map.get with no default, Map.get(assigns, :current_user): each asks
// what assigns.current_user asks.
var (
	keyAccess = regexp.MustCompile(`\[:(\w+)\]`)
	mapGet    = regexp.MustCompile(`\bMap\.get\(\s*([a-z_][\w.]*)\s*,\s*:(\w+)\s*\)`)
)

func accessed(cond string) string {
	return mapGet.ReplaceAllString(keyAccess.ReplaceAllString(cond, ".$1"), "$1.$2")
}

// stricter reports whether what now requires admits no one that was
// required before: each of its alternatives holds every condition of
// one of the old alternatives.
func stricter(was, now [][]string) bool {
	for _, n := range now {
		held := false
		for _, w := range was {
			if containsAll(n, w) {
				held = true
				break
			}
		}
		if !held {
			return false
		}
	}
	return true
}

// defAt is the def whose lines hold line n, nil when none does.
func (s *source) defAt(n int) *defUnit {
	if s == nil {
		return nil
	}
	for i := range s.defs {
		if d := &s.defs[i]; d.start <= n && n <= d.end {
			return d
		}
	}
	return nil
}

// inlined is a def's requirement with each condition that calls another
// def of the same file with a single clause replaced by that def's
// requirement, itself read so, up to maxInlined levels: what a policy
// delegates to, and what that delegates to (a helper that only logs and
// answers an error admits no one).
func (s *source) inlined(d defUnit) [][]string { return s.inlinedFrom(d, 0) }

// maxInlined bounds how deep calls are followed (a def that calls itself
// through another stops there).
const maxInlined = 3

func (s *source) inlinedFrom(d defUnit, depth int) [][]string {
	var out [][]string
	for _, alt := range d.requires {
		expanded := [][]string{{}}
		for _, cond := range alt {
			sub := [][]string{{cond}}
			if callee, ok := s.single(cond); ok && callee.name != d.name && depth < maxInlined {
				sub = s.inlinedFrom(callee, depth+1)
			}
			if len(expanded)*len(sub) > maxAlternatives {
				sub = [][]string{{cond}} // read as written: too many to expand
			}
			var next [][]string
			for _, e := range expanded {
				for _, x := range sub {
					next = append(next, append(append([]string{}, e...), x...))
				}
			}
			expanded = next
		}
		out = append(out, expanded...)
	}
	return out
}

// single is the one clause of the local def a condition calls, when it
// has one.
func (s *source) single(cond string) (defUnit, bool) {
	name, _, ok := strings.Cut(cond, "(")
	if !ok || strings.ContainsAny(name, " .") {
		return defUnit{}, false
	}
	var found []defUnit
	for _, d := range s.defs {
		if d.name == name {
			found = append(found, d)
		}
	}
	if len(found) != 1 {
		return defUnit{}, false
	}
	return found[0], true
}

// patternOf is a clause head with the names it binds made `_`: renaming
// or ignoring an argument changes nothing of who it matches. A name binds
// when it starts lower-case, is not a field, atom, attribute or string's
// first word (after . : @ % ? ! or a quote) and is not called, a key, or
// followed by . ? ! (one pass over the words: a regexp's costs a large
// file of clauses a tenth of a second).
func patternOf(head string) string {
	head = squashSpace(head)
	name, rest, ok := strings.Cut(head, "(")
	if !ok {
		return head
	}
	var b strings.Builder
	b.Grow(len(head))
	b.WriteString(name)
	b.WriteByte('(')
	for i := 0; i < len(rest); {
		j := i
		for j < len(rest) && asciiWord(rest[j]) {
			j++
		}
		if j == i {
			b.WriteByte(rest[i])
			i++
			continue
		}
		word, first := rest[i:j], rest[i]
		binds := (first >= 'a' && first <= 'z' || first == '_') &&
			(i == 0 || !strings.ContainsRune(".:@%?!\"", rune(rest[i-1]))) &&
			(j == len(rest) || !strings.ContainsRune("(:?!.", rune(rest[j]))) && !keepWords[word]
		if binds {
			b.WriteByte('_')
		} else {
			b.WriteString(word)
		}
		i = j
	}
	return b.String()
}

// keepWords are the words of a clause head that bind nothing.
var keepWords = map[string]bool{"when": true, "not": true, "and": true, "or": true, "in": true, "true": true, "false": true, "nil": true, "_": true}

// madeStricter reports whether a removed line is in a function whose one
// clause, read as code on both sides, keeps its head and now requires at
// least what it required: a condition dropped from an `||` narrows it.
func (c change) madeStricter(l Line) bool {
	if c.before == nil || c.after == nil || l.Kind != '-' {
		return false
	}
	was := c.before.defAt(l.Old)
	if was == nil {
		return false
	}
	var same []defUnit
	for _, d := range c.after.defs {
		if d.name == was.name && d.arity == was.arity {
			same = append(same, d)
		}
	}
	return len(same) == 1 && same[0].head == was.head && c.clauseStricter(*was, same[0])
}
