package evidence

import (
	"regexp"

	sitter "github.com/smacker/go-tree-sitter"
)

// What a policy function's body requires when it branches: `case` and
// `if`. Each branch that admits is an alternative, holding what leads to
// it (the case subject matching the clause's pattern, the if's
// condition) and what its body requires. What an earlier clause excludes
// is not carried to the later ones: the alternatives read looser than
// the code, so a change is never read as stricter than it is.

// branches reads a case or if call as alternatives; ok is false for any
// other node.
func (w *walker) branches(n *sitter.Node) (alts [][]string, ok bool) {
	if n.Type() != "call" {
		return nil, false
	}
	name := w.callName(n)
	if name != "case" && name != "if" {
		return nil, false
	}
	args, block := namedChildOfType(n, "arguments"), namedChildOfType(n, "do_block")
	if args == nil || args.NamedChildCount() != 1 || block == nil {
		return nil, false
	}
	subject := squashSpace(w.text(args.NamedChild(0)))
	if name == "if" {
		// The do part's value is its last expression.
		var then *sitter.Node
		var out [][]string
		for i := 0; i < int(block.NamedChildCount()); i++ {
			if part := block.NamedChild(i); part.Type() == "else_block" {
				out = append(out, w.requirementOfBlock(part)...)
			} else {
				then = part
			}
		}
		if then != nil {
			for _, alt := range w.requirement(then) {
				out = append(out, append([]string{subject}, alt...))
			}
		}
		return out, true
	}
	var out [][]string
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
		for _, alt := range w.requirement(right) {
			var conds []string
			if bareName.MatchString(pattern) {
				// A name takes the subject's value: what the body asks of
				// the name it asks of the subject.
				word := regexp.MustCompile(`\b` + regexp.QuoteMeta(pattern) + `\b`)
				for _, c := range alt {
					conds = append(conds, word.ReplaceAllLiteralString(c, subject))
				}
			} else {
				conds = append([]string{subject + " matches " + pattern}, alt...)
			}
			out = append(out, conds)
		}
	}
	return out, true
}

// bareName is a pattern that binds the whole value to a name.
var bareName = regexp.MustCompile(`^[a-z_]\w*$`)

// requirementOfBlock reads an else block by its value, its last
// expression.
func (w *walker) requirementOfBlock(n *sitter.Node) [][]string {
	if k := n.NamedChildCount(); k > 0 {
		return w.requirement(n.NamedChild(int(k) - 1))
	}
	return nil
}
