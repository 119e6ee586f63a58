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

// roleList is a list of roles or permissions a module attribute holds
// (@moderator_roles [:owner, :moderator]) or a role is checked against
// (role in [:owner, :admin]).
var roleList = hinted{regexp.MustCompile(`(@\w*(?:role|permission|scope|admins|moderators|allowed|privileged)\w*)\s+(\[[^\]]*\]|~w[(\[][^)\]]*[)\]]a?)|\b(\w*role)\s+in\s+(\[[^\]]*\])`), []string{"role", "permission", "scope", "admins", "moderators", "allowed", "privileged"}}

// isList reports whether a value is a list literal.
func isList(v string) bool { return strings.HasPrefix(v, "[") || strings.HasPrefix(v, "~w") }

// gainedItems are the items a list now has that it had not, "" when
// none (or when either value is not a list).
func gainedItems(was, now string) string {
	if !isList(was) || !isList(now) {
		return ""
	}
	had := map[string]bool{}
	for _, w := range strings.Fields(requirements(was)) {
		had[w] = true
	}
	var gained []string
	for _, w := range strings.Fields(requirements(now)) {
		if !had[w] {
			gained = append(gained, w)
		}
	}
	return strings.Join(gained, ", ")
}

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
		text := withStrings(l.Text)
		out := roleValue.FindAllStringSubmatch(text, -1)
		for _, m := range roleList.FindAllStringSubmatch(text, -1) {
			if m[1] == "" {
				m = []string{m[0], m[3] + " in", m[4]} // role in [...]
			}
			out = append(out, m)
		}
		return out
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
				old, ok := before[m[1]]
				if !ok || old == now || gained[m[1]+"="+now] <= 0 {
					continue
				}
				// A list of the roles allowed (an attribute, a role in [...])
				// widens with any role it gains; a role given to someone is
				// compared by rank.
				if allowed := strings.HasPrefix(m[1], "@") || strings.HasSuffix(m[1], " in"); allowed {
					if added := gainedItems(old, now); added != "" {
						out = append(out, c.finding("role-changed", Concern, l, fmt.Sprintf("%s now also allows %s: who may do what it guards widened", m[1], added)))
					}
				} else if !lesserRole(old, m[2]) {
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
	// policyBypass opens an Ash bypass: every action it matches is
	// authorized. AshAuthentication's own, for its sign-in actions, is
	// how those actions are meant to run.
	policyBypass = regexp.MustCompile(`^\s*bypass\b.*\bdo\s*$`)
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
	added := c.addedLines()
	var out []Finding
	for _, l := range c.added() {
		if policyBypass.MatchString(l.code) && !strings.Contains(l.code, "AshAuthentication") && !c.removedSame(l) {
			out = append(out, c.finding("policy-widened", Concern, l, "a bypass added to the policies ("+strings.TrimSpace(l.code)+"): every action it matches is authorized, whatever the policies after it ask"))
		}
	}
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

// grantAll is a missing scope, permission or role list made to default to
// everything: token.scopes || ApiTokens.all_scopes().
var grantAll = hinted{regexp.MustCompile(`\b\w*(?:scopes|permissions|roles|abilities|access)\b[^|]*\|\|\s*(?:[\w.]*\b(?:all|full|every)(?:_\w+)?\b|:all|:admin|\[:admin\])`), []string{"||"}}

// grantsAllByDefault: a scope, permission or role list that, when missing,
// now grants everything: what had none (a legacy token) gets full access.
func grantsAllByDefault(c change) []Finding {
	if c.test || !elixirFile(c.path) {
		return nil
	}
	var out []Finding
	for _, l := range c.added() {
		if grantAll.MatchString(l.code) && !c.removedSame(l) {
			out = append(out, c.finding("role-changed", Concern, l, "a missing scope, permission or role list now defaults to all of them ("+strings.TrimSpace(l.code)+"): what had none gets full access"))
		}
	}
	return out
}

// tenancyWord names what a refusal guards: an organization, a tenant, an
// owner, a permission, a signature.
var tenancyWord = regexp.MustCompile(`(?i)\b(org|org_id|organization\w*|tenant\w*|account_id|owner\w*|auth\w*|permission\w*|scope\w*|forbidden|unauthori[sz]ed|signature|token|role|admin|access|prefix)\b`)

// refusalsLogged: outside tests, a refusal that guarded a tenant, an
// owner or a permission (a raise, an error returned, a halt) replaced by
// a log line and nothing that refuses: the request now goes on, unscoped
// or unchecked, where it stopped.
func refusalsLogged(c change) []Finding {
	if c.test || !elixirFile(c.path) {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		guarded := false
		for _, l := range b.removed {
			guarded = guarded || refusal.MatchString(l.code) && tenancyWord.MatchString(withStrings(l.Text))
		}
		if !guarded {
			continue
		}
		logged := -1
		for i, l := range b.added {
			if refusal.MatchString(l.code) {
				logged = -1
				break
			}
			if logged < 0 && strings.Contains(l.code, "Logger.") {
				logged = i
			}
		}
		if logged >= 0 {
			out = append(out, c.finding("check-removed", Concern, b.added[logged], "what refused here (a tenant, an owner or a permission unchecked) now logs and goes on: the request is let through"))
		}
	}
	return out
}
