package evidence

import (
	"regexp"
	"slices"
	"strings"
)

// Functions compared clause by clause: all of an authorization module's
// (authorizationByDefs), and, where requests, sockets and tokens are let
// in outside those modules (plugs, LiveView hooks, channels), a new
// clause of an existing function that lets through everyone it matches
// (a nil user, a token without scopes: gateClausesAdded).

// authorizationByDefs compares what each changed function of an
// authorization module requires, clause by clause: a clause made
// stricter, or a new one that refuses or requires something, is no
// concern; one that admits more, admits everyone, or was removed is.
// decided is false when the change cannot be read that way (a side does
// not parse, or a changed line is outside any function): the caller then
// calls any change a concern.
func authorizationByDefs(c change) (out []Finding, decided bool) {
	// What the hunks show of a file parses with errors around the lines
	// they leave out; every changed line must still sit in a def read.
	if c.before == nil || c.after == nil || c.before.broken && !c.before.fragment || c.after.broken && !c.after.fragment {
		return nil, false
	}
	type key struct {
		name  string
		arity int
	}
	touched := map[key]Line{}
	for _, l := range append(c.removed(), c.added()...) {
		if strings.TrimSpace(l.code) == "" {
			continue
		}
		side, n := c.after, l.New
		if l.Kind == '-' {
			side, n = c.before, l.Old
		}
		d := side.defAt(n)
		if d == nil {
			return nil, false
		}
		if _, seen := touched[key{d.name, d.arity}]; !seen || l.Kind == '+' && touched[key{d.name, d.arity}].Kind == '-' {
			touched[key{d.name, d.arity}] = l
		}
	}
	clauses := func(s *source, k key) []defUnit {
		var out []defUnit
		for _, d := range s.defs {
			if d.name == k.name && d.arity == k.arity {
				out = append(out, d)
			}
		}
		return out
	}
	for k, l := range touched {
		was, now := clauses(c.before, k), clauses(c.after, k)
		if len(was) == 1 && len(now) == 1 {
			if was[0].head != now[0].head || !c.clauseStricter(was[0], now[0]) {
				out = append(out, c.finding("authorization-changed", Concern, l, "`"+k.name+"` may now admit someone it refused before: check who may do what"))
			}
			continue
		}
		// Clauses found by their heads: a file can hold thousands.
		wasAt := map[string]int{} // the last clause of each head
		for i, w := range was {
			wasAt[w.head] = i
		}
		nowAt := map[string][]int{} // each head, and each guarded head without its guard
		for i, n := range now {
			nowAt[n.head] = append(nowAt[n.head], i)
			if head, _, guarded := strings.Cut(n.head, " when "); guarded {
				nowAt[head] = append(nowAt[head], i)
			}
		}
		for _, n := range now {
			match, found := wasAt[n.head]
			if head, _, guarded := strings.Cut(n.head, " when "); !found && guarded {
				if i, ok := wasAt[head]; ok && guardAdded(was[i].head, n.head) {
					match, found = i, true
				}
			}
			if !found {
				match = -1
			}
			switch {
			case match >= 0 && !c.clauseStricter(was[match], n):
				out = append(out, c.finding("authorization-changed", Concern, l, "a clause of `"+k.name+"` may now admit someone it refused before"))
			case match < 0 && len(was) > 0 && admitsAnyone(n.requires):
				// A function the change adds is judged where it is called.
				out = append(out, c.finding("authorization-changed", Concern, l, "a new clause of `"+k.name+"` admits everyone it matches"))
			}
		}
		if f := shadowedBy(was, now); f != "" {
			out = append(out, c.finding("authorization-changed", Concern, l, "a clause of `"+k.name+"` that admits everyone it matches now comes before "+f+": that clause no longer applies"))
		}
		for _, w := range was {
			kept := false
			for _, i := range nowAt[w.head] {
				kept = kept || now[i].head == w.head || guardAdded(w.head, now[i].head) && c.clauseStricter(w, now[i])
			}
			if !kept && len(w.requires) > 0 && !admitsAnyone(w.requires) {
				out = append(out, c.finding("authorization-changed", Concern, l, "a clause of `"+k.name+"` that required something was removed"))
			}
		}
	}
	return out, true
}

// guardAdded reports whether a clause's head is an old one given a
// `when` guard it did not have: it matches fewer.
func guardAdded(was, now string) bool {
	head, _, guarded := strings.Cut(now, " when ")
	return guarded && !strings.Contains(was, " when ") && head == was
}

// admitsAnyone reports whether a requirement has an alternative with no
// condition.
func admitsAnyone(req [][]string) bool {
	for _, alt := range req {
		if len(alt) == 0 {
			return true
		}
	}
	return false
}

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
	opens := map[int]defUnit{} // each clause of the head, by its first line
	for _, d := range c.after.defs {
		if _, seen := opens[d.start]; !seen {
			opens[d.start] = d
		}
	}
	var out []Finding
	for _, l := range c.added() {
		d, opened := opens[l.New]
		if !opened || !admitsAnyone(d.requires) {
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
