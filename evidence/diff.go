// Package evidence makes pure checks of what a run produced, with no
// HTTP: it reads the unified diff of an agent's pull request and applies
// Elixir-aware rules a reviewer of the job would (a flaky fix is not a
// disguised wait or skip; an alert fix does not loosen authorization).
// It is its own package because the diff is outside input, fuzzed, and
// the same check runs from the CLI (`pitcrew review`) and on every PR an
// agent opens.
package evidence

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Bounds on a diff the rules read; past them the diff is not checked.
const (
	MaxFiles       = 300
	MaxChangedLine = 20000 // added plus deleted lines
	MaxLineLen     = 4096  // longer lines are cut
	MaxDiffBytes   = 8 << 20
)

// File is one file of a unified diff.
type File struct {
	OldPath, NewPath string // "" for /dev/null
	Binary           bool
	Hunks            []Hunk
}

// Path is the file's name after the change (before it, for a deletion).
func (f File) Path() string {
	if f.NewPath != "" {
		return f.NewPath
	}
	return f.OldPath
}

// Deleted reports whether the change removes the file.
func (f File) Deleted() bool { return f.NewPath == "" && f.OldPath != "" }

// Hunk is one @@ section: its lines in order.
type Hunk struct {
	Lines []Line
}

// Line is one line of a hunk. Kind is '+', '-' or ' '; Old and New are its
// line numbers on each side (0 on the side it is not on).
type Line struct {
	Kind     byte
	Text     string
	Old, New int
	code     string // Text as the rules read it (see code); set by newFileChange
}

// Diff is a parsed unified diff and its size.
type Diff struct {
	Files            []File
	Added, Deleted   int
	TooLarge         bool // a bound was passed: Files holds what was read before it
	FilesSeen, Lines int  // what was counted up to the bound, for the message
	// Cut names the first hunk that holds fewer lines than its header
	// says ("" when every hunk is whole): the diff was cut short, by its
	// sender or on the way, and the rules did not read all of it.
	Cut string
}

// ErrNotADiff means the input holds no file header a unified diff has.
var ErrNotADiff = errors.New("the input is not a unified diff (no ---/+++ or diff --git header)")

// ParseDiff reads a unified diff as `git diff`, `git show` or `diff -u`
// print it. Anything before the first file header (a commit message) is
// skipped. A diff past the bounds is returned with TooLarge set; input
// that holds no file at all is ErrNotADiff.
func ParseDiff(r io.Reader) (Diff, error) {
	var d Diff
	sc := bufio.NewScanner(io.LimitReader(r, MaxDiffBytes+1))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	sc.Split(scanLinesKeepLong)
	var cur *File
	var hunk *Hunk
	oldLeft, newLeft, oldN, newN := 0, 0, 0, 0
	read := 0
	flush := func() {
		if cur != nil {
			d.Files = append(d.Files, *cur)
		}
		cur, hunk = nil, nil
	}
	startFile := func() bool {
		flush()
		d.FilesSeen++
		if d.FilesSeen > MaxFiles {
			d.TooLarge = true
			return false
		}
		cur = &File{}
		return true
	}
	for sc.Scan() {
		line := sc.Text()
		read += len(line) + 1
		if read > MaxDiffBytes {
			d.TooLarge = true
			break
		}
		if len(line) > MaxLineLen {
			line = line[:MaxLineLen]
		}
		if hunk != nil && (oldLeft > 0 || newLeft > 0) {
			kind := byte(' ')
			if line != "" {
				kind = line[0]
			}
			switch kind {
			case '+', '-', ' ':
				text := ""
				if line != "" {
					text = line[1:]
				}
				l := Line{Kind: kind, Text: text}
				switch kind {
				case '+':
					newN++
					l.New = newN
					newLeft--
					d.Added++
				case '-':
					oldN++
					l.Old = oldN
					oldLeft--
					d.Deleted++
				default:
					oldN++
					newN++
					l.Old, l.New = oldN, newN
					oldLeft--
					newLeft--
				}
				hunk.Lines = append(hunk.Lines, l)
				if d.Added+d.Deleted > MaxChangedLine {
					d.TooLarge = true
					d.Lines = d.Added + d.Deleted
					flush()
					return d, nil
				}
				continue
			case '\\': // "\ No newline at end of file"
				continue
			}
			// A hunk shorter than its header said: read on as headers.
			d.cutAt(cur, oldN, newN)
			oldLeft, newLeft = 0, 0
		}
		switch {
		case strings.HasPrefix(line, "diff --git "):
			if !startFile() {
				goto done
			}
			cur.OldPath, cur.NewPath = gitPaths(line[len("diff --git "):])
		case strings.HasPrefix(line, "--- "):
			if cur == nil || len(cur.Hunks) > 0 || hunk != nil {
				if !startFile() {
					goto done
				}
			}
			cur.OldPath = headerPath(line[4:])
		case strings.HasPrefix(line, "+++ ") && cur != nil:
			cur.NewPath = headerPath(line[4:])
		case strings.HasPrefix(line, "rename from ") && cur != nil:
			cur.OldPath = unquote(line[len("rename from "):])
		case strings.HasPrefix(line, "rename to ") && cur != nil:
			cur.NewPath = unquote(line[len("rename to "):])
		case strings.HasPrefix(line, "new file mode") && cur != nil:
			cur.OldPath = ""
		case strings.HasPrefix(line, "deleted file mode") && cur != nil:
			cur.NewPath = ""
		case (strings.HasPrefix(line, "Binary files ") || line == "GIT binary patch") && cur != nil:
			cur.Binary = true
		case strings.HasPrefix(line, "@@ ") && cur != nil:
			o, ol, n, nl, ok := hunkHeader(line)
			if !ok {
				continue
			}
			cur.Hunks = append(cur.Hunks, Hunk{})
			hunk = &cur.Hunks[len(cur.Hunks)-1]
			oldN, newN, oldLeft, newLeft = o-1, n-1, ol, nl
			if ol == 0 {
				oldN = o
			}
			if nl == 0 {
				newN = n
			}
		}
	}
done:
	if err := sc.Err(); err != nil {
		return d, fmt.Errorf("reading the diff: %w", err)
	}
	if hunk != nil && (oldLeft > 0 || newLeft > 0) && !d.TooLarge {
		d.cutAt(cur, oldN, newN)
	}
	flush()
	d.Lines = d.Added + d.Deleted
	if len(d.Files) == 0 && !d.TooLarge {
		return d, ErrNotADiff
	}
	return d, nil
}

// cutAt records the first hunk found shorter than its header: in f,
// ending after line old of the old side and line new of the new one.
func (d *Diff) cutAt(f *File, old, new int) {
	if d.Cut == "" && f != nil {
		d.Cut = fmt.Sprintf("a hunk of %s ends after line %d, before the lines its header announces", f.Path(), max(new, old))
	}
}

// scanLinesKeepLong splits lines like bufio.ScanLines but hands an
// over-long line on in pieces instead of failing.
func scanLinesKeepLong(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, bytes.TrimSuffix(data[:i], []byte{'\r'}), nil
	}
	if len(data) >= 1<<20-1 {
		return len(data), data, nil
	}
	if atEOF && len(data) > 0 {
		return len(data), bytes.TrimSuffix(data, []byte{'\r'}), nil
	}
	return 0, nil, nil
}

// hunkHeader reads "@@ -o,ol +n,nl @@ ...".
func hunkHeader(line string) (o, ol, n, nl int, ok bool) {
	f := strings.Fields(line)
	if len(f) < 3 || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") {
		return 0, 0, 0, 0, false
	}
	var ok1, ok2 bool
	o, ol, ok1 = rangeOf(f[1][1:])
	n, nl, ok2 = rangeOf(f[2][1:])
	return o, ol, n, nl, ok1 && ok2
}

func rangeOf(s string) (start, count int, ok bool) {
	a, b, hasCount := strings.Cut(s, ",")
	start, err := strconv.Atoi(a)
	if err != nil || start < 0 || start > 1<<30 {
		return 0, 0, false
	}
	count = 1
	if hasCount {
		if count, err = strconv.Atoi(b); err != nil || count < 0 || count > MaxChangedLine*2 {
			return 0, 0, false
		}
	}
	return start, count, true
}

// gitPaths reads the two paths of "a/x b/x"; later headers override them.
func gitPaths(s string) (string, string) {
	if strings.HasPrefix(s, `"`) {
		return "", "" // quoted names: the ---/+++ lines give them
	}
	if i := strings.Index(s, " b/"); i >= 0 {
		return strings.TrimPrefix(s[:i], "a/"), s[i+3:]
	}
	return "", ""
}

// headerPath reads the path of a ---/+++ line: /dev/null is "", a/ and b/
// prefixes and a trailing timestamp (diff -u) are dropped.
func headerPath(s string) string {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	s = unquote(strings.TrimSpace(s))
	if s == "/dev/null" {
		return ""
	}
	if strings.HasPrefix(s, "a/") || strings.HasPrefix(s, "b/") {
		return s[2:]
	}
	return s
}

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	return s
}
