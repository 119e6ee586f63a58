package hook

import "strconv"

// scanner is jsonValidator with a Shape: the same one pass also counts
// the values json.Unmarshal would refuse (errs) and records the values of
// the Shape's paths in view. A member no field takes is only validated.
type scanner struct {
	jsonValidator
	view *View
	errs int
}

// value checks one value against n; t is the trie of the paths at and
// under it, nil off them.
func (s *scanner) value(depth int, n *node, t *trie) bool {
	if n.kind == kindSkip {
		return s.jsonValidator.value(depth)
	}
	s.skipSpace()
	if s.i >= len(s.b) {
		return false
	}
	start, ok := s.i, false
	switch c := s.b[s.i]; {
	case c == '{':
		if depth >= maxJSONDepth {
			return false
		}
		switch n.kind {
		case kindStruct:
			return s.object(depth+1, n.fields, t)
		case kindMap:
			return s.members(depth+1, n.elem)
		case kindAny:
			return s.members(depth+1, n)
		}
		ok = s.container(depth+1, '}', true)
	case c == '[':
		if depth >= maxJSONDepth {
			return false
		}
		switch n.kind {
		case kindSlice:
			return s.elements(depth+1, n.elem)
		case kindAny:
			return s.elements(depth+1, n)
		}
		ok = s.container(depth+1, ']', false)
	case c == '"':
		if ok = s.string(); ok && (n.kind == kindString || n.kind == kindAny) {
			return true
		}
	case c == 't' || c == 'f':
		word := "true"
		if c == 'f' {
			word = "false"
		}
		if ok = s.literal(word); ok && (n.kind == kindBool || n.kind == kindAny) {
			return true
		}
	case c == 'n':
		if ok = s.literal("null"); ok && (n.kind != kindCustom || n.nilable) {
			return true
		}
	case c == '-' || c >= '0' && c <= '9':
		if ok = s.number(); ok && numberFits(n, s.b[start:s.i]) {
			return true
		}
	}
	if ok {
		s.mismatch(n, s.b[start:s.i])
	}
	return ok
}

// mismatch counts a value that is not of n's kind as an error, unless n
// is an Unmarshaler that takes it.
func (s *scanner) mismatch(n *node, raw []byte) {
	if n.kind != kindCustom || !n.takes(raw) {
		s.errs++
	}
}

// numberFits is encoding/json's literalStore for a number.
func numberFits(n *node, raw []byte) bool {
	switch n.kind {
	case kindInt:
		x, err := strconv.ParseInt(string(raw), 10, 64)
		return err == nil && (n.bits == 64 || x >= -1<<(n.bits-1) && x < 1<<(n.bits-1))
	case kindUint:
		x, err := strconv.ParseUint(string(raw), 10, 64)
		return err == nil && (n.bits == 64 || x < 1<<n.bits)
	case kindFloat:
		_, err := strconv.ParseFloat(string(raw), n.bits)
		return err == nil
	case kindAny:
		_, err := strconv.ParseFloat(string(raw), 64)
		return err == nil
	}
	return false
}

// object checks a struct's object from its '{': each member by the field
// its key takes, recording the values of t's paths.
func (s *scanner) object(depth int, fs *fields, t *trie) bool {
	if s.open('}') {
		return true
	}
	for {
		s.skipSpace()
		key := s.i
		if s.i >= len(s.b) || s.b[s.i] != '"' || !s.string() {
			return false
		}
		f := fs.lookup(s.b[key+1 : s.i-1])
		s.skipSpace()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		n, next := skipNode, (*trie)(nil)
		if f >= 0 {
			n = fs.nodes[f]
			if t != nil {
				next = t.child(f)
			}
		}
		if next == nil {
			if !s.value(depth, n, nil) {
				return false
			}
		} else {
			s.skipSpace()
			from, errs := s.i, s.errs
			if !s.value(depth, n, next) {
				return false
			}
			s.view.record(next, n, span{from, s.i}, s.errs > errs)
		}
		if more, ok := s.next('}'); !more {
			return ok
		}
	}
}

// members checks a map's (or an interface's) object from its '{': every
// value an elem.
func (s *scanner) members(depth int, elem *node) bool {
	if s.open('}') {
		return true
	}
	for {
		s.skipSpace()
		if s.i >= len(s.b) || s.b[s.i] != '"' || !s.string() {
			return false
		}
		s.skipSpace()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		if !s.value(depth, elem, nil) {
			return false
		}
		if more, ok := s.next('}'); !more {
			return ok
		}
	}
}

// elements checks an array from its '[': every element an elem.
func (s *scanner) elements(depth int, elem *node) bool {
	if s.open(']') {
		return true
	}
	for {
		if !s.value(depth, elem, nil) {
			return false
		}
		if more, ok := s.next(']'); !more {
			return ok
		}
	}
}
