package repoconfig

import (
	"errors"
	"strings"
	"testing"
)

type widget struct {
	Enabled bool     `yaml:"enabled"`
	Names   []string `yaml:"names"`
}

var widgets = Section[widget]{
	Key:      "widgets",
	Defaults: func() widget { return widget{Enabled: true, Names: []string{"a"}} },
	Check: func(w widget) error {
		if len(w.Names) > 2 {
			return errors.New("widgets.names must list at most 2 names")
		}
		return nil
	},
}

type gadget struct {
	Size int `yaml:"size"`
}

var gadgets = Section[gadget]{Key: "gadgets", Defaults: func() gadget { return gadget{Size: 3} }}

func TestParseReadsEachSectionOverItsDefaults(t *testing.T) {
	s, err := NewSchema(widgets, gadgets)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := s.Parse([]byte("daily_limit: 7\nwidgets:\n  names: [x, y]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DailyLimit != 7 || cfg.DailyIssueLimit != 10 {
		t.Errorf("shared keys: %+v", cfg)
	}
	if w := widgets.Of(cfg); !w.Enabled || strings.Join(w.Names, ",") != "x,y" {
		t.Errorf("widgets = %+v: a key the file sets replaces its default, the others keep theirs", w)
	}
	if g := gadgets.Of(cfg); g.Size != 3 {
		t.Errorf("gadgets = %+v, want the defaults", g)
	}
	if g := gadgets.Of(Config{}); g.Size != 3 {
		t.Errorf("a zero Config gives the defaults, got %+v", g)
	}
}

func TestParseRefusesWhatTheSchemaDoesNotKnowOrCheck(t *testing.T) {
	s, _ := NewSchema(widgets, gadgets)
	for _, bad := range []struct{ file, want string }{
		{"widgets:\n  nmes: [x]\n", "line 2: field nmes not found"},
		{"sprockets: {}\n", "line 1: field sprockets not found at the top level"},
		{"gadgets:\n  size: big\n", "cannot unmarshal"},
		{"widgets:\n  names: [a, b, c]\n", "at most 2"},
		{"daily_issue_limit: -1\n", "daily_issue_limit must be"},
	} {
		if _, err := s.Parse([]byte(bad.file)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: err = %v, want %q", bad.file, err, bad.want)
		}
	}
	if cfg, err := s.Parse([]byte("  \n")); err != nil || cfg.DailyLimit != 5 {
		t.Errorf("an empty file is the defaults: %+v %v", cfg, err)
	}
}

func TestNewSchemaRefusesAKeyTwice(t *testing.T) {
	for _, parts := range [][]Part{{widgets, widgets}, {Section[gadget]{Key: "daily_limit"}}, {Section[gadget]{}}} {
		if _, err := NewSchema(parts...); err == nil {
			t.Errorf("NewSchema(%v) accepted a duplicate or empty key", parts)
		}
	}
}
