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
	blockEnd  = regexp.MustCompile(`^\s*end\b`)
)

// guardSet is what guards a route: the plugs the pipelines of its
// scopes hold (a pipeline's name aside: :require_admin_user and :admin
// may hold the same plug), loading-only ones left out, and the modules
// of its live_session's on_mount hooks. Routes of one scope share it.
type guardSet struct{ plugs map[string]bool }

func (g *guardSet) holds(want *guardSet) bool {
	for w := range want.plugs {
		if !g.plugs[w] {
			return false
		}
	}
	return true
}

// routeGuards maps each route line of a router (its number, 1-based) to
// what guards it, the scopes around it read by indentation.
func routeGuards(text string, defs pipelineDefs) map[int]*guardSet {
	type frame struct {
		indent int
		guards []string // what this scope adds
	}
	var stack []frame
	var current *guardSet // what the stack adds up to; nil when it changed
	out := map[int]*guardSet{}
	for i, raw := range strings.Split(text, "\n") {
		line := code(raw)
		indent := indentOf(raw)
		switch {
		case indent < 0:
			continue
		case blockEnd.MatchString(line):
			for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
				stack, current = stack[:len(stack)-1], nil
			}
			continue
		case routeLine.MatchString(line):
			if current == nil {
				current = &guardSet{plugs: map[string]bool{}}
				for _, f := range stack {
					for _, g := range defs.expand(f.guards) {
						if _, isPipeline := defs[g]; !isPipeline && !loadsOnly.MatchString(g) {
							current.plugs[g] = true
						}
					}
				}
			}
			out[i+1] = current
		case strings.HasPrefix(strings.TrimSpace(line), "pipe_through") && len(stack) > 0:
			top := &stack[len(stack)-1]
			top.guards, current = append(top.guards, atom.FindAllString(line, -1)...), nil
		}
		if blockOpen.MatchString(line) {
			f := frame{indent: indent}
			if _, hooks, ok := strings.Cut(line, "on_mount:"); ok && strings.HasPrefix(strings.TrimSpace(line), "live_session") {
				for _, a := range atom.FindAllString(hooks, -1) {
					if !strings.HasPrefix(a, ":") {
						f.guards = append(f.guards, a) // a hook's module; its options vary
					}
				}
			}
			stack, current = append(stack, f), nil
		}
	}
	return out
}

// routeKey is a route by its verb and what it routes to (controller and
// action): its path and its helper's name (as:) change with the scope it
// moves to.
func routeKey(line string) string {
	key := squashSpace(strings.TrimSuffix(strings.TrimSpace(withStrings(line)), " do"))
	if m := routePath.FindStringSubmatch(key); m != nil {
		target := m[2]
		if i := routeOption.FindStringIndex(target); i != nil {
			target = target[:i[0]]
		}
		return m[1] + " " + strings.TrimSuffix(strings.TrimSpace(target), ")")
	}
	return key
}

// routeOption is where a route's keyword options start (, as: :episode).
var routeOption = regexp.MustCompile(`,\s*[a-z_]\w*:\s`)

var routePath = regexp.MustCompile(`^(\w+)\s*\(?\s*"[^"]*"\s*,\s*(.*)$`)

// routesUnguarded: in a router read whole on both sides, a route added
// (moved, or rewritten the same) where fewer plugs guard it than guarded
// the same route before: an action let through what it was not.
func routesUnguarded(c change) []Finding {
	if !strings.HasSuffix(c.path, "router.ex") || c.before == nil || c.after == nil || c.before.fragment || c.after.fragment {
		return nil
	}
	defs := c.pipelineDefs()
	baseLines := c.before.textLines()
	was := map[string][]*guardSet{}
	for n, guards := range routeGuards(c.before.text, defs) {
		if k := routeKey(baseLines[n-1]); !slices.Contains(was[k], guards) {
			was[k] = append(was[k], guards) // routes of one scope share one
		}
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
			kept = kept || guards.holds(b)
		}
		if !kept {
			out = append(out, c.finding("pipeline-changed", Concern, l, "this route now sits in scopes that pipe it through fewer plugs than before: check authentication and authorization still apply to it"))
		}
	}
	return out
}

// routedController is the controller a route line names: the first
// module after its path, and the action after it (none for resources).
var routedController = regexp.MustCompile(`^\s*\w+\s*\(?\s*"[^"]*"\s*,\s*([A-Z][\w.]*)(?:\s*,\s*:(\w+))?`)

// routeTo is one route to a controller: its action ("" for every action
// of a resources line) and what guards it.
type routeTo struct {
	action string
	guards *guardSet
}

// controllerGuards maps each controller the diff's routers route to (by
// its module's last name) to what guards each of its routes, the routers
// read whole at head.
func controllerGuards(changes []*change) map[string][]routeTo {
	out := map[string][]routeTo{}
	for _, c := range changes {
		if !strings.HasSuffix(c.path, "router.ex") || c.after == nil || c.after.fragment {
			continue
		}
		lines := c.after.textLines()
		for n, guards := range routeGuards(c.after.text, c.pipelineDefs()) {
			if m := routedController.FindStringSubmatch(code(lines[n-1])); m != nil {
				name := m[1][strings.LastIndex(m[1], ".")+1:]
				out[name] = append(out[name], routeTo{m[2], guards})
			}
		}
	}
	return out
}

// guardedByRouter reports whether every route the diff's routers give
// this controller, to an action the plug ran for (its when clause on the
// action), runs a plug of the name (a function plug :require_admin moved
// into the router as RequireAdmin): the check moved, it was not dropped.
func (c change) guardedByRouter(p plugStatement) bool {
	if c.after == nil || c.after.fragment {
		return false
	}
	var routes []routeTo
	for _, l := range c.after.textLines() {
		if m := moduleDef.FindStringSubmatch(l); m != nil {
			routes = c.diff.controllerGuards[m[1][strings.LastIndex(m[1], ".")+1:]]
			break
		}
	}
	guarded := 0
	for _, r := range routes {
		if !ranFor(p, r.action) {
			continue
		}
		runs := false
		for name := range r.guards.plugs {
			runs = runs || plugKey(name) == plugKey(p.name)
		}
		if !runs {
			return false
		}
		guarded++
	}
	return guarded > 0
}

// ranFor reports whether a plug's when clause on the action let it run
// for action ("": any of a resources line's actions, which it may).
func ranFor(p plugStatement, action string) bool {
	m := actionGuard.FindStringSubmatch(p.opts)
	if m == nil || action == "" {
		return true
	}
	listed := slices.Contains(strings.Fields(requirements(m[2])), action)
	return listed == listsIn(m[1])
}

// plugKey is a plug's name as a function plug writes it: RequireAdmin,
// AppWeb.RequireAdmin and :require_admin are one.
func plugKey(name string) string {
	name = strings.TrimPrefix(name[strings.LastIndex(name, ".")+1:], ":")
	var b strings.Builder
	for i, r := range name {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
