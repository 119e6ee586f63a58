package evidence

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// alertRules are what a fix of a production alert must not do: make the
// error go away by letting more through (authorization, ownership,
// billing), change what existing callers get, or drop the tests.
var alertRules = []rule{plugsRemoved, pipelinesChanged, authorizationModules, checksRemoved, defaultsChanged, deletedTests, deletedAssertions}

var (
	plugLine = regexp.MustCompile(`^\s*plug\s+(:?[A-Za-z_][\w.]*[?!]?)(.*)$`)
	pipeLine = regexp.MustCompile(`^\s*(pipe_through|on_mount|live_session)\b(.*)$`)
	// webFile is where requests are let in: routers, controllers, plugs,
	// LiveViews and the endpoint.
	webFile = regexp.MustCompile(`(^|/)(router|endpoint)\.ex$|_controller\.ex$|/controllers/|/plugs?/|_plug\.ex$|_live\.ex$|/live/`)
)

// plugsRemoved: a plug removed from a controller, router or pipeline, or
// kept under the same name with other options (fewer actions, an except:
// list, another role), wherever in the file it was added back.
func plugsRemoved(c change) []Finding {
	if !webFile.MatchString(c.path) {
		return nil
	}
	now := map[string][]string{} // plug → the options of each added one
	for _, l := range c.added() {
		if m := plugLine.FindStringSubmatch(withStrings(l.Text)); m != nil {
			now[m[1]] = append(now[m[1]], strings.TrimSpace(m[2]))
		}
	}
	var out []Finding
	for _, l := range c.removed() {
		m := plugLine.FindStringSubmatch(withStrings(l.Text))
		if m == nil {
			continue
		}
		opts, kept := now[m[1]]
		switch {
		case !kept:
			out = append(out, c.finding("plug-removed", Concern, l, fmt.Sprintf("the plug %s no longer runs here: requests it stopped now reach the action", m[1])))
		case !slices.Contains(opts, strings.TrimSpace(m[2])):
			out = append(out, c.finding("plug-changed", Concern, l, fmt.Sprintf("the plug %s now runs with other options (%s): check it still guards every action it did", m[1], orNone(opts[0]))))
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

var atom = regexp.MustCompile(`:\w+|[A-Z][\w.]*`)

// pipelinesChanged: a pipe_through, on_mount or live_session removed or
// given fewer pipelines in a router or LiveView. One added back anywhere
// in the file with at least the same pipelines is moved or tightened.
func pipelinesChanged(c change) []Finding {
	if !webFile.MatchString(c.path) {
		return nil
	}
	var now []string
	for _, l := range c.added() {
		if pipeLine.MatchString(l.code) {
			now = append(now, l.code)
		}
	}
	var out []Finding
	for _, l := range c.removed() {
		m := pipeLine.FindStringSubmatch(l.code)
		if m == nil {
			continue
		}
		kept := false
		for _, n := range now {
			if pm := pipeLine.FindStringSubmatch(n); pm[1] == m[1] && containsAll(atom.FindAllString(pm[2], -1), atom.FindAllString(m[2], -1)) {
				kept = true
			}
		}
		if !kept {
			out = append(out, c.finding("pipeline-changed", Concern, l, "the routes here no longer go through the same pipelines or mount hooks: check authentication and authorization still apply"))
		}
	}
	return out
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

var authPath = regexp.MustCompile(`(?i)(polic(y|ies)|permission|authori[sz]|(^|/|_)auth(/|\.ex|_)|access|guardian|abilit(y|ies)|(^|/)roles?(/|\.ex|_)|bodyguard|/can\.ex)`)

// authorizationModules: any change in a policy, permission or
// authorization module is one a reviewer must read.
func authorizationModules(c change) []Finding {
	if c.test || !authPath.MatchString(c.path) {
		return nil
	}
	for _, b := range c.blocks {
		for _, l := range append(append([]Line{}, b.removed...), b.added...) {
			if strings.TrimSpace(l.Text) != "" {
				return []Finding{c.finding("authorization-changed", Concern, l, "the fix changes authorization code: check who may do what is unchanged")}
			}
		}
	}
	return nil
}

var (
	// guardWord names what a check is about: ownership, billing, roles,
	// permissions, membership, verification.
	guardWord = regexp.MustCompile(`(?i)\b[\w.]*(owner|billing|paid|plan|subscri|role|admin|authori[sz]|permi|access|can\?|member|verif|ensure_|require_|allowed|forbid|policy|scope)[\w?!]*`)
	// checkShape is how a check reads in Elixir: a condition, a guard, a
	// with clause, an error return.
	checkShape = regexp.MustCompile(`\b(if|unless|case|cond|with|when|and|or|not)\b|<-|&&|\|\||\{:error|:forbidden|:unauthorized|\b40[13]\b|raise\b`)
)

// checksRemoved: outside tests, a removed line that checks ownership,
// billing, a role or a permission, when no added line of the same block
// makes the same check.
func checksRemoved(c change) []Finding {
	if c.test {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		var sb strings.Builder
		for _, l := range b.added {
			sb.WriteString(l.code + "\n")
		}
		added := sb.String()
		for _, l := range b.removed {
			line := l.code
			if !checkShape.MatchString(line) {
				continue
			}
			for _, w := range guardWord.FindAllString(line, -1) {
				if !strings.Contains(added, w) {
					out = append(out, c.finding("check-removed", Concern, l, fmt.Sprintf("a check on %s is gone: the error may stop because more is let through", w)))
					break
				}
			}
			if len(out) > 0 && out[len(out)-1].Line == l.Old {
				break // one finding per block: the rest of it is the same check
			}
		}
	}
	return out
}

var (
	argDefault = regexp.MustCompile(`\b([a-z_]\w*)\s*\\\\\s*([^,)]+)`)
	getDefault = regexp.MustCompile(`\b((?:Keyword|Map|Access)\.get|Application\.get_env)\(([^,]+),\s*([^,]+),\s*([^)]+)\)`)
	fieldDef   = regexp.MustCompile(`^\s*(field|add)\s+:(\w+),.*\bdefault:\s*([^,)\]]+)`)
	orDefault  = regexp.MustCompile(`(\w+\[:\w+\]|\w+\.\w+)\s*\|\|\s*(.+)$`)
)

// defaultsChanged: a default value of an existing parameter, option or
// schema field changed: every caller that left it out now gets something
// else.
func defaultsChanged(c change) []Finding {
	if c.test {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		before := map[string]string{}
		for _, l := range b.removed {
			for k, v := range defaultsOf(withStrings(l.Text)) {
				before[k] = v
			}
		}
		for _, l := range b.added {
			for k, v := range defaultsOf(withStrings(l.Text)) {
				if old, ok := before[k]; ok && old != v {
					out = append(out, c.finding("default-changed", Concern, l, fmt.Sprintf("the default of %s changed from %s to %s: existing callers that leave it out now get the new behaviour", k, old, v)))
				}
			}
		}
	}
	return out
}

// defaultsOf lists the defaults a line declares, by what they belong to.
func defaultsOf(line string) map[string]string {
	out := map[string]string{}
	if strings.Contains(line, "def") {
		for _, m := range argDefault.FindAllStringSubmatch(line, -1) {
			out["argument "+m[1]] = strings.TrimSpace(m[2])
		}
	}
	for _, m := range getDefault.FindAllStringSubmatch(line, -1) {
		out[m[1]+" of "+strings.TrimSpace(m[3])] = strings.TrimSpace(m[4])
	}
	if m := fieldDef.FindStringSubmatch(line); m != nil {
		out["field "+m[2]] = strings.TrimSpace(m[3])
	}
	if m := orDefault.FindStringSubmatch(line); m != nil {
		out[m[1]+" ||"] = strings.TrimSpace(m[2])
	}
	return out
}
