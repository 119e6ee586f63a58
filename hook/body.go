package hook

import (
	"iter"
	"math/bits"
	"strconv"
)

// Body is a delivery's body, read once: the first Scan checks that it is
// JSON, what json.Unmarshal into its Shape's type would say, and where the
// values of the Shape's paths are, all in the one pass; later calls
// return that reading. The intake hands it to Intake.Ignored, then uses
// the same reading for its own check that the body is an object.
type Body struct {
	raw     []byte
	scanned bool
	view    View
}

// NewBody is raw, not yet read.
func NewBody(raw []byte) *Body { return &Body{raw: raw} }

func (b *Body) reset(raw []byte) {
	b.raw, b.scanned = raw, false
	b.view.body = nil
}

// Scan reads the body against s (nil: its syntax alone), the first time it
// is called. A body is read for one Shape: a later call with another
// Shape than the first's panics, and nil takes whatever reading was made.
func (b *Body) Scan(s *Shape) *View {
	if b.scanned {
		if s != nil && s != b.view.shape {
			panic("hook: one body scanned for two shapes")
		}
		return &b.view
	}
	b.scanned = true
	b.view.scan(b.raw, s)
	return &b.view
}

// View is what one pass over a body found. Where a member repeats,
// encoding/json assigns each copy in turn (the last string wins, an
// object's members merge into what is there, null resets a pointer, a
// slice, a map or an interface), and a path's values are those since its
// last reset, by null, of it or of an object on the way.
type View struct {
	body  []byte
	shape *Shape
	valid bool
	fits  bool
	slots [MaxPaths]slot
}

type span struct{ from, to int }

// slot holds one path's values: the first since the last reset (zero for
// none) and any others, the last that was not null (until an enclosing
// object's reset), and whether one did not fit the path's type.
type slot struct {
	first   span
	rest    []span
	nonNull span
	bad     bool
}

// Valid reports whether the body is one JSON value (encoding/json.Valid).
func (v *View) Valid() bool { return v.valid }

// Object reports whether the body is one JSON object, starting at its first
// byte: what the intake stores.
func (v *View) Object() bool { return v.valid && v.body[0] == '{' }

// Kind is the first byte of the body's value, past any spaces: '{', '[',
// '"', 't', 'f', 'n', or a number's first (0 for none).
func (v *View) Kind() byte {
	j := jsonValidator{b: v.body}
	j.skipSpace()
	if j.i < len(j.b) {
		return j.b[j.i]
	}
	return 0
}

// Fits reports whether json.Unmarshal of the body into the Shape's type
// would return no error (with no Shape: Valid).
func (v *View) Fits() bool { return v.fits }

// Last is the raw JSON of path's last value since its reset, as a pointer
// field holds it (nil for none); it may alias the body: not to be kept.
func (v *View) Last(path string) []byte {
	s := &v.slots[v.index(path)]
	if len(s.rest) > 0 {
		return v.raw(s.rest[len(s.rest)-1])
	}
	return v.raw(s.first)
}

// Kept is path's last value that was not null, as a field that is not a
// pointer holds it (null leaves it as it was); nil for none.
func (v *View) Kept(path string) []byte { return v.raw(v.slots[v.index(path)].nonNull) }

// All are path's values since its reset, in order: decoded one after the
// other into the same variable, they give what json.Unmarshal would.
func (v *View) All(path string) iter.Seq[[]byte] {
	s := &v.slots[v.index(path)]
	return func(yield func([]byte) bool) {
		if s.first.to == 0 || !yield(v.raw(s.first)) {
			return
		}
		for _, r := range s.rest {
			if !yield(v.raw(r)) {
				return
			}
		}
	}
}

// Bad reports whether a value at path did not fit its type.
func (v *View) Bad(path string) bool { return v.slots[v.index(path)].bad }

func (v *View) raw(s span) []byte {
	if s.to == 0 {
		return nil
	}
	return v.body[s.from:s.to]
}

func (v *View) index(path string) int {
	if v.shape != nil {
		for i, p := range v.shape.paths {
			if p == path {
				return i
			}
		}
	}
	panic("hook: " + path + " is not a path of the body's shape")
}

// Text is the string raw holds as encoding/json decodes it (nil when raw
// is not a string); it may alias raw.
func Text(raw []byte) []byte {
	if len(raw) < 2 || raw[0] != '"' {
		return nil
	}
	return unquote(raw[1 : len(raw)-1])
}

// Int is the integer raw holds (0 when it holds none).
func Int(raw []byte) int64 {
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

func (v *View) scan(b []byte, s *Shape) {
	for i := range v.slots {
		v.slots[i] = slot{rest: v.slots[i].rest[:0]}
	}
	v.body, v.shape = b, s
	sc := scanner{jsonValidator: jsonValidator{b: b}, view: v}
	root, t := skipNode, (*trie)(nil)
	if s != nil {
		root, t = s.root, s.trie
	}
	ok := sc.value(0, root, t)
	sc.skipSpace()
	v.valid = ok && sc.i == len(b)
	v.fits = v.valid && sc.errs == 0
}

// record notes a value at t's path: null resets what it holds (when its
// type is nilable), and the paths under it.
func (v *View) record(t *trie, n *node, at span, bad bool) {
	null := v.body[at.from] == 'n'
	if null && n.nilable {
		for below := t.below; below != 0; below &= below - 1 {
			i := bits.TrailingZeros32(below)
			v.slots[i] = slot{rest: v.slots[i].rest[:0], bad: v.slots[i].bad}
		}
		if t.slot >= 0 {
			s := &v.slots[t.slot]
			s.first, s.rest = span{}, s.rest[:0]
		}
	}
	if t.slot < 0 {
		return
	}
	s := &v.slots[t.slot]
	s.bad = s.bad || bad
	if null {
		return
	}
	if s.first.to == 0 {
		s.first = at
	} else {
		s.rest = append(s.rest, at)
	}
	s.nonNull = at
}
