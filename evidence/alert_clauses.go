package evidence

import (
	"regexp"
	"slices"
	"sort"
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
	touched := map[gateKey]Line{}
	for _, l := range append(c.removed(), c.added()...) {
		if strings.TrimSpace(l.code) == "" {
			continue
		}
		side, n := c.after, l.New
		if l.Kind == '-' {
			side, n = c.before, l.Old
		}
		d := side.defAt(n)
		if d == nil && moduleFrame.MatchString(l.code) {
			continue // a module, protocol implementation or alias around the functions
		}
		if d == nil {
			return nil, false
		}
		if _, seen := touched[gateKey{d.name, d.arity}]; !seen || l.Kind == '+' && touched[gateKey{d.name, d.arity}].Kind == '-' {
			touched[gateKey{d.name, d.arity}] = l
		}
	}
	clauses := func(s *source, k gateKey) []defUnit {
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
		if loader.MatchString(k.name) && !c.before.refuses(was...) && !c.after.refuses(now...) {
			continue // it loads what the checks read (the current user); it refuses no one
		}
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

// loader is a function named for loading or assigning what the checks
// then read (mount_current_user, fetch_current_scope): unless it refuses
// someone, a change to it decides nothing about who may do what.
var loader = regexp.MustCompile(`^(mount|fetch|assign|load|put|get)_\w+$`)

// refuses reports whether any of the clauses' lines refuses someone.
func (s *source) refuses(clauses ...defUnit) bool {
	for _, d := range clauses {
		if refusal.MatchString(s.linesOf(d.start, d.end)) {
			return true
		}
	}
	return false
}

// moduleFrame is a line that frames functions without deciding anything:
// a module or implementation opened or closed, an alias or import.
var moduleFrame = regexp.MustCompile(`^\s*(defmodule|defimpl|defprotocol|alias|import|require|end)\b`)

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
var gateFile = regexp.MustCompile(`_channel\.ex$|/channels/|_socket\.ex$|/mounts?/|/hooks?/|_hooks?\.ex$|/resolvers?/|_resolver\.ex$|/middlewares?/`)

// gateClausesAdded: in a router, controller, plug, LiveView or channel
// read on both sides, a clause added to a function the file had whose
// body admits everyone it matches.
func gateClausesAdded(c change) []Finding {
	if c.test || authPath.MatchString(c.path) || !elixirFile(c.path) || c.before == nil || c.after == nil {
		return nil
	}
	// Elsewhere in the code, only the functions named for a check
	// (check_password, verify_token) are gates.
	anyFunction := webFile.MatchString(c.path) || gateFile.MatchString(c.path)
	heads := map[gateKey][]string{}
	for _, d := range c.before.defs {
		k := gateKey{d.name, d.arity}
		heads[k] = append(heads[k], d.head)
	}
	opens := map[int]defUnit{} // each clause of the head, by its first line
	for _, d := range c.after.defs {
		if _, seen := opens[d.start]; !seen {
			opens[d.start] = d
		}
	}
	checked := c.checkedGates()
	var out []Finding
	for _, l := range c.added() {
		d, opened := opens[l.New]
		if !opened || !anyFunction && !gateName.MatchString(d.name) || !admitsAnyone(d.requires) && !(checked[gateKey{d.name, d.arity}] && !c.before.fragment && !allChecked(c.after.inlined(d))) {
			continue // only a clause's first line, of a clause that admits everyone or without a check
		}
		was, existed := heads[gateKey{d.name, d.arity}]
		if !existed || slices.Contains(was, d.head) || catchAll.MatchString(d.head) {
			continue // a new function, a clause kept, or a fallback read by what the others require
		}
		out = append(out, c.finding("authorization-changed", Concern, l, "a new clause of `"+d.name+"` lets through everyone it matches: check who it admits that the other clauses refused"))
	}
	if !anyFunction {
		return out
	}
	return append(out, c.gatesLoosened()...)
}

// gateKey is a function by its name and arity.
type gateKey struct {
	name  string
	arity int
}

// checkedGates are the functions of the file at base each clause of which
// checked something on every way it let a request through, one of them
// refusing someone: a clause added that lets a request through checking
// nothing (an Absinthe resolver's fallback for the unauthenticated made to
// load what it is asked for) asks less than all of them.
func (c change) checkedGates() map[gateKey]bool {
	checked, refused := map[gateKey]bool{}, map[gateKey]bool{}
	for _, w := range c.before.defs {
		k := gateKey{w.name, w.arity}
		if _, seen := checked[k]; !seen {
			checked[k] = true
		}
		checked[k] = checked[k] && allChecked(c.before.inlined(w))
		refused[k] = refused[k] || c.before.refuses(w)
	}
	for k := range checked {
		checked[k] = checked[k] && refused[k]
	}
	return checked
}

// gateName is a function that decides whether a request, a socket or a
// join goes on: a plug's call/2, a channel's join/3, a socket's
// connect/3, a LiveView hook's on_mount/4, one named for its check.
var gateName = regexp.MustCompile(`^(call|join|connect|on_mount|authori[sz]e\w*|authenticate\w*|verify\w*|require_\w+|ensure_\w+|check_\w+|can_\w+\?|allowed\?|permitted\?)$`)

// gatesLoosened: a clause of a gate function (gateName, or a function
// plug the file names) that refused someone at base and checked before
// every way it let a request through, changed by the diff under the same
// head, that now has a way through that checks nothing: a case branch for
// a nil user that admits, a with's else branch that goes on. Conditions
// are not compared as text (a check rewritten reads as another); only
// whether each way through still holds one. Both sides must be read
// whole: a clause cut by a hunk's edge reads as asking less.
func (c change) gatesLoosened() []Finding {
	if c.before.fragment || c.after.fragment {
		return nil
	}
	plugged := map[string]bool{}
	for _, p := range plugStatements(c.all, '-') {
		plugged[strings.TrimPrefix(p.name, ":")] = true
	}
	type key struct {
		name, head string
		arity      int
	}
	was := map[key][]defUnit{}
	for _, d := range c.before.defs {
		k := key{d.name, d.head, d.arity}
		was[k] = append(was[k], d)
	}
	added := c.added()
	var out []Finding
	for _, d := range c.after.defs {
		olds := was[key{d.name, d.head, d.arity}]
		if len(olds) != 1 || !gateName.MatchString(d.name) && !plugged[d.name] {
			continue
		}
		i := sort.Search(len(added), func(i int) bool { return added[i].New >= d.start }) // added lines are in order
		if i == len(added) || added[i].New > d.end || !c.before.refuses(olds[0]) {
			continue
		}
		if allChecked(c.before.inlined(olds[0])) && !allChecked(c.after.inlined(d)) {
			out = append(out, c.finding("authorization-changed", Concern, added[i], "`"+d.name+"` checked something on every way it let a request through; now one way through checks nothing: check who it admits"))
		}
	}
	return out
}

// allChecked reports whether every alternative of a requirement holds a
// check.
func allChecked(req [][]string) bool {
	for _, alt := range req {
		if !slices.ContainsFunc(alt, isCheck) {
			return false
		}
	}
	return true
}

var (
	// sideEffect is a statement that does something and checks nothing.
	sideEffect = regexp.MustCompile(`^(Logger|IO|Process|Phoenix\.PubSub|:telemetry)\.|^(send|assign|assign_new|push|put_\w+|broadcast\w*|track|register_\w+)\(`)
	// askedOf is a comparison or a call: something asked of a value.
	askedOf = regexp.MustCompile(`[=!<>]=|[<>]|\bin\b|[\w?!]\(`)
)

// isCheck reports whether a condition asks something of the request: a
// comparison or a call, not a pattern alone (nil, []), a branch reached
// when a check failed, or a side effect.
func isCheck(cond string) bool {
	switch {
	case strings.HasPrefix(cond, "not (") || strings.HasPrefix(cond, "failed with "):
		return false
	case strings.Contains(cond, " matches "):
		_, guard, guarded := strings.Cut(cond, " when ") // a pattern's guard asks something
		return guarded && askedOf.MatchString(guard)
	case sideEffect.MatchString(cond):
		return false
	}
	return askedOf.MatchString(cond)
}
