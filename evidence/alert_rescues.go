package evidence

import (
	"regexp"
	"strings"
)

var (
	// authError is an exception or error that says access was refused.
	authError = hinted{regexp.MustCompile(`\b[\w.]*(NotAuthorized|Unauthori[sz]ed|Forbidden|AccessDenied|PermissionDenied)\w*\b`), []string{"uthori", "orbidden", "ccessDenied", "ermissionDenied"}}
	// refusal is what a clause that still refuses does: it halts, raises,
	// redirects, answers 401/403 or returns the error.
	refusal = regexp.MustCompile(`\b(halt|raise|reraise|redirect|push_navigate|push_redirect|put_status|send_resp|forbidden|unauthorized|not_found|deny|reject)\b|\{:error\b|\{:halt\b|\b40[134]\b`)
)

// authorizationRescued: outside tests, an authorization failure rescued
// (rescue e in Bodyguard.NotAuthorizedError -> Logger.warning(...)) by a
// clause that does not refuse: the code goes on as if access was granted.
func authorizationRescued(c change) []Finding {
	if c.test || !elixirFile(c.path) {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		for i, l := range b.added {
			if !authError.MatchString(l.code) || !strings.Contains(l.code, "->") || !c.rescuing(b.added[:i]) {
				continue
			}
			if !clauseDoes(refusal, l, b.added[i+1:]) {
				out = append(out, c.finding("authorization-rescued", Concern, l, "a refused authorization is rescued and the code goes on: who was refused before is let through now"))
			}
		}
	}
	return out
}

// rescuing reports whether the added lines before a clause open a rescue
// (or a catch) it belongs to.
func (c change) rescuing(before []Line) bool {
	for i := len(before) - 1; i >= 0 && i >= len(before)-maxJoined; i-- {
		if rescueLine.MatchString(before[i].code) {
			return true
		}
	}
	return false
}

// clauseDoes reports whether a rescue clause does what re matches: on
// its own line after the ->, or in its body (the lines after it up to the
// next clause or end).
func clauseDoes(re *regexp.Regexp, clause Line, after []Line) bool {
	if _, body, _ := strings.Cut(clause.code, "->"); re.MatchString(body) {
		return true
	}
	for _, l := range after {
		t := strings.TrimSpace(l.code)
		if t == "end" || strings.Contains(t, "->") {
			return false
		}
		if re.MatchString(l.code) {
			return true
		}
	}
	return false
}
