package evidence

import (
	"regexp"
	"slices"
)

// Where requests, sockets and tokens are let in (plugs, LiveView hooks,
// channels) outside the authorization modules, one change is read the
// same way: a new clause of an existing function that lets through
// everyone it matches (a nil user, a token without scopes).

// gateFile is code that lets a request, a socket or a channel join in.
var gateFile = regexp.MustCompile(`_channel\.ex$|/channels/|_socket\.ex$|/mounts?/|/hooks?/|_hooks?\.ex$`)

// gateClausesAdded: in a router, controller, plug, LiveView or channel
// read on both sides, a clause added to a function the file had whose
// body admits everyone it matches.
func gateClausesAdded(c change) []Finding {
	if c.test || authPath.MatchString(c.path) || !webFile.MatchString(c.path) && !gateFile.MatchString(c.path) || c.before == nil || c.after == nil {
		return nil
	}
	type key struct {
		name  string
		arity int
	}
	heads := map[key][]string{}
	for _, d := range c.before.defs {
		k := key{d.name, d.arity}
		heads[k] = append(heads[k], d.head)
	}
	var out []Finding
	for _, l := range c.added() {
		d := c.after.defAt(l.New)
		if d == nil || d.start != l.New || !admitsAnyone(d.requires) {
			continue // only a clause's first line, of a clause that admits everyone
		}
		was, existed := heads[key{d.name, d.arity}]
		if !existed || slices.Contains(was, d.head) || catchAll.MatchString(d.head) {
			continue // a new function, a clause kept, or a fallback read by what the others require
		}
		out = append(out, c.finding("authorization-changed", Concern, l, "a new clause of `"+d.name+"` lets through everyone it matches: check who it admits that the other clauses refused"))
	}
	return out
}
