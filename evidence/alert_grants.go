package evidence

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The alert rules about who is granted what outside the policy modules:
// a role given by default, a bypass for a privileged flag.

// roleValue is a role, permission or access level set in a keyword list,
// a map or a struct: `roles: [:none]`, `role: "viewer"`, `access: :read`.
var roleValue = hinted{regexp.MustCompile(`\b(\w*(?:role|roles|permission|permissions|access|access_level|scope|scopes))\s*(?::|"\s*=>)\s*(:\w+|"[^"]*"|\[[^\]]*\])`), []string{"role", "permission", "access", "scope"}}

// rolesGranted: in the code under test, a role, permission or access
// level set in a literal that now has another value than the line it
// replaces: who gets what changed. A value the file sets as often as
// before moved with its clause (clauses reordered): nothing is granted.
func rolesGranted(c change) []Finding {
	if c.test || !elixirFile(c.path) {
		return nil
	}
	values := func(l Line) [][]string {
		if l.code == "" {
			return nil // a comment, or a heredoc's text
		}
		return roleValue.FindAllStringSubmatch(withStrings(l.Text), -1)
	}
	gained := map[string]int{} // key=value: how many more times the file sets it
	for _, l := range c.all {
		for _, m := range values(l) {
			switch l.Kind {
			case '+':
				gained[m[1]+"="+strings.TrimSpace(m[2])]++
			case '-':
				gained[m[1]+"="+strings.TrimSpace(m[2])]--
			}
		}
	}
	var out []Finding
	for _, b := range c.blocks {
		before := map[string]string{}
		for _, l := range b.removed {
			for _, m := range values(l) {
				before[m[1]] = strings.TrimSpace(m[2])
			}
		}
		for _, l := range b.added {
			for _, m := range values(l) {
				now := strings.TrimSpace(m[2])
				if old, ok := before[m[1]]; ok && old != now && !lesserRole(old, m[2]) && gained[m[1]+"="+now] > 0 {
					out = append(out, c.finding("role-changed", Concern, l, fmt.Sprintf("%s is now %s where it was %s: check who is granted what", m[1], now, old)))
				}
			}
		}
	}
	return out
}

// privilegedBypass is a clause that grants on a privileged flag alone:
// `_ when admin? -> :rw`, `%{superuser: true} -> true`.
var privilegedBypass = regexp.MustCompile(`(?i)(when\s+[\w.]*(admin|superuser|super_user|staff|root)\w*\??|(admin|superuser|staff)\w*\??:\s*true\s*\}?)\s*(->|,\s*do:)\s*(true|:ok|\{:ok\b|:rw|:write|:admin|:allow\w*|:all)\b`)

// privilegedBypasses: a clause added that lets a privileged flag through
// before the checks that follow it.
func privilegedBypasses(c change) []Finding {
	if c.test || !elixirFile(c.path) {
		return nil
	}
	var out []Finding
	for _, l := range c.added() {
		if privilegedBypass.MatchString(l.code) {
			out = append(out, c.finding("privileged-bypass", Concern, l, "a clause now grants on a privileged flag alone, ahead of the checks after it: check every action it reaches"))
		}
	}
	return out
}

// roleRanks orders the words roles are named with, from least privilege.
var roleRanks = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\b(none|no[ _]access|guest|anonymous|viewer|read|reader|read_only|readonly)\b`),
	regexp.MustCompile(`(?i)\b(member|user|basic|contributor|write|writer|editor|staff)\b`),
	regexp.MustCompile(`(?i)\b(manager|maintainer|admin|administrator|owner|superuser|super_admin|root|all)\b`),
}

// roleRank is the highest rank a value names, -1 when it names none.
func roleRank(v string) int {
	rank := -1
	for i, re := range roleRanks {
		if re.MatchString(v) {
			rank = i
		}
	}
	return rank
}

// lesserRole reports whether now names a role of no more privilege than
// was: least privilege restored is no concern.
func lesserRole(was, now string) bool {
	w, n := roleRank(was), roleRank(now)
	return w >= 0 && n >= 0 && n <= w
}

var (
	// policyGrant is an Ash policy check that lets an actor through when
	// it holds: the policy passes on any one of them.
	policyGrant = hinted{regexp.MustCompile(`^\s*authorize_(if|unless)\b`), []string{"authorize_"}}
	// policyOpen opens an Ash policy or bypass block.
	policyOpen = regexp.MustCompile(`^\s*(policy|bypass)\b.*\bdo\s*$`)
)

// policiesWidened: an authorize_if added to an Ash policy the file had:
// the policy passes on any of its authorize_if checks, so the new one lets
// through every actor it matches, whatever the others ask. A check
// rewritten in its place (the block removes one) is left to a reader.
func policiesWidened(c change) []Finding {
	if c.test || !elixirFile(c.path) {
		return nil
	}
	lines, at := c.headView()
	added := map[int]bool{}
	for _, l := range c.added() {
		added[l.New] = true
	}
	var out []Finding
	for _, b := range c.blocks {
		if slices.ContainsFunc(b.removed, func(l Line) bool { return policyGrant.MatchString(l.code) }) {
			continue
		}
		for _, l := range b.added {
			i, ok := at[l.New]
			if !ok || !policyGrant.MatchString(l.code) {
				continue
			}
			if open := enclosing(lines, i); open >= 0 && policyOpen.MatchString(lines[open].code) && !added[lines[open].New] {
				out = append(out, c.finding("policy-widened", Concern, l, "a policy that existed passes on a new check ("+strings.TrimSpace(l.code)+"): every actor it matches is now let through, whatever the policy's other checks ask"))
			}
		}
	}
	return out
}

// enclosing is the nearest line before line i indented less: the block
// it sits in, -1 for none.
func enclosing(lines []Line, i int) int {
	depth := indentOf(lines[i].Text)
	for j := i - 1; j >= 0 && j >= i-maxJoined; j-- {
		if d := indentOf(lines[j].Text); d >= 0 && d < depth {
			return j
		}
	}
	return -1
}
