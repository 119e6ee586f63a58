package repoconfig

import (
	"errors"
	"strings"
	"testing"
	"time"
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

type timer struct {
	Wait time.Duration `yaml:"wait"`
	Name string        `yaml:"name" doc:"the timer's name"`
}

var timers = Section[timer]{Key: "timers", Defaults: func() timer { return timer{Wait: 90 * time.Minute, Name: "t"} }}

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

func TestParseNamesEachProblemByLineKeyAndWhatIsAllowed(t *testing.T) {
	s, _ := NewSchema(widgets, gadgets, timers)
	for _, tc := range []struct{ name, file, want string }{
		{"a misspelt key of a section", "widgets:\n  nmes: [x]\n",
			"line 2: widgets.nmes: unknown key (the keys of widgets are: enabled, names)"},
		{"a key no section has", "sprockets: {}\n",
			"line 1: sprockets: unknown key (the top-level keys are: daily_limit, daily_issue_limit, widgets, gadgets, timers)"},
		{"a word for a number", "gadgets:\n  size: big\n",
			`line 2: gadgets.size: "big" is not a number (a whole number, default 3)`},
		{"a fraction for a whole number", "gadgets:\n  size: 2.5\n",
			`line 2: gadgets.size: "2.5" is not a whole number (a whole number, default 3)`},
		{"a quoted number", "daily_limit: \"7\"\n",
			`line 1: daily_limit: "7" is quoted, so it is text, not a whole number: write it without quotes (a whole number of runs per day, all jobs together, 0 to 1000, default 5)`},
		{"a shared key's own words", "\n\ndaily_limit: five\n",
			`line 3: daily_limit: "five" is not a number (a whole number of runs per day, all jobs together, 0 to 1000, default 5)`},
		{"a word for true or false", "widgets:\n  enabled: sometimes\n",
			`line 2: widgets.enabled: "sometimes" is not true or false (true or false, default true)`},
		{"a duration without a unit", "timers:\n  wait: 5\n",
			`line 2: timers.wait: "5" is not a duration (a duration such as 90m, 24h or 0s, default 1h30m)`},
		{"one value for a list", "widgets:\n  names: x\n",
			`line 2: widgets.names: "x" is not a list (a list of text, default ["a"])`},
		{"a list for text", "timers:\n  name: [a]\n",
			`line 2: timers.name: a list is not text (the timer's name, default "t")`},
		{"a value for a section", "widgets: yes\n",
			`line 1: widgets: "yes" is not a set of keys (widgets takes: enabled, names)`},
		{"a key set twice", "gadgets:\n  size: 1\n  size: 2\n",
			"line 3: gadgets.size: set twice (first on line 2)"},
		{"a section's check, at its key", "widgets:\n  enabled: true\n  names: [a, b, c]\n",
			"line 3: widgets.names must list at most 2 names"},
		{"a shared limit out of range", "daily_issue_limit: -1\n",
			"line 1: daily_issue_limit must be between 0 and 1000"},
		{"every problem, in the file's order", "gadgets:\n  size: big\nwidgets:\n  nmes: 1\n",
			"line 2: gadgets.size: \"big\" is not a number (a whole number, default 3)\nline 4: widgets.nmes: unknown key (the keys of widgets are: enabled, names)"},
		{"a file that is no mapping", "- a\n- b\n",
			"line 1: the file holds a list, not a set of keys (the top-level keys are: daily_limit, daily_issue_limit, widgets, gadgets, timers)"},
		{"YAML that does not parse", "widgets: [\n",
			"line 1: this is not valid YAML: did not find expected node content"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Parse([]byte(tc.file))
			var problems Problems
			if !errors.As(err, &problems) || err.Error() != tc.want {
				t.Errorf("%q:\n got %v\nwant %s", tc.file, err, tc.want)
			}
		})
	}
}

func TestParseTakesAnEmptyFileAsTheDefaults(t *testing.T) {
	s, _ := NewSchema(widgets, gadgets)
	for _, file := range []string{"", "  \n", "# nothing yet\n", "~\n", "widgets:\n"} {
		if cfg, err := s.Parse([]byte(file)); err != nil || cfg.DailyLimit != 5 || !widgets.Of(cfg).Enabled {
			t.Errorf("%q: %+v %v", file, cfg, err)
		}
	}
}

func TestYAMLWritesEveryKeyWithTheValueThatApplies(t *testing.T) {
	s, _ := NewSchema(widgets, gadgets, timers)
	cfg, err := s.Parse([]byte("gadgets:\n  size: 4\n"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.YAML(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := "daily_limit: 5\ndaily_issue_limit: 10\nwidgets:\n    enabled: true\n    names:\n        - a\ngadgets:\n    size: 4\ntimers:\n    wait: 1h30m0s\n    name: t\n"
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	if again, err := s.Parse(out); err != nil || gadgets.Of(again).Size != 4 {
		t.Errorf("what YAML writes does not read back: %v", err)
	}
}

func TestNewSchemaRefusesAKeyTwice(t *testing.T) {
	for _, parts := range [][]Part{{widgets, widgets}, {Section[gadget]{Key: "daily_limit"}}, {Section[gadget]{}}} {
		if _, err := NewSchema(parts...); err == nil {
			t.Errorf("NewSchema(%v) accepted a duplicate or empty key", parts)
		}
	}
}
