package evidence

import "regexp"

// A check written inside a controller's action, moved into a plug the
// change adds in front of that action.

var (
	// checkPlug is a plug named for a check: RequireActorType,
	// Bodyguard.Plug.Authorize, :ensure_admin.
	checkPlug = regexp.MustCompile(`(?i)^:?(require|ensure|authori[sz]e|permit|verify|check|restrict|guard)\w*$|(Authori[sz]e|Policy|Permission|Admin|Owner|Role|Guard)\w*$`)
	// checkValue is what a check compares against: an atom, a string, a
	// dotted module not matched as a struct (a policy module).
	checkValue = regexp.MustCompile(`(?:^|[^%\w.])([A-Z]\w*(?:\.[A-Z]\w*)+)\b|(?:^|[^:\w]):([a-z_]\w*[?!]?)|"([^"]+)"`)
	// localCall is a call of a function of the module itself.
	localCall = regexp.MustCompile(`(?:^|[^.\w:])([a-z_]\w*[?!]?)\(`)
)

// answers are atoms that say how a check ended, not what it checked.
var answers = map[string]bool{"ok": true, "error": true, "forbidden": true, "unauthorized": true, "not_found": true, "halt": true, "cont": true}

// checkMovedIntoPlug reports whether a removed check line of an action
// is asked, now, by a plug the change adds to the same module: one named
// for a check whose when clause runs it for that action, where the lines
// the diff adds name every value the check named (the policy module, the
// roles; the values the local function it called compared, as its
// clauses at the base wrote them).
//
// A line of the check function itself, removed with it, is moved when
// every line that called it is.
func (c change) checkMovedIntoPlug(l Line) bool {
	if c.before == nil || c.before.fragment || l.Kind != '-' {
		return false
	}
	action := c.before.defAt(l.Old)
	if action == nil {
		return false
	}
	if c.after != nil && !c.after.defined[action.name] {
		return c.callersMoved(action.name)
	}
	covered := false
	for _, p := range plugStatements(c.all, '-') {
		covered = covered || p.changed && checkPlug.MatchString(p.name) && ranFor(p, action.name)
	}
	if !covered {
		return false
	}
	text := withStrings(l.Text)
	for _, m := range localCall.FindAllStringSubmatch(text, -1) {
		for _, d := range c.before.defs {
			if d.name == m[1] && d.name != action.name {
				text += " " + withStrings(c.before.linesOf(d.start, d.end))
			}
		}
	}
	values := 0
	for _, m := range checkValue.FindAllStringSubmatch(text, -1) {
		v := m[1] + m[2] + m[3]
		if m[2] != "" && (answers[v] || v == action.name) {
			continue
		}
		if indexWord(c.diff.added, v) < 0 {
			return false
		}
		values++
	}
	return values > 0
}

// callersMoved reports whether every line of the base that calls name
// (a check function the change removes) is a removed check moved into a
// plug.
func (c change) callersMoved(name string) bool {
	removed := map[int]Line{}
	for _, l := range c.removed() {
		removed[l.Old] = l
	}
	calls := 0
	for i, text := range c.before.textLines() {
		if indexWord(code(text), name) < 0 {
			continue
		}
		if d := c.before.defAt(i + 1); d != nil && d.name == name {
			continue // its own clauses
		}
		l, gone := removed[i+1]
		if !gone || !c.checkMovedIntoPlug(l) {
			return false
		}
		calls++
	}
	return calls > 0
}
