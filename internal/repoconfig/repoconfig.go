// Package repoconfig reads a repository's .github/pitcrew.yml. The file has
// two keys of its own (the daily limits) and one section per job; a job
// declares its section (key, defaults, checks) beside its handler, and the
// wiring builds the Schema from the list of jobs, so a new job adds a
// section without touching this package.
package repoconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// builtStruct is how errors name the struct Parse builds ("in type
// struct { DailyLimit int ...; S0 flaky.Config ... }").
var builtStruct = regexp.MustCompile(`in type struct \{[^}]*\}`)

// Path is where a repository configures pitcrew.
const Path = ".github/pitcrew.yml"

// Config is one repository's configuration. Every key has a default, so a
// repository without the file works.
type Config struct {
	// DailyLimit is how many runs pitcrew may start in the repository per
	// day (UTC), all jobs together.
	DailyLimit int
	// DailyIssueLimit is how many issues pitcrew may open in the repository
	// per day (UTC): tracking issues of alerts and of flaky tests.
	DailyIssueLimit int

	sections map[string]any // by key, each of its section's type
}

// Section is one job's part of the file: its key, its defaults and the
// checks a value must pass. Of reads it from a parsed Config.
type Section[T any] struct {
	Key      string
	Defaults func() T
	// Check refuses values out of range; nil accepts any.
	Check func(T) error
}

// Of is the section's value in c, its defaults when c does not hold it.
func (s Section[T]) Of(c Config) T {
	if v, ok := c.sections[s.Key].(T); ok {
		return v
	}
	return s.Defaults()
}

func (s Section[T]) key() string        { return s.Key }
func (s Section[T]) zero() reflect.Type { return reflect.TypeFor[T]() }
func (s Section[T]) defaultValue() any  { return s.Defaults() }
func (s Section[T]) check(v any) error {
	if s.Check == nil {
		return nil
	}
	return s.Check(v.(T))
}

// Part is a Section of any type, as a Schema lists it.
type Part interface {
	key() string
	zero() reflect.Type
	defaultValue() any
	check(any) error
}

// Schema is the whole file: the shared keys and every job's section.
type Schema struct{ parts []Part }

// NewSchema is the file with these sections; keys must be distinct.
func NewSchema(parts ...Part) (Schema, error) {
	seen := map[string]bool{"daily_limit": true, "daily_issue_limit": true}
	for _, p := range parts {
		if p.key() == "" || seen[p.key()] {
			return Schema{}, fmt.Errorf("repoconfig: section key %q is empty or used twice", p.key())
		}
		seen[p.key()] = true
	}
	return Schema{parts: parts}, nil
}

// Defaults is what applies where the file says nothing.
func (s Schema) Defaults() Config {
	c := Config{DailyLimit: 5, DailyIssueLimit: 10, sections: map[string]any{}}
	for _, p := range s.parts {
		c.sections[p.key()] = p.defaultValue()
	}
	return c
}

// fileType is the whole file as one struct, a field per section, so that
// one strict decode reads every key.
func (s Schema) fileType() reflect.Type {
	fields := []reflect.StructField{
		{Name: "DailyLimit", Type: reflect.TypeFor[int](), Tag: `yaml:"daily_limit" doc:"a whole number of runs per day, all jobs together, 0 to 1000"`},
		{Name: "DailyIssueLimit", Type: reflect.TypeFor[int](), Tag: `yaml:"daily_issue_limit" doc:"a whole number of issues per day, 0 to 1000"`},
	}
	for i, p := range s.parts {
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("S%d", i), Type: p.zero(), Tag: reflect.StructTag(fmt.Sprintf("yaml:%q", p.key()))})
	}
	return reflect.StructOf(fields)
}

// file is c as a value of fileType.
func (s Schema) file(c Config) reflect.Value {
	file := reflect.New(s.fileType())
	file.Elem().Field(0).SetInt(int64(c.DailyLimit))
	file.Elem().Field(1).SetInt(int64(c.DailyIssueLimit))
	for i, p := range s.parts {
		v, ok := c.sections[p.key()]
		if !ok {
			v = p.defaultValue()
		}
		file.Elem().Field(i + 2).Set(reflect.ValueOf(v))
	}
	return file
}

// Parse reads a configuration file strictly: unknown keys, wrong types and
// out-of-range values are errors, never silently defaulted. The error is
// Problems, each with its line and key.
func (s Schema) Parse(content []byte) (Config, error) {
	cfg := s.Defaults()
	var doc yaml.Node
	if err := yaml.Unmarshal(content, &doc); err != nil {
		return Config{}, Problems{syntaxProblem(err)}
	}
	if len(doc.Content) == 0 || doc.Content[0].Tag == "!!null" {
		return cfg, nil // empty, or comments only
	}
	root, file := doc.Content[0], s.file(cfg)
	if root.Kind != yaml.MappingNode {
		return Config{}, Problems{{Line: root.Line, Msg: fmt.Sprintf("the file holds %s, not a set of keys (the top-level keys are: %s)",
			shown(root), strings.Join(keysOf(file.Elem().Type()), ", "))}}
	}
	r := reader{lines: map[string]int{}}
	r.mapping("", root, file.Elem().Type(), file.Elem())
	if len(r.problems) > 0 {
		return Config{}, r.problems
	}
	dec := yaml.NewDecoder(bytes.NewReader(content))
	dec.KnownFields(true)
	if err := dec.Decode(file.Interface()); err != nil && !errors.Is(err, io.EOF) {
		// The walk above words every error it knows; this is the rest.
		return Config{}, Problems{{Msg: builtStruct.ReplaceAllString(strings.TrimPrefix(err.Error(), "yaml: "), "at the top level")}}
	}
	cfg.DailyLimit = int(file.Elem().Field(0).Int())
	cfg.DailyIssueLimit = int(file.Elem().Field(1).Int())
	for _, limit := range []struct {
		key string
		n   int
	}{{"daily_limit", cfg.DailyLimit}, {"daily_issue_limit", cfg.DailyIssueLimit}} {
		if limit.n < 0 || limit.n > 1000 {
			r.add(r.lines[limit.key], "", "%s must be between 0 and 1000", limit.key)
		}
	}
	for i, p := range s.parts {
		v := file.Elem().Field(i + 2).Interface()
		if err := p.check(v); err != nil {
			line := r.at(err.Error())
			if line == 0 {
				line = r.lines[p.key()]
			}
			r.add(line, "", "%s", err.Error())
		}
		cfg.sections[p.key()] = v
	}
	if len(r.problems) > 0 {
		sort.SliceStable(r.problems, func(i, j int) bool { return r.problems[i].Line < r.problems[j].Line })
		return Config{}, r.problems
	}
	return cfg, nil
}

// YAML writes c as a file: every key with the value that applies.
func (s Schema) YAML(c Config) ([]byte, error) {
	return yaml.Marshal(s.file(c).Interface())
}

// Error is a configuration file that could not be used. It is shown to
// users, so it names the file and the problem.
type Error struct {
	Source string // owner/repo@ref
	Path   string
	Err    error
}

func (e *Error) Error() string { return fmt.Sprintf("%s in %s: %v", e.Path, e.Source, e.Err) }

func (e *Error) Unwrap() error { return e.Err }
