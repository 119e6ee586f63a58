package repoconfig

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Problem is one thing wrong with a configuration file, in the file's own
// words: its line, its key as a dotted path and what the key allows.
type Problem struct {
	Line int    // 0 when no one line holds it
	Key  string // "" when Msg names the key itself, or for the whole file
	Msg  string
}

func (p Problem) String() string {
	s := p.Msg
	if p.Key != "" {
		s = p.Key + ": " + s
	}
	if p.Line > 0 {
		s = fmt.Sprintf("line %d: %s", p.Line, s)
	}
	return s
}

// Problems is every problem Parse found in a file, in the order of the
// file; it is the error Parse returns.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// docTag is the struct tag that says, in a user's words, what a key holds
// ("a whole number of runs per day"); without it the key's type says it.
const docTag = "doc"

var durationType = reflect.TypeFor[time.Duration]()

// yamlSyntax is how yaml.v3 words a file it cannot read.
var yamlSyntax = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// reader walks a file's YAML nodes beside the type they must decode into,
// so that every problem names the file's line and key rather than a Go
// type, and records where each key is for the checks' messages.
type reader struct {
	problems Problems
	lines    map[string]int // dotted key path -> its line
}

func (r *reader) add(line int, key, format string, args ...any) {
	r.problems = append(r.problems, Problem{Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
}

// syntaxProblem words a file yaml.v3 could not read at all.
func syntaxProblem(err error) Problem {
	if m := yamlSyntax.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return Problem{Line: line, Msg: "this is not valid YAML: " + m[2]}
	}
	return Problem{Msg: "this is not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
}

// value checks node n against type t; def is the key's default and doc
// what the key holds, for the message.
func (r *reader) value(path string, n *yaml.Node, t reflect.Type, def reflect.Value, doc string) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return // the key is there with no value: its default stays
	}
	allowed := describe(t, def, doc)
	if t.Kind() == reflect.Struct {
		if n.Kind != yaml.MappingNode {
			r.add(n.Line, path, "%s is not a set of keys (%s takes: %s)", shown(n), path, strings.Join(keysOf(t), ", "))
			return
		}
		r.mapping(path, n, t, def)
		return
	}
	if t.Kind() == reflect.Slice {
		if n.Kind != yaml.SequenceNode {
			r.add(n.Line, path, "%s is not a list (%s)", shown(n), allowed)
			return
		}
		for i, item := range n.Content {
			at := fmt.Sprintf("%s[%d]", path, i)
			r.lines[at] = item.Line
			r.value(at, item, t.Elem(), reflect.Value{}, "")
		}
		return
	}
	if n.Kind != yaml.ScalarNode {
		r.add(n.Line, path, "%s is not %s (%s)", shown(n), noun(t), allowed)
		return
	}
	if n.Decode(reflect.New(t).Interface()) == nil && whole(n, t) {
		return
	}
	what := noun(t)
	if isInteger(t) && !isNumber(n.Value) {
		what = "a number"
	}
	plain := yaml.Node{Kind: yaml.ScalarNode, Value: n.Value}
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 && plain.Decode(reflect.New(t).Interface()) == nil {
		r.add(n.Line, path, "%s is quoted, so it is text, not %s: write it without quotes (%s)", shown(n), what, allowed)
		return
	}
	r.add(n.Line, path, "%s is not %s (%s)", shown(n), what, allowed)
}

// mapping checks each key of n against struct type t.
func (r *reader) mapping(path string, n *yaml.Node, t reflect.Type, def reflect.Value) {
	first := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := join(path, k.Value)
		if line, seen := first[k.Value]; seen {
			r.add(k.Line, key, "set twice (first on line %d)", line)
			continue
		}
		first[k.Value] = k.Line
		f, ok := fieldOf(t, k.Value)
		if !ok {
			where := "the top-level keys are"
			if path != "" {
				where = "the keys of " + path + " are"
			}
			r.add(k.Line, key, "unknown key (%s: %s)", where, strings.Join(keysOf(t), ", "))
			continue
		}
		var fdef reflect.Value
		if def.IsValid() {
			fdef = def.FieldByIndex(f.Index)
		}
		r.lines[key] = k.Line
		r.value(key, v, f.Type, fdef, f.Tag.Get(docTag))
	}
}

// at is the line of the longest key path msg starts with (a check's
// message names its key: "flaky.verify_runs must be ..."), 0 for none.
func (r *reader) at(msg string) int {
	best, line := 0, 0
	for path, l := range r.lines {
		if len(path) > best && strings.HasPrefix(msg, path) && len(msg) > len(path) && strings.ContainsRune(" :.[", rune(msg[len(path)])) {
			best, line = len(path), l
		}
	}
	return line
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// fieldOf is t's field whose yaml key is key.
func fieldOf(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); yamlKey(f) == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func yamlKey(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "" {
		return strings.ToLower(f.Name)
	}
	return name
}

// keysOf lists t's keys in the order it declares them.
func keysOf(t reflect.Type) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.IsExported() && f.Tag.Get("yaml") != "-" {
			keys = append(keys, yamlKey(f))
		}
	}
	return keys
}

// shown is how a message quotes the value a user wrote.
func shown(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a set of keys"
	}
	return strconv.Quote(n.Value)
}

// noun is what a value of type t is, in words.
func noun(t reflect.Type) string {
	switch {
	case t == durationType:
		return "a duration"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case isInteger(t):
		return "a whole number"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "a number"
	case t.Kind() == reflect.String:
		return "text"
	case t.Kind() == reflect.Slice:
		return "a list of " + strings.TrimPrefix(noun(t.Elem()), "a ")
	}
	return "a value"
}

// describe is what a key allows: its doc tag or its type, and its default.
func describe(t reflect.Type, def reflect.Value, doc string) string {
	s := doc
	if s == "" {
		s = noun(t)
		if t == durationType {
			s += " such as 90m, 24h or 0s"
		}
	}
	if d, ok := defaultText(def); ok {
		s += ", default " + d
	}
	return s
}

func defaultText(v reflect.Value) (string, bool) {
	if !v.IsValid() {
		return "", false
	}
	switch {
	case v.Type() == durationType:
		return shortDuration(time.Duration(v.Int())), true
	case v.Kind() == reflect.String:
		return strconv.Quote(v.String()), true
	case v.Kind() == reflect.Bool, v.Kind() >= reflect.Int && v.Kind() <= reflect.Float64:
		return fmt.Sprint(v.Interface()), true
	case v.Kind() == reflect.Slice:
		items := make([]string, v.Len())
		for i := range items {
			items[i], _ = defaultText(v.Index(i))
		}
		return "[" + strings.Join(items, ", ") + "]", true
	}
	return "", false
}

// shortDuration writes 24h rather than time's 24h0m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	return err == nil
}

// whole is false for a number with a fraction where t is an integer: the
// decoder would drop the fraction without a word.
func whole(n *yaml.Node, t reflect.Type) bool {
	if !isInteger(t) {
		return true
	}
	f, err := strconv.ParseFloat(n.Value, 64)
	return err != nil || f == math.Trunc(f)
}

func isInteger(t reflect.Type) bool {
	return t != durationType && t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64
}
