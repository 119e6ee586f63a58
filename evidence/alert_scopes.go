package evidence

import (
	"regexp"
	"slices"
	"strings"
)

// A lookup that was limited to who asks, no longer limited.

var (
	// scopedCall is a call of a module's function with its arguments on
	// one line: Projects.get_project!(user, id).
	scopedCall = regexp.MustCompile(`\b([A-Z][\w.]*\.[a-z_]\w*[!?]?)\(([^()]*)\)`)
	// scopeArg names who asks: the user, the actor, their scope or
	// organization.
	scopeArg = regexp.MustCompile(`\b(current_user|user|actor|current_scope|scope|org|organization|current_org|account|current_account|tenant|owner|member|viewer)\b`)
)

// scopesDropped: outside tests, a call that was given who asks (the
// user, the actor, the organization) replaced by the same function called
// without it, or by another of its module's loaders of the same thing
// (get_device_by_identifier(org, id) made get_active_device(id)) where
// the lines that replace it no longer name the scope it was given:
// Projects.get_project!(user, id) made Projects.get_project!(id) loads
// any project, whoever asks.
func scopesDropped(c change) []Finding {
	if c.test || !elixirFile(c.path) {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		scoped := map[string]bool{}
		var scopes []string // the scopes the removed calls were given (org)
		for _, l := range b.removed {
			for _, m := range scopedCall.FindAllStringSubmatch(l.code, -1) {
				if found := scopeArg.FindAllString(m[2], -1); found != nil {
					scoped[m[1]] = true
					scopes = append(scopes, found...)
				}
			}
		}
		if len(scoped) == 0 {
			continue
		}
		for _, l := range b.added {
			for _, m := range scopedCall.FindAllStringSubmatch(l.code, -1) {
				if scopeArg.MatchString(m[2]) {
					continue
				}
				if scoped[m[1]] || sameThingLoaded(scoped, m[1]) && !namesAny(b.added, scopes) {
					out = append(out, c.finding("check-removed", Concern, l, m[1]+" is now called without who asks (it was given the user or their scope): what it loads is no longer limited to what they may see"))
					break
				}
			}
		}
	}
	return out
}

// sameThingLoaded reports whether call loads, from the same module, the
// thing one of the scoped calls loaded (Devices.get_device_by_identifier
// made Devices.get_active_device): a lookup rewritten, by another name.
func sameThingLoaded(scoped map[string]bool, call string) bool {
	mod, fun := splitCall(call)
	if !loaderName.MatchString(fun) {
		return false
	}
	for s := range scoped {
		smod, sfun := splitCall(s)
		if smod != mod || !loaderName.MatchString(sfun) {
			continue
		}
		for _, w := range nameWords(sfun) {
			if slices.Contains(nameWords(fun), w) {
				return true
			}
		}
	}
	return false
}

// namesAny reports whether any of the lines names one of words: a scope
// piped in, or checked after the lookup, may limit it there.
func namesAny(lines []Line, words []string) bool {
	return slices.ContainsFunc(lines, func(l Line) bool {
		return slices.ContainsFunc(words, func(w string) bool { return indexWord(l.code, w) >= 0 })
	})
}

// splitCall is a Module.fun call's module and function.
func splitCall(call string) (mod, fun string) {
	i := strings.LastIndex(call, ".")
	return call[:i], call[i+1:]
}

// loaderName is a function named for loading records.
var loaderName = regexp.MustCompile(`^(get|fetch|find|load|lookup|list|one)_\w+|^(get|fetch|find)[!?]?$`)

// nameWords are a function name's words that name what it loads: not its
// verb, nor by, for, with or active.
func nameWords(fun string) []string {
	var out []string
	for _, w := range strings.Split(strings.TrimRight(fun, "!?"), "_") {
		switch w {
		case "get", "fetch", "find", "load", "lookup", "list", "one", "by", "for", "with", "active", "all", "":
		default:
			out = append(out, w)
		}
	}
	return out
}

// roleAtoms is a list of roles given as an argument: [:owner],
// [:admin, :editor].
var roleAtoms = regexp.MustCompile(`\[\s*:(?:owner|admin\w*|editor|viewer|member|manager|maintainer|moderator|superuser|super_admin|staff|billing\w*|write|read|readonly|read_only)(?:\s*,\s*:\w+)*\s*\]`)

// rolesLeftToDefault: outside tests, a call that named the roles it
// allowed (Sites.get_for_user!(user_id, domain, [:owner])) replaced by
// the same call, or another loader of the same thing, without them: the
// function's default roles apply, and a default is rarely the narrowest.
func rolesLeftToDefault(c change) []Finding {
	if c.test || !elixirFile(c.path) {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		limited := map[string]string{} // call -> the roles it named
		for _, l := range b.removed {
			for _, m := range scopedCall.FindAllStringSubmatch(l.code, -1) {
				if roles := roleAtoms.FindString(m[2]); roles != "" {
					limited[m[1]] = roles
				}
			}
		}
		if len(limited) == 0 {
			continue
		}
		for _, l := range b.added {
			for _, m := range scopedCall.FindAllStringSubmatch(l.code, -1) {
				if roleAtoms.MatchString(m[2]) || strings.Contains(m[2], "roles") {
					continue // roles still named, or handed on (@owner_roles)
				}
				roles := ""
				for name, r := range limited {
					if name == m[1] || sameThingLoaded(map[string]bool{name: true}, m[1]) {
						roles = r
					}
				}
				if roles != "" {
					out = append(out, c.finding("role-changed", Concern, l, m[1]+" is now called without the roles it was limited to ("+roles+"): the function's default roles apply"))
					break
				}
			}
		}
	}
	return out
}
