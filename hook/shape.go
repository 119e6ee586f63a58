package hook

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"
)

// MaxPaths bounds the paths one Shape reads, so that a View holds their
// values in place.
const MaxPaths = 16

// A Shape is a Go type as encoding/json decodes into it, for reading a
// body in one pass (Body.Scan): which bodies json.Unmarshal would refuse
// with an error, and where the values of a few paths are. A path is JSON
// member names joined by dots, through structs only ("comment.user.login").
type Shape struct {
	root  *node
	paths []string
	trie  *trie
}

// kind is what a node takes, by encoding/json's rules.
type kind uint8

const (
	kindSkip   kind = iota // a member no field takes: only its syntax counts
	kindAny                // interface{}: any value, whose numbers must be float64s
	kindBool               // true, false
	kindString             // a string
	kindInt                // a number ParseInt takes within bits
	kindUint               // a number ParseUint takes within bits
	kindFloat              // a number ParseFloat takes with bits
	kindStruct             // an object, members by fields
	kindMap                // an object, every member an elem
	kindSlice              // an array, every element an elem
	kindCustom             // a json.Unmarshaler: its UnmarshalJSON decides
)

// node is one Go type as the decoder meets it. null fits every node; it
// sets a nilable one to nil and leaves any other as it was (a kindCustom
// that is not nilable gets it through UnmarshalJSON).
type node struct {
	kind    kind
	nilable bool
	bits    int
	elem    *node
	fields  *fields
	takes   func(raw []byte) bool // kindCustom: whether UnmarshalJSON takes raw
}

var skipNode = &node{kind: kindSkip}

// fields are a struct's members: a key takes the field of its exact name,
// else the first whose name folds to the same (encoding/json's lookup).
type fields struct {
	names  []string
	nodes  []*node
	exact  nameTable
	folded nameTable
}

// trie holds the paths of a Shape: slot is the path ending here (-1 for
// none), below the slots of the paths that go through it.
type trie struct {
	slot     int
	below    uint32
	children []trieChild
}

type trieChild struct {
	field int
	next  *trie
}

func (t *trie) child(field int) *trie {
	for _, c := range t.children {
		if c.field == field {
			return c.next
		}
	}
	return nil
}

// NewShape is t's Shape with paths; it fails for a type this reading does
// not model (embedded fields, the ",string" option, TextUnmarshalers,
// byte slices, arrays, json.Number, non-string map keys) and for a path
// that is not one of t's.
func NewShape(t reflect.Type, paths ...string) (*Shape, error) {
	b := shapeBuilder{nodes: map[reflect.Type]*node{}, building: map[*node]bool{}}
	root, err := b.node(t)
	if err != nil {
		return nil, fmt.Errorf("shape of %v: %w", t, err)
	}
	s := &Shape{root: root, paths: paths, trie: &trie{slot: -1}}
	if len(paths) > MaxPaths {
		return nil, fmt.Errorf("shape of %v: %d paths, more than %d", t, len(paths), MaxPaths)
	}
	for i, p := range paths {
		if err := s.addPath(i, p); err != nil {
			return nil, fmt.Errorf("shape of %v: path %q: %w", t, p, err)
		}
	}
	s.trie.mask()
	return s, nil
}

// MustShape is NewShape for a package's variables.
func MustShape(t reflect.Type, paths ...string) *Shape {
	s, err := NewShape(t, paths...)
	if err != nil {
		panic("hook: " + err.Error())
	}
	return s
}

func (s *Shape) addPath(slot int, path string) error {
	n, t := s.root, s.trie
	for name := range strings.SplitSeq(path, ".") {
		if n.kind != kindStruct {
			return fmt.Errorf("%q is not in an object", name)
		}
		f := slices.Index(n.fields.names, name)
		if f < 0 {
			return fmt.Errorf("no field %q", name)
		}
		next := t.child(f)
		if next == nil {
			next = &trie{slot: -1}
			t.children = append(t.children, trieChild{f, next})
		}
		n, t = n.fields.nodes[f], next
	}
	if t.slot >= 0 {
		return errors.New("given twice")
	}
	t.slot = slot
	return nil
}

// mask fills in below, and returns the slots at and under t.
func (t *trie) mask() uint32 {
	for _, c := range t.children {
		t.below |= c.next.mask()
	}
	if t.slot >= 0 {
		return t.below | 1<<t.slot
	}
	return t.below
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

type shapeBuilder struct {
	nodes    map[reflect.Type]*node
	building map[*node]bool
}

func (b shapeBuilder) node(t reflect.Type) (*node, error) {
	if n, ok := b.nodes[t]; ok {
		return n, nil
	}
	n := &node{}
	b.nodes[t] = n // first: a type may hold itself
	b.building[n] = true
	defer delete(b.building, n)
	return n, b.fill(n, t)
}

// fill follows encoding/json's indirect: a pointer's UnmarshalJSON, else a
// named value's through its address (null included), else the pointer's
// target, nilable.
func (b shapeBuilder) fill(n *node, t reflect.Type) error {
	switch {
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Pointer:
		return fmt.Errorf("%v: a pointer to a pointer", t)
	case t.Kind() == reflect.Pointer && t.Implements(unmarshalerType):
		n.kind, n.nilable, n.takes = kindCustom, true, unmarshals(t.Elem())
		return nil
	case t.Kind() != reflect.Pointer && t.Name() != "" && reflect.PointerTo(t).Implements(unmarshalerType):
		n.kind, n.takes = kindCustom, unmarshals(t)
		return nil
	case t.Implements(textUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType):
		return fmt.Errorf("%v: a TextUnmarshaler", t)
	case t == reflect.TypeFor[json.Number]():
		return fmt.Errorf("%v: json.Number", t)
	}
	switch t.Kind() {
	case reflect.Pointer:
		e, err := b.node(t.Elem())
		if err != nil {
			return err
		}
		if b.building[e] && e.kind != kindStruct {
			return fmt.Errorf("%v: holds itself other than through a struct", t)
		}
		*n = *e // a struct under construction already has its fields
		n.nilable = true
	case reflect.Interface:
		if t.NumMethod() != 0 {
			return fmt.Errorf("%v: an interface with methods", t)
		}
		n.kind, n.nilable = kindAny, true
	case reflect.Bool:
		n.kind = kindBool
	case reflect.String:
		n.kind = kindString
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n.kind, n.bits = kindInt, t.Bits()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n.kind, n.bits = kindUint, t.Bits()
	case reflect.Float32, reflect.Float64:
		n.kind, n.bits = kindFloat, t.Bits()
	case reflect.Map:
		if t.Key().Kind() != reflect.String || reflect.PointerTo(t.Key()).Implements(textUnmarshalerType) {
			return fmt.Errorf("%v: keys other than strings", t)
		}
		e, err := b.node(t.Elem())
		n.kind, n.nilable, n.elem = kindMap, true, e
		return err
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return fmt.Errorf("%v: bytes (base64)", t)
		}
		e, err := b.node(t.Elem())
		n.kind, n.nilable, n.elem = kindSlice, true, e
		return err
	case reflect.Struct:
		return b.fillStruct(n, t)
	default:
		return fmt.Errorf("%v: %v values", t, t.Kind())
	}
	return nil
}

// fillStruct takes encoding/json's fields of t: exported, not "-", named
// by a valid tag or else the Go name; of fields sharing a name, the one
// tagged if it alone is, else none.
func (b shapeBuilder) fillStruct(n *node, t reflect.Type) error {
	fs := &fields{}
	n.kind, n.fields = kindStruct, fs
	type field struct {
		name   string
		tagged bool
		index  int
	}
	var all []field
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return fmt.Errorf("%v: embeds %s", t, sf.Name)
		}
		tag := sf.Tag.Get("json")
		if !sf.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if slices.Contains(strings.Split(opts, ","), "string") {
			return fmt.Errorf("%v.%s: the \",string\" option", t, sf.Name)
		}
		tagged := isValidTag(name)
		if !tagged {
			name = sf.Name
		}
		all = append(all, field{name, tagged, i})
	}
	size := 4
	for size < 4*len(all) {
		size *= 2
	}
	fs.exact.slots, fs.folded.slots = make([]nameSlot, size), make([]nameSlot, size)
	for _, f := range all {
		tagged, untagged := 0, 0
		for _, g := range all {
			if g.name == f.name && g.tagged {
				tagged++
			} else if g.name == f.name {
				untagged++
			}
		}
		if tagged+untagged > 1 && !(f.tagged && tagged == 1) {
			continue
		}
		e, err := b.node(t.Field(f.index).Type)
		if err != nil {
			return err
		}
		fs.exact.add(f.name, len(fs.nodes))
		fs.folded.add(string(appendFoldedName(nil, []byte(f.name))), len(fs.nodes))
		fs.names, fs.nodes = append(fs.names, f.name), append(fs.nodes, e)
	}
	return nil
}

// isValidTag is encoding/json's.
func isValidTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
