// Package codeowners reads a repository's CODEOWNERS file as GitHub does:
// patterns in gitignore's syntax with GitHub's exceptions, the last
// matching line wins, and its owners are users (@login), teams
// (@org/team) or email addresses.
package codeowners

import (
	"bufio"
	"regexp"
	"strings"
)

// Paths are where GitHub looks for the file, in the order it looks.
var Paths = []string{".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"}

// maxRules bounds the lines kept; GitHub itself reads at most 3 MB.
const maxRules = 5000

// File is a parsed CODEOWNERS file.
type File struct{ rules []rule }

type rule struct {
	pattern *regexp.Regexp
	owners  []string
}

var owner = regexp.MustCompile(`^(@[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:/[A-Za-z0-9_.-]{1,100})?|[^@\s]+@[^@\s]+\.[^@\s]+)$`)

// Parse reads a CODEOWNERS file. A line GitHub would not accept (a
// negation, a character range, an owner that is not a user, team or
// email) is skipped, as GitHub skips it.
func Parse(text string) File {
	var f File
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() && len(f.rules) < maxRules {
		fields := splitLine(sc.Text())
		if len(fields) == 0 {
			continue
		}
		re, ok := compile(fields[0])
		if !ok {
			continue
		}
		owners, valid := fields[1:], true
		for _, o := range owners {
			valid = valid && owner.MatchString(o)
		}
		if !valid {
			continue // GitHub skips a line it cannot read whole
		}
		f.rules = append(f.rules, rule{re, owners})
	}
	return f
}

// splitLine is a line's pattern and owners, without its comment: a "#"
// that starts the line or follows a space (a pattern's "\#" is kept).
func splitLine(line string) []string {
	var fields []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			fields = append(fields, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\' && i+1 < len(line) && (line[i+1] == '#' || line[i+1] == ' '):
			cur.WriteByte(line[i+1])
			i++
		case c == '#' && cur.Len() == 0:
			flush()
			return fields
		case c == ' ' || c == '\t':
			flush()
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return fields
}

// compile turns a pattern into a regular expression over a path relative
// to the repository's root. Anchored (a "/" at its start or middle) it
// matches from the root, else at any depth; a pattern that names a
// directory owns everything under it, except one ending in "/*", which
// owns only the directory's own files (GitHub's exception to gitignore).
func compile(p string) (*regexp.Regexp, bool) {
	if p == "" || strings.HasPrefix(p, "!") || strings.ContainsAny(p, "[]") {
		return nil, false
	}
	dirOnly, ownFilesOnly := strings.HasSuffix(p, "/"), strings.HasSuffix(p, "/*")
	trimmed := strings.TrimSuffix(p, "/")
	anchored := strings.HasPrefix(trimmed, "/") || strings.Contains(trimmed, "/")
	trimmed = strings.TrimPrefix(trimmed, "/")
	if trimmed == "" {
		return nil, false
	}
	var b strings.Builder
	b.WriteString("^")
	if !anchored {
		b.WriteString("(?:.*/)?")
	}
	for i := 0; i < len(trimmed); i++ {
		switch c := trimmed[i]; {
		case strings.HasPrefix(trimmed[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(trimmed[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	switch {
	case dirOnly:
		b.WriteString("/.*")
	case ownFilesOnly: // "/*" too: the root's own files
	default:
		b.WriteString("(?:/.*)?")
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	return re, err == nil
}

// Owners are the owners of path (relative to the root, no leading "/"):
// those of the last line whose pattern matches it; none when that line
// names none, or no line matches.
func (f File) Owners(path string) []string {
	path = strings.TrimPrefix(path, "/")
	for i := len(f.rules) - 1; i >= 0; i-- {
		if f.rules[i].pattern.MatchString(path) {
			return f.rules[i].owners
		}
	}
	return nil
}

// Team reports whether an owner is a team (@org/team), which a review is
// requested from by its slug.
func Team(owner string) (org, slug string, ok bool) {
	org, slug, ok = strings.Cut(strings.TrimPrefix(owner, "@"), "/")
	return org, slug, ok && strings.HasPrefix(owner, "@")
}
