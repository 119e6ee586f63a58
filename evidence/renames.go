package evidence

import (
	"regexp"
	"slices"
	"strings"
)

// A name renamed throughout the diff (a role :editor made :maintainer
// wherever it is written) changes who may do what in nothing.

// valuesDeclared is a line that declares the values a field may take.
var valuesDeclared = regexp.MustCompile(`\bEcto\.Enum\b|\bvalues:\s*[\[@~]|^\s*@\w+\s+(\[|~w)`)

// renameToken is what a line is compared by: names and atoms, strings,
// and each other character.
var renameToken = regexp.MustCompile(`:?[A-Za-z_]\w*[?!]?|"[^"]*"|\S`)

// renamedOnly is the set of files whose every changed line is a line of
// the base with atoms or strings renamed, each rename made throughout the
// diff (the old name written on no added line) to a new name (written on
// no removed line and nowhere in the files read at the base), where the
// diff renames it in a declaration of the values (an Ecto.Enum's values:,
// a module attribute's list): one value changed in one place is a
// change of who may do what, not a rename. Files are read whole.
func renamedOnly(changes []*change) map[string]bool {
	renames := map[string]string{}
	candidates := map[string]bool{}
	consistent, declared := true, false
	for _, c := range changes {
		pairs, ok := renamePairs(c)
		if !ok {
			continue
		}
		if c.before == nil || c.after == nil || c.before.fragment || c.after.fragment {
			return nil
		}
		for _, l := range c.removed() {
			declared = declared || valuesDeclared.MatchString(l.code)
		}
		for old, now := range pairs {
			if was, seen := renames[old]; seen && was != now {
				consistent = false
			}
			renames[old] = now
		}
		candidates[c.path] = true
	}
	if !consistent || !declared || len(renames) == 0 {
		return nil
	}
	for old, now := range renames {
		if namesValue(changes[0].diff.added, old) {
			return nil // still written somewhere: not renamed throughout
		}
		for _, c := range changes {
			if c.before != nil && namesValue(c.before.text, now) || slices.ContainsFunc(c.removed(), func(l Line) bool { return namesValue(l.Text, now) }) {
				return nil // a name the code had: merged into it, not renamed
			}
		}
	}
	return candidates
}

// renamePairs reads a file's change as renames: each block's removed and
// added lines paired in order, each pair the same tokens but for atoms or
// strings replaced by others. ok is false when any line is more than that.
func renamePairs(c *change) (map[string]string, bool) {
	pairs := map[string]string{}
	for _, b := range c.blocks {
		removed, added := nonBlank(b.removed), nonBlank(b.added)
		if len(removed) != len(added) {
			return nil, false
		}
		for i := range removed {
			was, now := renameToken.FindAllString(withStrings(removed[i].Text), -1), renameToken.FindAllString(withStrings(added[i].Text), -1)
			if len(was) != len(now) {
				return nil, false
			}
			for k := range was {
				if was[k] == now[k] {
					continue
				}
				if !renameable(was[k], now[k]) || pairs[was[k]] != "" && pairs[was[k]] != now[k] {
					return nil, false
				}
				pairs[was[k]] = now[k]
			}
		}
	}
	return pairs, len(pairs) > 0
}

// renameable reports whether two tokens are values of one kind: two atoms
// or two strings.
func renameable(a, b string) bool {
	atoms := strings.HasPrefix(a, ":") && strings.HasPrefix(b, ":")
	quoted := strings.HasPrefix(a, `"`) && strings.HasPrefix(b, `"`)
	return atoms || quoted
}

// namesValue reports whether text writes the value an atom or string
// token holds, as either.
func namesValue(text, token string) bool {
	name := strings.Trim(token, `:"`)
	return name != "" && (indexWord(text, ":"+name) >= 0 || strings.Contains(text, `"`+name+`"`))
}

func nonBlank(lines []Line) []Line {
	var out []Line
	for _, l := range lines {
		if strings.TrimSpace(l.code) != "" {
			out = append(out, l)
		}
	}
	return out
}
