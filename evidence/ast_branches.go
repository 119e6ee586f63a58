package evidence

import (
	"regexp"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
)

// What a policy function's body requires when it branches: `case` and
// `if`. Each branch that admits is an alternative, holding what leads to
// it: the case subject matching the clause's pattern and not matching
// any earlier clause's, the if's condition or its negation, and what the
// branch's body requires. A deny branch removed thus leaves the other
// branches asking less, which reads as a loosening.

// branches reads a case or if call as alternatives; ok is false for any
// other node.
func (w *walker) branches(n *sitter.Node) (alts [][]string, ok bool) {
	if n.Type() != "call" {
		return nil, false
	}
	name := w.callName(n)
	if name == "with" {
		return w.withBranches(n)
	}
	if name != "case" && name != "if" {
		return nil, false
	}
	args, block := namedChildOfType(n, "arguments"), namedChildOfType(n, "do_block")
	if args == nil || args.NamedChildCount() != 1 || block == nil {
		return nil, false
	}
	subject := accessed(squashSpace(w.text(args.NamedChild(0))))
	if name == "if" {
		// The do part's value is its last expression.
		var then, otherwise *sitter.Node
		for i := 0; i < int(block.NamedChildCount()); i++ {
			if part := block.NamedChild(i); part.Type() == "else_block" {
				otherwise = part
			} else {
				then = part
			}
		}
		var out [][]string
		if then != nil {
			out = append(out, prefixed([]string{subject}, w.requirement(then))...)
		}
		if otherwise != nil {
			out = append(out, prefixed([]string{"not (" + subject + ")"}, w.requirementOfBlock(otherwise))...)
		}
		return out, true
	}
	var out [][]string
	var earlier []string // what the clauses before this one did not match
	for i := 0; i < int(block.NamedChildCount()); i++ {
		clause := block.NamedChild(i)
		if clause.Type() != "stab_clause" {
			continue
		}
		left, right := clause.ChildByFieldName("left"), clause.ChildByFieldName("right")
		if left == nil || right == nil {
			return nil, false
		}
		pattern := squashSpace(w.text(left))
		body := w.requirement(right)
		if bareName.MatchString(pattern) {
			// A name takes the subject's value: what the body asks of the
			// name it asks of the subject.
			out = append(out, prefixed(earlier, renamed(body, map[string]string{pattern: subject}))...)
			continue
		}
		match := subject + " matches " + pattern
		if !ignored.MatchString(pattern) {
			conds := append(append(append([]string{}, earlier...), match), impliedBy(subject, pattern)...)
			out = append(out, prefixed(conds, body)...)
			earlier = append(earlier, "not ("+match+")")
		} else {
			out = append(out, prefixed(earlier, body)...)
		}
	}
	return out, true
}

// withBranches reads a with: its do part holds when every clause
// matched; each else clause when one did not, with what that clause's
// pattern asks of the value that failed. An else clause that lets the
// request through is thus an alternative that asks less than the do part.
func (w *walker) withBranches(n *sitter.Node) (alts [][]string, ok bool) {
	args, block := namedChildOfType(n, "arguments"), namedChildOfType(n, "do_block")
	if args == nil || block == nil {
		return nil, false
	}
	var conds []string
	for i := 0; i < int(args.NamedChildCount()); i++ {
		a := args.NamedChild(i)
		if a.Type() == "keywords" {
			return nil, false // with ..., do: the inline form
		}
		conds = append(conds, accessed(squashSpace(w.text(a))))
	}
	failed := "not (" + strings.Join(conds, ", ") + ")"
	var out [][]string
	var then []*sitter.Node
	for i := 0; i < int(block.NamedChildCount()); i++ {
		part := block.NamedChild(i)
		if part.Type() != "else_block" {
			if part.Type() != "comment" {
				then = append(then, part)
			}
			continue
		}
		for j := 0; j < int(part.NamedChildCount()); j++ {
			clause := part.NamedChild(j)
			left, right := clause.ChildByFieldName("left"), clause.ChildByFieldName("right")
			if clause.Type() != "stab_clause" || left == nil || right == nil {
				continue
			}
			out = append(out, prefixed([]string{failed, "failed with " + patternOf(squashSpace(w.text(left)))}, w.requirement(right))...)
		}
	}
	if len(then) == 0 {
		return nil, false
	}
	// A do part of several statements: its value is the last one's, and
	// each before it (Logger.metadata(...), authorize!(user)) is a
	// condition, as bodyRequirement reads a body.
	for _, e := range then[:len(then)-1] {
		if text := squashSpace(w.text(e)); !binding.MatchString(text) {
			conds = append(conds, accessed(text))
		}
	}
	return append(prefixed(conds, w.requirement(then[len(then)-1])), out...), true
}

// fieldLiteral is a key of a map or struct pattern given a literal value.
var fieldLiteral = regexp.MustCompile(`(?:^|[{,]\s*)([a-z_]\w*):\s*(:\w+|"[^"]*"|-?[0-9][0-9_.]*|true|false|nil)\s*(?:[,}]|$)`)

// impliedBy are the comparisons a struct or map pattern's literal fields
// make of the subject: %User{role: :admin} asks user.role == :admin, as an
// if on that comparison does. Fields of nested patterns are left out.
func impliedBy(subject, pattern string) []string {
	if !strings.HasPrefix(pattern, "%") {
		return nil
	}
	open := strings.IndexByte(pattern, '{')
	if open < 0 || !strings.HasSuffix(pattern, "}") {
		return nil
	}
	inner := pattern[open+1 : len(pattern)-1]
	if strings.ContainsAny(inner, "{[") {
		return nil // nested: which level a field is on is not read here
	}
	var out []string
	for _, m := range fieldLiteral.FindAllStringSubmatch("{"+inner+"}", -1) {
		out = append(out, subject+"."+m[1]+" == "+m[2])
	}
	return out
}

// bodyRequirement reads a body of several expressions: its value is the
// last one's, and each one before it (socket = mount_current_user(...),
// authorize!(user)) is a condition of every alternative, as written, so
// that one removed asks less. A body with a rescue or an else is read
// whole, as one condition.
func (w *walker) bodyRequirement(block *sitter.Node) [][]string {
	var earlier []string
	var last *sitter.Node
	binds := map[string]string{} // names bound to a path: read as the path
	for i := 0; i < int(block.NamedChildCount()); i++ {
		switch c := block.NamedChild(i); c.Type() {
		case "comment":
		case "else_block", "rescue_block", "catch_block", "after_block":
			return [][]string{{squashSpace(w.text(block))}}
		default:
			if last != nil {
				text := squashSpace(w.text(last))
				if m := boundPath.FindStringSubmatch(accessed(text)); m != nil {
					binds[m[1]] = renamed([][]string{{m[2]}}, binds)[0][0]
				} else if !binding.MatchString(text) {
					earlier = append(earlier, renamed([][]string{{text}}, binds)[0][0])
				}
			}
			last = c
		}
	}
	if last == nil {
		return [][]string{{squashSpace(w.text(block))}}
	}
	return prefixed(earlier, renamed(w.requirement(last), binds))
}

var (
	// binding is a statement that only names a value (user = get(id)):
	// it cannot fail, so it is no condition of what follows.
	binding = regexp.MustCompile(`^\s*[a-z_]\w*\s*=[^=~]`)
	// boundPath names a value read from another (user =
	// socket.assigns.current_user): what is asked of the name is asked of
	// the path, however the clause names it.
	boundPath = regexp.MustCompile(`^([a-z_]\w*) = ([a-z_]\w*(?:\.[a-z_]\w*|\[:\w+\])+)$`)
)

// maxAlternatives bounds the alternatives a condition is read as: k
// terms of (a || b) joined by && are 2^k of them.
const maxAlternatives = 256

// passedOn are what a plug, a LiveView hook or an Absinthe middleware is
// handed and hands on: a clause that returns it untouched lets it through.
var passedOn = map[string]bool{"conn": true, "socket": true, "resolution": true, "res": true}

// prefixed is each alternative with conds before its own conditions.
func prefixed(conds []string, alts [][]string) [][]string {
	out := make([][]string, len(alts))
	for i, alt := range alts {
		out[i] = append(append([]string{}, conds...), alt...)
	}
	return out
}

var (
	// bareName is a pattern that binds the whole value to a name.
	bareName = regexp.MustCompile(`^[a-z]\w*$`)
	// ignored is a pattern that matches anything and binds nothing.
	ignored = regexp.MustCompile(`^_\w*$`)
)

// requirementOfBlock reads an else block by its value, its last
// expression.
func (w *walker) requirementOfBlock(n *sitter.Node) [][]string {
	if k := n.NamedChildCount(); k > 0 {
		return w.requirement(n.NamedChild(int(k) - 1))
	}
	return nil
}

// clauseStricter compares two versions of a clause, the new one's names
// read as the old one's (current_user where user was): a renamed
// variable asks for nothing else.
func (c change) clauseStricter(was, now defUnit) bool {
	req := c.after.inlined(now)
	if len(was.names) == len(now.names) {
		renames := map[string]string{}
		for i, name := range now.names {
			if old := was.names[i]; old != name {
				renames[name] = old
			}
		}
		req = renamed(req, renames)
	}
	return stricter(c.before.inlined(was), req)
}

// renamed is a copy of alts with each name of renames replaced by its
// value, all in one pass: swapped names (user, thread made thread, user)
// are read as swapped, and the alternatives read stay as they were.
func renamed(alts [][]string, renames map[string]string) [][]string {
	if len(renames) == 0 {
		return alts
	}
	var names []string
	for name := range renames {
		names = append(names, regexp.QuoteMeta(name))
	}
	word := regexp.MustCompile(`\b(` + strings.Join(names, "|") + `)\b`)
	out := make([][]string, len(alts))
	for i, alt := range alts {
		out[i] = make([]string, len(alt))
		for j, cond := range alt {
			out[i][j] = word.ReplaceAllStringFunc(cond, func(m string) string { return renames[m] })
		}
	}
	return out
}

var identifier = regexp.MustCompile(`[a-z_]\w*`)

// headNames are the names a clause head binds, in order (not those of its
// guard, keywords or map keys, calls or fields).
func headNames(head string) []string {
	head, _, _ = strings.Cut(squashSpace(head), " when ")
	_, args, ok := strings.Cut(head, "(")
	if !ok {
		return nil
	}
	var out []string
	for _, at := range identifier.FindAllStringIndex(args, -1) {
		before, after := byte(' '), byte(' ')
		if at[0] > 0 {
			before = args[at[0]-1]
		}
		if at[1] < len(args) {
			after = args[at[1]]
		}
		word := args[at[0]:at[1]]
		if strings.ContainsRune(".:@%?!\"", rune(before)) || isWordByte(before) || strings.ContainsRune("(:.", rune(after)) || keepWords[word] || strings.HasPrefix(word, "_") {
			continue
		}
		out = append(out, word)
	}
	return out
}

var catchAll = regexp.MustCompile(`^[\w.]+[?!]?\(\s*_(\s*,\s*_)*\s*\)$`)

// shadowedBy names a clause that a catch-all admitting everyone now
// precedes but followed before: Elixir tries clauses in order, so the
// one behind it is never reached. "" when none.
func shadowedBy(was, now []defUnit) string {
	first := func(units []defUnit) map[string]int {
		out := map[string]int{}
		for i := len(units) - 1; i >= 0; i-- {
			out[units[i].head] = i
		}
		return out
	}
	wasAt, nowAt := first(was), first(now)
	seen := map[string]bool{}
	for i, n := range now {
		j, had := wasAt[n.head]
		if !had || seen[n.head] || !catchAll.MatchString(n.head) || !admitsAnyone(n.requires) {
			continue
		}
		seen[n.head] = true
		for _, w := range was[:j] {
			if k, ok := nowAt[w.head]; ok && k > i {
				return "`" + w.head + "`"
			}
		}
	}
	return ""
}
