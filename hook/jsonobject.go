package hook

import "encoding/binary"

// maxJSONDepth is encoding/json's nesting limit.
const maxJSONDepth = 10000

// plainStringByte marks the bytes that stand for themselves inside a JSON
// string: all but the quote, the backslash and control characters.
// encoding/json does not check UTF-8, so neither does this.
var plainStringByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// jsonValidator walks a JSON text once, by RFC 8259's grammar, giving
// exactly encoding/json.Valid's answers at three to four times its speed:
// the check runs inside every webhook request (View.Object), and
// encoding/json's took a quarter of the intake's CPU. FuzzIsJSONObject
// holds the two to the same answers.
type jsonValidator struct {
	b []byte
	i int
}

func (v *jsonValidator) skipSpace() {
	for v.i < len(v.b) {
		switch v.b[v.i] {
		case ' ', '\t', '\n', '\r':
			v.i++
		default:
			return
		}
	}
}

// value checks one value starting at (or after spaces from) v.i; depth is
// how many objects and arrays enclose it.
func (v *jsonValidator) value(depth int) bool {
	v.skipSpace()
	if v.i >= len(v.b) {
		return false
	}
	switch c := v.b[v.i]; {
	case c == '{':
		return depth < maxJSONDepth && v.container(depth+1, '}', true)
	case c == '[':
		return depth < maxJSONDepth && v.container(depth+1, ']', false)
	case c == '"':
		return v.string()
	case c == 't':
		return v.literal("true")
	case c == 'f':
		return v.literal("false")
	case c == 'n':
		return v.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return v.number()
	}
	return false
}

// container checks an object (keyed) or an array from its opening bracket
// to its closing one.
func (v *jsonValidator) container(depth int, closing byte, keyed bool) bool {
	if v.open(closing) {
		return true
	}
	for {
		// A key and its colon, written out here and in the scanner's
		// object and members: as a helper (too big to inline) it costs
		// a call per member, about 5% of the check.
		if keyed {
			v.skipSpace()
			if v.i >= len(v.b) || v.b[v.i] != '"' || !v.string() {
				return false
			}
			v.skipSpace()
			if v.i >= len(v.b) || v.b[v.i] != ':' {
				return false
			}
			v.i++
		}
		if !v.value(depth) {
			return false
		}
		if more, ok := v.next(closing); !more {
			return ok
		}
	}
}

// open steps past an object's or an array's opening bracket and reports
// whether the closing one follows (then past it too): an empty one.
func (v *jsonValidator) open(closing byte) (empty bool) {
	v.i++
	v.skipSpace()
	if v.i < len(v.b) && v.b[v.i] == closing {
		v.i++
		return true
	}
	return false
}

// next reads what follows a member or an element: a ',' before another
// (more), or the closing bracket (ok).
func (v *jsonValidator) next(closing byte) (more, ok bool) {
	v.skipSpace()
	if v.i >= len(v.b) {
		return false, false
	}
	switch v.b[v.i] {
	case ',':
		v.i++
		return true, true
	case closing:
		v.i++
		return false, true
	}
	return false, false
}

func (v *jsonValidator) string() bool {
	b := v.b
	for i := v.i + 1; i < len(b); {
		for i+8 <= len(b) && plainWord(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		for i < len(b) && plainStringByte[b[i]] {
			i++
		}
		switch {
		case i >= len(b) || b[i] < 0x20:
			return false
		case b[i] == '"':
			v.i = i + 1
			return true
		}
		// A backslash: one of the escapes JSON allows.
		if i+1 >= len(b) {
			return false
		}
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
				return false
			}
			i += 6
		default:
			return false
		}
	}
	return false
}

// plainWord reports whether none of the eight bytes packed in x is a quote,
// a backslash or a control character, so a string's body is checked a word
// at a time. Each term is non-zero exactly when some byte is below 0x20
// or (after the XOR) zero: the lowest such byte always sets its high bit,
// though a borrow may mark bytes above it too, which a yes/no answer does
// not mind. See "Determine if a word has a byte less than n" in Sean Eron
// Anderson's Bit Twiddling Hacks.
func plainWord(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote, backslash := x^(ones*'"'), x^(ones*'\\')
	return ((x-ones*0x20)&^x|(quote-ones)&^quote|(backslash-ones)&^backslash)&highs == 0
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func (v *jsonValidator) literal(word string) bool {
	if len(v.b)-v.i < len(word) || string(v.b[v.i:v.i+len(word)]) != word {
		return false
	}
	v.i += len(word)
	return true
}

// number checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (v *jsonValidator) number() bool {
	if v.b[v.i] == '-' {
		v.i++
	}
	switch {
	case v.i < len(v.b) && v.b[v.i] == '0':
		v.i++
	case !v.digits():
		return false
	}
	if v.i < len(v.b) && v.b[v.i] == '.' {
		v.i++
		if !v.digits() {
			return false
		}
	}
	if v.i < len(v.b) && (v.b[v.i] == 'e' || v.b[v.i] == 'E') {
		v.i++
		if v.i < len(v.b) && (v.b[v.i] == '+' || v.b[v.i] == '-') {
			v.i++
		}
		if !v.digits() {
			return false
		}
	}
	return true
}

// digits consumes one or more decimal digits.
func (v *jsonValidator) digits() bool {
	start := v.i
	for v.i < len(v.b) && v.b[v.i] >= '0' && v.b[v.i] <= '9' {
		v.i++
	}
	return v.i > start
}
