package evidence

import (
	"regexp"
	"slices"
	"strings"
)

// A route moved in a router keeps what guarded it only if the scopes it
// now sits in pipe it through at least the same plugs.

var (
	routeLine = regexp.MustCompile(`^\s*(get|post|put|patch|delete|options|head|match|live|resources|forward|live_dashboard)\s+\S`)
	blockOpen = regexp.MustCompile(`\bdo\s*(#.*)?$`)
	scopeOpen = regexp.MustCompile(`^\s*(scope|live_session)\b`)
	blockEnd  = regexp.MustCompile(`^\s*end\b`)
)

// routeGuards maps each route line of a router (its number, 1-based) to
// what guards it: the pipelines its scopes pipe it through (nested scopes
// add theirs), their plugs, and a live_session's hooks.
func routeGuards(text string, defs pipelineDefs) map[int][]string {
	type frame struct {
		indent int
		guards []string
	}
	var stack []frame
	out := map[int][]string{}
	for i, raw := range strings.Split(text, "\n") {
		line := code(raw)
		indent := indentOf(raw)
		switch {
		case indent < 0:
			continue
		case blockEnd.MatchString(line):
			for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
				stack = stack[:len(stack)-1]
			}
			continue
		case routeLine.MatchString(line):
			var guards []string
			for _, f := range stack {
				guards = append(guards, f.guards...)
			}
			// What guards it is the plugs its pipelines hold (a pipeline's
			// name aside: :require_admin_user and :admin may hold the same
			// plug) and the hook modules of its live_session.
			var plugs []string
			for _, g := range defs.expand(guards) {
				if _, isPipeline := defs[g]; !isPipeline {
					plugs = append(plugs, g)
				}
			}
			out[i+1] = plugs
		case strings.HasPrefix(strings.TrimSpace(line), "pipe_through") && len(stack) > 0:
			top := &stack[len(stack)-1]
			top.guards = append(top.guards, atom.FindAllString(line, -1)...)
		}
		if blockOpen.MatchString(line) {
			f := frame{indent: indent}
			if scopeOpen.MatchString(line) && strings.HasPrefix(strings.TrimSpace(line), "live_session") {
				for _, a := range atom.FindAllString(line, -1) {
					if !strings.HasPrefix(a, ":") {
						f.guards = append(f.guards, a) // a hook's module; its name and options vary
					}
				}
			}
			stack = append(stack, f)
		}
	}
	return out
}

// routeKey is a route by its verb and what it routes to (controller,
// action, options): its path changes with the scope it moves to.
func routeKey(line string) string {
	key := squashSpace(strings.TrimSuffix(strings.TrimSpace(withStrings(line)), " do"))
	if m := routePath.FindStringSubmatch(key); m != nil {
		return m[1] + " " + m[2]
	}
	return key
}

var routePath = regexp.MustCompile(`^(\w+)\s*\(?\s*"[^"]*"\s*,\s*(.*)$`)

// routesUnguarded: in a router read whole on both sides, a route added
// (moved, or rewritten the same) where fewer plugs guard it than guarded
// the same route before: an action let through what it was not.
func routesUnguarded(c change) []Finding {
	if !strings.HasSuffix(c.path, "router.ex") || c.before == nil || c.after == nil || c.before.fragment || c.after.fragment {
		return nil
	}
	defs := c.pipelineDefs()
	baseLines := strings.Split(c.before.text, "\n")
	was := map[string][][]string{}
	for n, guards := range routeGuards(c.before.text, defs) {
		k := routeKey(baseLines[n-1])
		was[k] = append(was[k], slices.DeleteFunc(slices.Clone(guards), loadsOnly.MatchString))
	}
	now := routeGuards(c.after.text, defs)
	var out []Finding
	for _, l := range c.added() {
		guards, isRoute := now[l.New]
		before := was[routeKey(l.Text)]
		if !isRoute || len(before) == 0 {
			continue
		}
		// The route as it was guarded most lightly must still be guarded
		// as much.
		kept := false
		for _, b := range before {
			kept = kept || containsAll(guards, b)
		}
		if !kept {
			out = append(out, c.finding("pipeline-changed", Concern, l, "this route now sits in scopes that pipe it through fewer plugs than before: check authentication and authorization still apply to it"))
		}
	}
	return out
}
