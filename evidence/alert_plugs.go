package evidence

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// The alert rule about plugs: read as whole statements, compared by what
// they require.

// plugsRemoved: a plug removed from a controller, router or pipeline, or
// kept under the same name but requiring less: fewer actions, an except:
// list, another role, another check, wherever in the file it was added
// back. Plugs are read as whole statements (options and when clauses on
// lines of their own), and compared by what they require, so a function
// reference rewritten as an MFA tuple is the same plug.
func plugsRemoved(c change) []Finding {
	if !webFile.MatchString(c.path) {
		return nil
	}
	was, now := plugStatements(c.all, '+'), plugStatements(c.all, '-')
	used := make([]bool, len(now))
	var out []Finding
	for _, p := range was {
		match, named := -1, -1
		for i, n := range now {
			if used[i] || n.name != p.name {
				continue
			}
			if named < 0 {
				named = i
			}
			if plugCovers(n, p) {
				match = i
				break
			}
		}
		if match < 0 && !narrowedToActions(now, p) && requiresAll(unionOf(now, p.name), p.requires) {
			match = named // split into several plugs that, together, require as much
		}
		switch {
		case match >= 0:
			used[match] = true
		case !p.changed:
			// seen only as context: not this diff's doing
		case named < 0 && c.guardedByRouter(p):
			// moved into the router, in front of every route to here
		case named < 0:
			out = append(out, c.finding("plug-removed", Concern, p.line, fmt.Sprintf("the plug %s no longer runs here: requests it stopped now reach the action", p.name)))
		default:
			used[named] = true
			out = append(out, c.finding("plug-changed", Concern, p.line, fmt.Sprintf("the plug %s now runs with other options (%s): check it still guards every action it did", p.name, orNone(now[named].opts))))
		}
	}
	covered := map[int]bool{} // the old lines of the plugs read whole
	for _, p := range was {
		for _, n := range p.oldLines {
			covered[n] = true
		}
	}
	return append(out, plugOptionsChanged(c, covered)...)
}

// plugOption is a line of a plug's options written apart from the plug
// (the statement may start above the hunk).
var plugOption = regexp.MustCompile(`^\s*(fun|opts|domain|resource|only|except|roles?|level)\s*:|&[a-z_][\w?!]*/\d|^\s*when\s+action\b`)

// plugOptionsChanged: a line of a plug's options removed, with what it
// required missing from the lines that replace it, for a plug that starts
// above the hunk (covered: the old lines of the plugs read whole).
func plugOptionsChanged(c change, covered map[int]bool) []Finding {
	var out []Finding
	for _, b := range c.blocks {
		now := "" // what the added lines require, read when a removed option asks
		for _, l := range b.removed {
			text := withStrings(l.Text)
			if covered[l.Old] || !plugOption.MatchString(text) || plugLine.MatchString(text) {
				continue
			}
			if now == "" {
				var sb strings.Builder
				for _, l := range b.added {
					sb.WriteString(withStrings(l.Text) + " ")
				}
				now = " " + requirements(sb.String()) + " "
			}
			for _, r := range strings.Fields(requirements(text)) {
				if !strings.Contains(now, " "+r+" ") {
					out = append(out, c.finding("plug-changed", Concern, l, fmt.Sprintf("a plug's options no longer require %s: check it still guards every action it did", r)))
					break
				}
			}
		}
	}
	return out
}

// plugStatement is a plug as one statement: its name, its options and when
// clause as written, and what it requires, normalised.
type plugStatement struct {
	name, opts, requires string
	line                 Line // its first changed line, or its first line
	changed              bool
	oldLines             []int // the old file's lines it spans
}

// plugStatements reads the plugs of one side of the diff: the lines not
// of kind skip ('+' for the old file, '-' for the new one).
func plugStatements(all []Line, skip byte) []plugStatement { return statements(all, skip, plugLine) }

// statements reads the statements re starts (its first group the name,
// its second the rest of the line) on one side of the diff, each joined
// with the lines its open brackets, trailing comma or when clause carry.
func statements(all []Line, skip byte, re *regexp.Regexp) []plugStatement {
	var lines []Line
	for _, l := range all {
		if l.Kind != skip && l.code != "" { // not a comment, nor a heredoc's text
			lines = append(lines, l)
		}
	}
	var out []plugStatement
	for i := 0; i < len(lines); i++ {
		m := re.FindStringSubmatch(withStrings(lines[i].Text))
		if m == nil {
			continue
		}
		st := plugStatement{name: m[1][strings.LastIndex(m[1], ".")+1:], line: lines[i], oldLines: []int{lines[i].Old}}
		text := strings.TrimSpace(m[2])
		depth := bracketDepth(code(lines[i].Text))
		if lines[i].Kind != ' ' {
			st.changed = true
		}
		for j := i + 1; j < len(lines) && j < i+maxJoined; j++ {
			next := strings.TrimSpace(withStrings(lines[j].Text))
			if depth <= 0 && !strings.HasSuffix(text, ",") && !strings.HasPrefix(next, "when ") {
				break
			}
			text += " " + next
			depth += bracketDepth(code(lines[j].Text))
			if lines[j].Kind != ' ' && !st.changed {
				st.changed, st.line = true, lines[j]
			}
			st.oldLines = append(st.oldLines, lines[j].Old)
			i = j
		}
		st.opts, st.requires = text, requirements(text)
		out = append(out, st)
	}
	return out
}

var (
	funRef     = regexp.MustCompile(`&([A-Z][\w.]*\.)?([a-z_][\w?!]*)/\d+`)
	mfaRef     = regexp.MustCompile(`\{\s*[A-Z][\w.]*\s*,\s*:([a-z_][\w?!]*)\s*\}`)
	wordSigil  = regexp.MustCompile(`~w[(\[{]([^)\]}]*)[)\]}][a-z]*`)
	requireTok = regexp.MustCompile(`"[^"]*"|:?[a-z_][\w?!]*`)
)

// unionOf is what every plug named name requires, together.
func unionOf(list []plugStatement, name string) string {
	var all []string
	for _, p := range list {
		if p.name == name {
			all = append(all, p.requires)
		}
	}
	return strings.Join(all, " ")
}

// narrowedToActions reports whether the plugs of the name now run, all
// together, for fewer actions than the old one did: they may ask as much
// between them, but not of every action the old one guarded. Plugs split
// per action (`in [:refund]`, `in [:void]`) cover what their lists do.
func narrowedToActions(now []plugStatement, was plugStatement) bool {
	var lists []string
	for _, n := range now {
		if n.name != was.name {
			continue
		}
		if actionsCover(n, was) {
			return false
		}
		m := actionGuard.FindStringSubmatch(n.opts)
		if m == nil || !listsIn(m[1]) {
			return true
		}
		lists = append(lists, requirements(m[2]))
	}
	together := plugStatement{opts: "when action in [:" + strings.Join(strings.Fields(strings.Join(lists, " ")), ", :") + "]"}
	return len(lists) == 0 || !actionsCover(together, was)
}

// listsIn reports whether a when clause's operator names the actions the
// plug runs for (in, ==), not those it skips (not in, !=).
func listsIn(op string) bool { return op == "in" || op == "==" }

// actionGuard is a plug's when clause on the action: `when action in
// [...]`, `when action not in [...]`, `when action != :index`.
var actionGuard = regexp.MustCompile(`\bwhen\s+action\s+(not\s+in|in|!=|==)\s+(\[[^\]]*\]|~w[(\[{][^)\]}]*[)\]}]a?|:\w+[?!]?)\s*\)?\s*$`)

// plugCovers reports whether a plug now asks at least what it did of
// every action it guarded: the same requirements, and a when clause on
// the action that covers the actions the old one did (`in [:show]`
// covered by `not in [:index]`, a when clause dropped).
func plugCovers(now, was plugStatement) bool {
	nm, wm := actionGuard.FindStringSubmatchIndex(now.opts), actionGuard.FindStringSubmatchIndex(was.opts)
	if nm == nil && wm == nil || !requiresAll(requirements(cut(now.opts, nm)), requirements(cut(was.opts, wm))) {
		return requiresAll(now.requires, was.requires)
	}
	return actionsCover(now, was)
}

// actionsCover reports whether a plug's when clause on the action (none:
// every action) runs it for every action the old one's did.
func actionsCover(now, was plugStatement) bool {
	nm, wm := actionGuard.FindStringSubmatchIndex(now.opts), actionGuard.FindStringSubmatchIndex(was.opts)
	if nm == nil {
		return true // every action now
	}
	if wm == nil {
		return false // every action before, some now
	}
	nowOut, wasOut := !listsIn(now.opts[nm[2]:nm[3]]), !listsIn(was.opts[wm[2]:wm[3]])
	nowActions, wasActions := strings.Fields(requirements(now.opts[nm[4]:nm[5]])), strings.Fields(requirements(was.opts[wm[4]:wm[5]]))
	switch {
	case !nowOut && !wasOut:
		return containsAll(nowActions, wasActions)
	case nowOut && !wasOut:
		return !slices.ContainsFunc(wasActions, func(a string) bool { return slices.Contains(nowActions, a) })
	case nowOut && wasOut:
		return containsAll(wasActions, nowActions)
	}
	return false // every action but some before, a list now
}

// cut is s without the match at m (nil: s).
func cut(s string, m []int) string {
	if m == nil {
		return s
	}
	return s[:m[0]] + s[m[1]:]
}

// requiresAll reports whether a plug requiring now asks for at least
// what one requiring was did: the same words, or more (a role or an
// action added).
func requiresAll(now, was string) bool {
	return containsAll(strings.Fields(now), strings.Fields(was))
}

// requirements is what a plug's options require, in a form that does not
// change with how they are written: function references and MFA tuples
// as the function's name, module names and punctuation left out, the
// words sorted.
func requirements(opts string) string {
	opts = wordSigil.ReplaceAllStringFunc(opts, func(sig string) string {
		return wordSigil.FindStringSubmatch(sig)[1] // ~w(edit update)a: the words
	})
	opts = funRef.ReplaceAllString(opts, "$2")
	opts = mfaRef.ReplaceAllString(opts, "$1")
	toks := requireTok.FindAllString(opts, -1)
	for i, t := range toks {
		toks[i] = strings.TrimPrefix(t, ":")
	}
	sort.Strings(toks)
	return strings.Join(toks, " ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

var (
	pipelineOpen = regexp.MustCompile(`^(\s*)pipeline\s+:(\w+)\s+do\b`)
	plugName     = regexp.MustCompile(`^\s*plug(?:\s+|\s*\(\s*)(:?[A-Za-z_][\w.]*[?!]?)`)
)

// pipelineDefs are the plugs of each pipeline a router defines, as either
// side of the change shows them (the files read whole, else the hunks).
type pipelineDefs map[string][]string

func (c change) pipelineDefs() pipelineDefs {
	var texts []string
	for _, s := range []*source{c.before, c.after} {
		if s != nil && !s.fragment {
			texts = append(texts, s.textLines()...)
		}
	}
	for _, l := range c.all {
		texts = append(texts, l.Text)
	}
	defs := pipelineDefs{}
	for i := 0; i < len(texts); i++ {
		m := pipelineOpen.FindStringSubmatch(texts[i])
		if m == nil {
			continue
		}
		var plugs []string
		for j := i + 1; j < len(texts) && j < i+maxJoined; j++ {
			if strings.TrimSpace(texts[j]) == "end" && strings.HasPrefix(texts[j], m[1]+"end") {
				break
			}
			if p := plugName.FindStringSubmatch(texts[j]); p != nil {
				plugs = append(plugs, p[1])
			}
		}
		if _, seen := defs[":"+m[2]]; !seen {
			defs[":"+m[2]] = plugs
		}
	}
	return defs
}

// expand is pipelines with the plugs each is defined with.
func (d pipelineDefs) expand(names []string) []string {
	out := slices.Clone(names)
	for _, n := range names {
		out = append(out, d[n]...)
	}
	return out
}
