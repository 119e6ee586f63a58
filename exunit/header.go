package exunit

import (
	"bytes"
	"strconv"
)

// header is a failure block's first line: "  1) test name (Module)".
type header struct {
	kind         string
	name, module []byte // slices of the line: copy before the next one
	complete     bool   // false: the name goes on over the next lines
}

// parseHeader reads a failure header. ExUnit right-aligns the counter and
// its ")" in four columns ("  1)", " 10)", "100)"; wider ones unpadded),
// so a header-shaped line of a message, indented further, is none.
func parseHeader(b []byte) (header, bool) {
	rest, ok := cutCounter(b)
	if !ok {
		return header{}, false
	}
	if module, _, ok := bytes.Cut(rest, []byte(": failure on setup_all callback")); ok && isModule(module) {
		return header{kind: KindSetupAll, module: module, complete: true}, true
	}
	var kind string
	for _, k := range []string{KindTest, KindDoctest, KindProperty} {
		if r, ok := bytes.CutPrefix(rest, []byte(k+" ")); ok {
			kind, rest = k, r
			break
		}
	}
	if kind == "" || len(rest) == 0 {
		return header{}, false
	}
	if name, module, ok := cutModule(rest); ok {
		return header{kind: kind, name: name, module: module, complete: true}, true
	}
	return header{kind: kind, name: rest}, true
}

// isHeader reports whether b is a failure header, complete or not.
func isHeader(b []byte) bool {
	_, ok := parseHeader(b)
	return ok
}

// cutCounter removes a header's "  N) ", checking ExUnit's alignment.
func cutCounter(b []byte) ([]byte, bool) {
	spaces := 0
	for spaces < len(b) && b[spaces] == ' ' {
		spaces++
	}
	digits := len(leadingDigits(b[spaces:]))
	end := spaces + digits
	if digits == 0 || (spaces+digits != 3 && !(spaces == 0 && digits > 3)) ||
		len(b) < end+2 || b[end] != ')' || b[end+1] != ' ' {
		return nil, false
	}
	return b[end+2:], true
}

// cutModule splits "name (Module)" at its last " (".
func cutModule(b []byte) (name, module []byte, ok bool) {
	if len(b) == 0 || b[len(b)-1] != ')' {
		return nil, nil, false
	}
	i := bytes.LastIndex(b, []byte(" ("))
	if i < 0 || !isModule(b[i+2:len(b)-1]) {
		return nil, nil, false
	}
	return b[:i], b[i+2 : len(b)-1], true
}

// isModule reports whether b is an Elixir module name (Foo.BarTest).
func isModule(b []byte) bool {
	if len(b) == 0 || b[0] < 'A' || b[0] > 'Z' {
		return false
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// location reads a failure's "path/to/x_test.exs:LINE".
func location(b []byte) (file string, line int, ok bool) {
	i := bytes.LastIndexByte(b, ':')
	if i <= 0 || !bytes.HasSuffix(b[:i], []byte(".exs")) || bytes.IndexByte(b[:i], ' ') >= 0 {
		return "", 0, false
	}
	digits := b[i+1:]
	if len(digits) == 0 || len(digits) > 9 || len(leadingDigits(digits)) != len(digits) {
		return "", 0, false
	}
	line, _ = strconv.Atoi(string(digits))
	return string(b[:i]), line, line > 0
}
