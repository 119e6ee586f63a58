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
var alertRules = []rule{plugsRemoved, pipelinesChanged, routesUnguarded, gateClausesAdded, authorizationModules, checksRemoved, defaultsChanged, deletedTests, deletedAssertions, rolesGranted, privilegedBypasses, authorizationRescued, policiesWidened, grantsAllByDefault, refusalsLogged, scopesDropped, rolesLeftToDefault}

var (
	plugLine = regexp.MustCompile(`^\s*plug(?:\s+|\s*\(\s*)(:?[A-Za-z_][\w.]*[?!]?)(.*)$`)
	pipeLine = regexp.MustCompile(`^\s*(pipe_through|on_mount|live_session)\b(.*)$`)
	// webFile is where requests are let in: routers, controllers, plugs,
	// LiveViews and the endpoint.
	webFile = regexp.MustCompile(`(^|/)(router|endpoint)\.ex$|_controller\.ex$|/controllers/|/plugs?/|_plug\.ex$|_live\.ex$|/live/`)
)

var atom = regexp.MustCompile(`:\w+|[A-Z][\w.]*`)

// pipelinesChanged: a pipe_through, on_mount or live_session removed or
// given fewer pipelines in a router or LiveView, each read as a whole
// statement (a live_session's on_mount list over lines). One added back
// anywhere in the file with at least the same pipelines is moved or
// tightened, and so is one whose pipelines (by what the file's pipeline
// blocks plug) hold every plug the old ones did.
func pipelinesChanged(c change) []Finding {
	if !webFile.MatchString(c.path) {
		return nil
	}
	was, now := statements(c.all, '+', pipeLine), statements(c.all, '-', pipeLine)
	// Nested scopes add their pipelines to their parent's: what the new
	// statements of a kind pipe through together counts.
	defs := c.pipelineDefs()
	union := map[string]map[string]bool{}
	for _, n := range now {
		if union[n.name] == nil {
			union[n.name] = map[string]bool{}
		}
		for _, a := range defs.expand(atom.FindAllString(n.opts, -1)) {
			union[n.name][a] = true
		}
	}
	var out []Finding
	for _, p := range was {
		if !p.changed {
			continue
		}
		want := slices.DeleteFunc(atom.FindAllString(p.opts, -1), loadsOnly.MatchString)
		kept := true
		for _, a := range defs.expand(want) {
			kept = kept && union[p.name][a]
		}
		kept = kept || c.movedToRouter(p.name, want)
		if !kept {
			out = append(out, c.finding("pipeline-changed", Concern, p.line, "the routes here no longer go through the same pipelines or mount hooks: check authentication and authorization still apply"))
		}
	}
	return out
}

// loadsOnly is a hook or pipeline whose name says it loads or assigns
// (phx.gen.auth's :mount_current_user, :fetch_current_user) and refuses
// no one: dropping it asks for nothing less.
var loadsOnly = regexp.MustCompile(`^:(mount|fetch|assign|load|put|set)_\w+$`)

// movedToRouter reports whether the diff adds, in another file, every
// hook or pipeline a removed statement named (a LiveView's on_mount hooks
// moved into its live_session's on_mount list in the router).
func (c change) movedToRouter(kind string, want []string) bool {
	if len(want) == 0 || c.diff.addedBy[c.path] == c.diff.lines {
		return false
	}
	for _, w := range want {
		if !c.diff.words[w] {
			return false
		}
	}
	return c.diff.words[kind] || kind == "on_mount" && c.diff.words["live_session"]
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

// authorizationModules: a change in a policy, permission or
// authorization module that may let more through. Read as code, each
// changed function is compared clause by clause (authorizationByDefs);
// a change that cannot be read so is one a reviewer must read.
func authorizationModules(c change) []Finding {
	if c.test || !authPath.MatchString(c.path) || reformatOnly(c) {
		return nil
	}
	if out, decided := authorizationByDefs(c); decided {
		return out
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

// reformatOnly reports whether a change only moves code around its
// whitespace: the removed and added code are the same once spaces and
// line breaks are taken out, and no function clause moved (the order of
// clauses decides which applies; the order of aliases does not).
func reformatOnly(c change) bool {
	squash := func(lines []Line) string {
		var b strings.Builder
		for _, l := range lines {
			b.WriteString(strings.Join(strings.Fields(withStrings(l.Text)), "")) // strings kept: a role is a change
		}
		return b.String()
	}
	if squash(c.removed()) != squash(c.added()) {
		return false
	}
	for _, b := range c.blocks {
		if squash(b.removed) != squash(b.added) {
			// Lines moved: a reformat unless a function's clause moved.
			for _, l := range c.removed() {
				if clauseLine.MatchString(l.Text) {
					return false
				}
			}
			return true
		}
	}
	return true
}

var clauseLine = regexp.MustCompile(`^\s*defp?\s`)

var (
	// guardWord names what a check is about: ownership, billing, roles,
	// permissions, membership, verification.
	guardWord = regexp.MustCompile(`(?i)\b[\w.]*(owner|billing|paid|plan|subscri|role|admin|authori[sz]|permi|access|can\?|can_\w+\?|member|verif|ensure_|require_|allowed|forbid|policy|scope|(?:user|owner|author|account|org|organization|tenant|team)_id\b)[\w?!]*`)
	// checkShape is how a check reads in Elixir: a condition, a guard, a
	// with clause, an error return, a query's where.
	checkShape = hinted{regexp.MustCompile(`\b(if|unless|case|cond|with|when|and|or|not|where)\b|<-|&&|\|\||\{:error|:forbidden|:unauthorized|\b40[13]\b|raise\b`),
		[]string{"if", "unless", "case", "cond", "with", "when", "and", "or", "not", "where", "<-", "&&", "||", "{:error", ":forbidden", ":unauthorized", "40", "raise"}}
)

// checksRemoved: outside tests, a removed line that checks ownership,
// billing, a role or a permission (a condition, a guard, a query's
// where), when no added line of the diff, in any file, requires the
// same: the check's function (by its name, however it is called: inline,
// as a plug's fun:, as an MFA) and the values it checks against (a role
// string). An inline check turned into a plug for the
// same action requires the same and is not reported.
func checksRemoved(c change) []Finding {
	if c.test {
		return nil
	}
	added := c.diff.added // a check moved to another file (a scoped query) is kept
	var out []Finding
	for _, b := range c.blocks {
		for _, l := range b.removed {
			line := l.code
			if !checkShape.MatchString(line) || c.madeStricter(l) {
				continue
			}
			if w, kept := checkKept(withStrings(l.Text), line, added); !kept && !c.checkMovedIntoPlug(l) {
				out = append(out, c.finding("check-removed", Concern, l, fmt.Sprintf("a check on %s is gone: the error may stop because more is let through", w)))
				break // one finding per block: the rest of it is the same check
			}
		}
	}
	return out
}

var quoted = regexp.MustCompile(`"[^"]*"`)

// checkKept reports whether the added code requires what a removed check
// line did; when it does not, what is missing.
func checkKept(text, line, added string) (missing string, kept bool) {
	inPlace := true
	checked := 0
	for _, at := range guardWord.FindAllStringIndex(line, -1) {
		if at[0] > 0 && line[at[0]-1] == ':' {
			continue // a status the refusal answers (:forbidden), not what is checked
		}
		checked++
		w := line[at[0]:at[1]]
		name := w[strings.LastIndex(w, ".")+1:]
		core := strings.TrimRight(name, "?!")
		if stem, ok := strings.CutSuffix(core, "_id"); ok && (indexWord(added, stem) >= 0 || strings.Contains(added, "current_"+stem)) {
			core = stem // scoped another way: Ecto.assoc(user, :posts), owned_by?(post, current_user)
		}
		if !strings.Contains(added, core) {
			return w, false
		}
		inPlace = inPlace && strings.Contains(added, w)
	}
	if checked == 0 || inPlace {
		return "", true // no check here, or the same call rewritten where it was
	}
	// The check moved (to a plug, an MFA): it must ask for the same values.
	for _, q := range quoted.FindAllString(text, -1) {
		if len(q) > 2 && !strings.Contains(added, q) && indexWord(added, q[1:len(q)-1]) < 0 {
			return q, false
		}
	}
	return "", true
}

var (
	argDefault = hinted{regexp.MustCompile(`\b([a-z_]\w*)\s*\\\\\s*([^,)]+)`), []string{`\\`}}
	getDefault = hinted{regexp.MustCompile(`\b((?:Keyword|Map|Access)\.get|Application\.get_env)\(([^,]+),\s*([^,]+),\s*([^)]+)\)`), []string{".get"}}
	fieldDef   = hinted{regexp.MustCompile(`^\s*(field|add)\s+:(\w+),.*\bdefault:\s*([^,)\]]+)`), []string{"default:"}}
	orDefault  = hinted{regexp.MustCompile(`(\w+\[:\w+\]|\w+\.\w+)\s*\|\|\s*(.+)$`), []string{"||"}}
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
