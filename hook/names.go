package hook

import (
	"encoding/json"
	"slices"
	"unicode"
	"unicode/utf8"
)

// nameTable finds a name's field: an open-addressed hash of a few of its
// bytes, several times cheaper than a map on the hundreds of keys a
// delivery has.
type nameTable struct {
	slots []nameSlot // a power of two, at least twice the names
}

type nameSlot struct {
	name  string
	field int // +1: 0 is an empty slot
}

func hashName[T string | []byte](s T) int {
	n := len(s)
	if n == 0 {
		return 0
	}
	return n*0x9E3779B1 ^ int(s[0])*0x85EBCA6B ^ int(s[n/2])*0xC2B2AE35 ^ int(s[n-1])*0x27D4EB2F ^ int(s[n/3])*0x165667B1
}

// add puts name in t unless it is there already (the first folded match
// takes precedence); t must have room.
func (t *nameTable) add(name string, field int) {
	mask := len(t.slots) - 1
	for i := hashName(name) & mask; ; i = (i + 1) & mask {
		switch s := &t.slots[i]; {
		case s.field == 0:
			s.name, s.field = name, field+1
			return
		case s.name == name:
			return
		}
	}
}

func (t *nameTable) find(key []byte) int {
	mask := len(t.slots) - 1
	for i := hashName(key) & mask; ; i = (i + 1) & mask {
		switch s := &t.slots[i]; {
		case s.field == 0:
			return -1
		case s.name == string(key):
			return s.field - 1
		}
	}
}

// lookup is the field a member's key (its raw text between the quotes)
// takes, or -1.
func (fs *fields) lookup(raw []byte) int {
	plain := true
	for _, c := range raw {
		if c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	key := raw
	if !plain {
		key = unquote(raw)
	}
	if i := fs.exact.find(key); i >= 0 {
		return i
	}
	var buf [32]byte
	return fs.folded.find(appendFoldedName(buf[:0], key))
}

// unquote is a JSON string's text (raw is between its quotes) as
// encoding/json decodes it: escapes resolved, bad UTF-8 made U+FFFD.
func unquote(raw []byte) []byte {
	if !slices.Contains(raw, '\\') && utf8.Valid(raw) {
		return raw
	}
	var s string
	quoted := make([]byte, 0, len(raw)+2)
	if json.Unmarshal(append(append(append(quoted, '"'), raw...), '"'), &s) != nil {
		return nil
	}
	return []byte(s)
}

// appendFoldedName is encoding/json's: the key folded so that two keys
// fold the same exactly when bytes.EqualFold holds.
func appendFoldedName(out, in []byte) []byte {
	for i := 0; i < len(in); {
		if c := in[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(in[i:])
		out = utf8.AppendRune(out, foldRune(r))
		i += n
	}
	return out
}

// foldRune is the smallest rune of r's fold set.
func foldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}
