package evidence

import (
	"fmt"
	"regexp"
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
