package publish

import (
	"strings"

	"github.com/pitcrew/pitcrew/runs"
)

// OwnersNamed is a test file's owners as a line names them, without
// notifying anyone: "Owners: `@acme/payments`", or the last committer; ""
// for neither (and for nil: not looked up).
func OwnersNamed(o *runs.Owners) string {
	if o == nil {
		return ""
	}
	return ownersNamed(*o)
}

func ownersNamed(o runs.Owners) string {
	switch {
	case len(o.Listed) > 0:
		return "Owners: " + CodeList(o.Listed)
	case o.LastCommitter != "":
		return "Last changed by " + Code(o.LastCommitter, 100) + " (no CODEOWNERS line names its owners)"
	}
	return ""
}

// OwnersMentioned is OwnersNamed with CODEOWNERS' users and teams as
// mentions, which notify them (the last committer is still only named).
func OwnersMentioned(o *runs.Owners) string {
	if o == nil || len(o.Listed) == 0 {
		return OwnersNamed(o)
	}
	var out []string
	for _, owner := range o.Listed {
		if mentionable(owner) {
			out = append(out, owner)
		} else {
			out = append(out, Code(owner, 200))
		}
	}
	return "Owners: " + strings.Join(out, ", ")
}

// mentionable is an owner GitHub would notify: @login or @org/team, of
// the characters GitHub allows in them (codeowners.Parse keeps no other).
func mentionable(owner string) bool {
	if !strings.HasPrefix(owner, "@") || len(owner) < 2 || len(owner) > 150 {
		return false
	}
	for _, r := range owner[1:] {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' || r == '/') {
			return false
		}
	}
	return true
}
