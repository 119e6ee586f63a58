package evidence

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// The flaky rule about running a test module alone (async: false), and
// the global state that would explain it.

var (
	asyncFalse = hinted{regexp.MustCompile(`^\s*use\s+[\w.]+,.*\basync:\s*false\b`), []string{"async"}}
	asyncTrue  = hinted{regexp.MustCompile(`^\s*use\s+[\w.]+,.*\basync:\s*true\b`), []string{"async"}}
	useCase    = hinted{regexp.MustCompile(`^\s*use\s+[\w.]*(Case|Test)\b`), []string{"use"}}
	// globalState is what makes tests of one module interfere with others
	// running at the same time.
	globalState = []struct {
		pattern *regexp.Regexp
		what    string
		hint    string // in every line the pattern matches, to skip the others cheaply
		inText  bool   // read in the line's strings too (SQL), not only its code
	}{
		{regexp.MustCompile(`\bApplication\.(put_env|delete_env|put_all_env)\b`), "Application.put_env", "Application.", false},
		{regexp.MustCompile(`\bSystem\.(put_env|delete_env)\b`), "System.put_env", "System.", false},
		{regexp.MustCompile(`\b(Mox\.)?set_mox_global\b`), "Mox.set_mox_global", "set_mox_global", false},
		{regexp.MustCompile(`:named_table\b`), "a named ETS table", ":named_table", false},
		{regexp.MustCompile(`:persistent_term\.(put|erase)\b`), ":persistent_term", ":persistent_term", false},
		{regexp.MustCompile(`\bProcess\.register\b`), "a named process", "Process.register", false},
		// A name given by a call (Keyword.get(opts, :name, __MODULE__)) is
		// the caller's to choose: tests may pass their own.
		{regexp.MustCompile(`\bname:\s*(__MODULE__|[A-Z][\w.]*\w(?:[^\w.(]|$)|:\w+|\{:global|\{:via)`), "a named process", "name:", false},
		{regexp.MustCompile(`:sys\.(replace_state|suspend|resume)\(\s*([A-Z][\w.]*|:\w+)`), "a named process's state", ":sys.", false},
		// A table reached by its name; :ets.new(:name, opts) without
		// :named_table makes a table only its reference reaches.
		{regexp.MustCompile(`:ets\.(insert\w*|lookup\w*|delete\w*|match\w*|select\w*|update\w*|tab2list|fold[lr]|first|last|next|prev|member|take|info|whereis|give_away)\(\s*:\w+`), "a named ETS table", ":ets.", false},
		{regexp.MustCompile(`:telemetry\.attach(_many)?\b`), "a telemetry handler", ":telemetry.", false},
		{regexp.MustCompile(`\bmock_global\b|\bMox\.set_mox_from_context\b`), "a global mock", "mo", false},
		{regexp.MustCompile(`\bPubSub\.(subscribe|broadcast)\([^,]+,\s*"`), "a fixed PubSub topic", "PubSub.", false},
		{regexp.MustCompile(`\bLogger\.(configure|put_module_level|add_backend)\b`), "the Logger configuration", "Logger.", false},
		{regexp.MustCompile(`\bcapture_log\b`), "the Logger configuration", "capture_log", false},
		{regexp.MustCompile(`\b:global\.register_name\b`), "a globally registered name", ":global.", false},
		// A function that says it sets what is global: Nx.global_default_backend(B).
		{regexp.MustCompile(`\b[A-Z][\w.]*\.(?:\w+_)?global(?:_\w+)?[!?]?\(|\b\w+_global(?:_\w+)?[!?]?\(|\bglobal_\w+[!?]?\(`), "state its functions say is global", "global", false},
		{regexp.MustCompile(`\bEcto\.Adapters\.SQL\.Sandbox\.mode\([^,]+,\s*\{:shared`), "the shared SQL sandbox mode", "Sandbox.mode", false},
		{regexp.MustCompile(`\bstart_owner!\([^)]*\bshared:`), "the shared SQL sandbox mode", "start_owner!", false},
		{regexp.MustCompile(`\bon_exit\(\s*fn\s*(\(\s*\))?\s*->\s*[A-Z][\w.]*\.\w+[!?]?\(\s*(previous|prev|old|original|saved|before)\w*`), "state the test restores after it (on_exit)", "on_exit", false},
		{regexp.MustCompile(`\bFile\.(write|rm|mkdir)`), "the file system", "File.", false},
		{regexp.MustCompile(`\bRegistry\.(register|unregister|update_value|put_meta|count|count_match|lookup|match|select|keys)\(\s*[A-Z]`), "a named registry", "Registry.", false},
		{regexp.MustCompile(`(?i)"[^"]*\b(SHOW|SET)\s+GLOBAL\b`), "the database server's global state", "GLOBAL", true},
		{regexp.MustCompile(`"[^"]*\bCREATE\s+(TYPE|TABLE|SCHEMA|EXTENSION|FUNCTION|SEQUENCE|VIEW)\b`), "the database's schema, shared by every test", "CREATE", true},
		{regexp.MustCompile(`"[^"]*\bDROP\s+(TYPE|TABLE|SCHEMA|EXTENSION|FUNCTION|SEQUENCE|VIEW)\b`), "the database's schema, shared by every test", "DROP", true},
		{regexp.MustCompile(`"[^"]*\bALTER\s+(TYPE|TABLE|SCHEMA|EXTENSION|FUNCTION|SEQUENCE|VIEW)\b`), "the database's schema, shared by every test", "ALTER", true},
		{regexp.MustCompile(`:code\.(add_path\w*|del_path|purge|delete|load_binary)\b`), "the code path and loaded applications", ":code.", false},
		{regexp.MustCompile(`\bCode\.(compile_string|compile_quoted|eval_string)\(`), "modules compiled at run time, global to the VM", "Code.", false},
		{regexp.MustCompile(`\bModule\.create\(`), "modules compiled at run time, global to the VM", "Module.create", false},
		{regexp.MustCompile(`\b(Port|Process)\.list\(`), "VM-wide listings", ".list(", false},
		{regexp.MustCompile(`:erlang\.(ports|processes|memory|statistics)\(`), "VM-wide listings", ":erlang.", false},
		{regexp.MustCompile(`\b(put|set)_(test_|app_|application_|global_)?config\(`), "configuration written by a helper", "config(", false},
		{regexp.MustCompile(`\b(put|set)_(test_|app_|application_|global_)?env\(`), "configuration written by a helper", "env(", false},
		{regexp.MustCompile(`\bApplication\.(load|unload|start|stop|ensure_all_started)\(`), "the code path and loaded applications", "Application.", false},
		{regexp.MustCompile(`\bwith_mocks?\b`), "a module mocked for the whole VM (Mock, :meck)", "with_mock", false},
		{regexp.MustCompile(`^\s*import\s+Mock\b`), "a module mocked for the whole VM (Mock, :meck)", "Mock", false},
		{regexp.MustCompile(`:meck\.(new|expect)\(`), "a module mocked for the whole VM (Mock, :meck)", ":meck.", false},
		{regexp.MustCompile(`\bFile\.cd!?\(`), "the working directory and the Mix project", "File.cd", false},
		{regexp.MustCompile(`\bMix\.Project\.(in_project|push|pop)\(`), "the working directory and the Mix project", "Mix.Project.", false},
		{regexp.MustCompile(`\bin_fixture\(`), "the working directory and the Mix project", "in_fixture(", false},
		{regexp.MustCompile(`\bFunWithFlags\.(enable|disable|clear)\(`), "feature flags shared by every test", "FunWithFlags.", false},
		{regexp.MustCompile(`\b(Cachex|ConCache)\.\w+[!?]?\(\s*(:\w+|@\w+|[A-Z][\w.]*)`), "a named cache", "Cache", false},
	}
)

// asyncOff: a test module made synchronous. A note when the diff shows it
// touching global state (what async: false protects), a concern when it
// shows none: then the change may only hide a race in the code under
// test.
func asyncOff(c change) []Finding {
	if !c.test {
		return nil
	}
	var out []Finding
	var at map[int]int // an added line's place in c.all, read once when needed
	sharedUsed := sync.OnceValue(c.sharedUsed)
	for _, b := range c.blocks {
		wasAsync := false
		for _, l := range b.removed {
			wasAsync = wasAsync || asyncTrue.MatchString(l.code)
		}
		for _, l := range b.added {
			line := l.code
			off := (asyncFalse.MatchString(line) && c.file.OldPath != "") || wasAsync && useCase.MatchString(line) && !asyncTrue.MatchString(line)
			if !off {
				continue
			}
			if len(c.touched) > 0 {
				out = append(out, c.finding("async-disabled", Note, l, "the module now runs alone; it touches "+strings.Join(c.touched, ", ")+", which tests running at the same time would share"))
			} else if len(c.diff.supportTouched) > 0 {
				out = append(out, c.finding("async-disabled", Note, l, "the module now runs alone; the test support this diff changes now uses "+strings.Join(c.diff.supportTouched, ", ")+", which tests running at the same time would share"))
			} else if used := sharedUsed(); used != "" {
				out = append(out, c.finding("async-disabled", Note, l, "the module now runs alone; it uses modules the diff changes that touch global state: "+used))
			} else if why := c.sharedReason(l, &at); why != "" {
				out = append(out, c.finding("async-disabled", Note, l, "the module now runs alone; its comment names what it shares ("+why+"), which the diff does not show: check it"))
			} else if c.after == nil || c.after.fragment {
				out = append(out, c.finding("async-disabled", Note, l, "the module now runs alone; the file was not read whole, so whether it touches global state (what running alone protects) was not checked"))
			} else {
				out = append(out, c.finding("async-disabled", Concern, l, "the module now runs alone, but the file touches no global state: running serially may only hide a race in the code under test"))
			}
		}
	}
	return out
}

// sharedWords, in a comment on or just above a use line, say what the
// module shares with others.
var sharedWords = regexp.MustCompile(`(?i)\b(global|shared?|singleton|concurrent\w*|in parallel|at the same time|one at a time|serial\w*|File\.cd)\b`)

// sharedReason is the comment right above the line l when it names what
// the module shares; "" when none does. Only a comment the diff did not
// add counts: a fix cannot excuse itself.
func (c change) sharedReason(l Line, places *map[int]int) string {
	var comment []string
	if *places == nil {
		*places = map[int]int{}
		for i, a := range c.all {
			if a.Kind == '+' {
				(*places)[a.New] = i
			}
		}
	}
	at, found := (*places)[l.New]
	if !found {
		return ""
	}
	for i := at - 1; i >= 0 && i >= at-6; i-- {
		t := strings.TrimSpace(c.all[i].Text)
		if c.all[i].Kind == '-' {
			continue
		}
		if c.all[i].Kind != ' ' || !strings.HasPrefix(t, "#") {
			break
		}
		comment = append([]string{strings.TrimSpace(strings.TrimPrefix(t, "#"))}, comment...)
	}
	if why := strings.Join(comment, " "); sharedWords.MatchString(why) {
		return squashSpace(why)
	}
	return ""
}

// maxHeadReads bounds the files HeadReads asks for: one API call each.
const maxHeadReads = 5

// HeadReads lists the files whose content at the pull request's head
// would change a review of d (CheckWithHead): test modules made to run
// alone whose hunks show no global state, which may sit elsewhere in the
// file, and the test_helper.exs of a test file given a tag, which says
// whether the suite runs what the tag marks.
func HeadReads(d Diff, job Job) []string {
	if job != JobFlaky || d.TooLarge {
		return nil
	}
	var out []string
	for _, f := range d.Files {
		if f.Binary || f.Deleted() || !elixirFile(f.Path()) || len(out) == maxHeadReads {
			continue
		}
		c := newFileChange(f, wholeDocs{})
		if len(c.touched) == 0 && len(asyncOff(c)) > 0 {
			out = append(out, f.Path()) // what it touches is in the file, not the diff
		}
		// A tag added: whether the suite excludes it is in test_helper.exs.
		if h := suiteHelper(f.Path()); h != "" && strings.HasSuffix(f.Path(), "_test.exs") && !slices.Contains(out, h) && len(out) < maxHeadReads && addsTag(c) {
			out = append(out, h)
		}
	}
	return out
}

// maxFileReads bounds the files FileReads asks for, each side counted:
// one API call each.
const maxFileReads = 16

// FileRead is a changed file to read whole on one side of the change: at
// the base (Base) or at the head.
type FileRead struct {
	Path string
	Base bool
}

// FileReads lists the files whose content on either side would sharpen
// a review of d (CheckFiles): first those HeadReads names, then each
// changed Elixir file at the base and at the head, up to maxFileReads.
func FileReads(d Diff, job Job) []FileRead {
	if d.TooLarge {
		return nil
	}
	var out []FileRead
	for _, p := range HeadReads(d, job) {
		out = append(out, FileRead{Path: p})
	}
	for _, f := range d.Files {
		// A CI file is read at head: what job a changed line belongs to
		// may be far above the hunk (ciRetries).
		if !f.Binary && f.NewPath != "" && ciFile(f, "") && !elixirFile(f.NewPath) && len(out) < maxFileReads {
			out = append(out, FileRead{Path: f.NewPath})
		}
		if f.Binary || !elixirFile(f.Path()) {
			continue
		}
		if f.OldPath != "" && len(out) < maxFileReads {
			out = append(out, FileRead{Path: f.OldPath, Base: true})
		}
		if f.NewPath != "" && !slices.Contains(out, FileRead{Path: f.NewPath}) && len(out) < maxFileReads {
			out = append(out, FileRead{Path: f.NewPath})
		}
	}
	return out
}

// supportTouches is the global state the lines the diff adds to test
// support code (not a test module) use.
func supportTouches(changes []*change) []string {
	var added []Line
	for _, c := range changes {
		if c.test && strings.Contains(c.path, "test/support/") {
			added = append(added, c.added()...)
		}
	}
	return touches(added)
}

// sharedModules are the test support and library modules the diff
// changes, read whole, by name, with the global state each touches
// anywhere in it (a process started under its module's name, a named
// ETS table): a module made to run alone that uses one shares what it
// touches.
func sharedModules(changes []*change) map[string][]string {
	out := map[string][]string{}
	for _, c := range changes {
		if !strings.Contains(c.path, "test/support/") && !strings.HasPrefix(c.path, "lib/") && !strings.Contains(c.path, "/lib/") || c.head == nil {
			continue
		}
		touched := touches(c.head) // at head: what a removed line touched is no longer shared
		if len(touched) == 0 {
			continue
		}
		for _, l := range c.head {
			if m := moduleDef.FindStringSubmatch(l.code); m != nil {
				out[m[1]] = touched
			}
		}
	}
	return out
}

var moduleDef = regexp.MustCompile(`^\s*defmodule\s+([A-Z][\w.]*)\s+do\b`)

// sharedUsed is the global state of the modules (sharedModules) this
// module names, "" for none.
func (c change) sharedUsed() string {
	if len(c.diff.sharedModules) == 0 {
		return ""
	}
	names := map[string]bool{} // the module names the file writes
	for _, l := range c.head {
		eachAtom(l.code, func(a string) {
			for i := range a { // App.Helpers.call() names App.Helpers too
				if a[i] == '.' {
					names[a[:i]] = true
				}
			}
			names[a] = true
		})
	}
	var what []string
	for name, touched := range c.diff.sharedModules {
		if names[name] {
			what = append(what, name+" ("+strings.Join(touched, ", ")+")")
		}
	}
	slices.Sort(what)
	return strings.Join(what, "; ")
}

// tmpDirTag gives tests a directory of their own (ExUnit's :tmp_dir).
var tmpDirTag = regexp.MustCompile(`@(module|describe)?tag\b.*(:tmp_dir\b|\btmp_dir:\s*(true|"))`)

// touches lists the global state lines touch. Files written where a
// test's tmp_dir tag points are its own: the file system is not counted
// for a module that tags its tests so.
func touches(lines []Line) []string {
	perTestDirs := slices.ContainsFunc(lines, func(l Line) bool { return tmpDirTag.MatchString(l.code) })
	var what []string
	for _, g := range globalState {
		for i, l := range lines {
			text := l.code
			if g.inText {
				text = l.Text
			}
			if strings.Contains(text, g.hint) && g.pattern.MatchString(text) && !slices.Contains(what, g.what) && !(perTestDirs && g.what == "the file system") && (g.hint != "name:" || startsNear(lines, i)) {
				what = append(what, g.what)
				break
			}
		}
	}
	return what
}

// startsNear reports whether line i, or one of the three before it,
// starts a process: a name: there names it, where elsewhere it is a
// struct's field (%State{name: :elem}).
func startsNear(lines []Line, i int) bool {
	for j := max(0, i-3); j <= i; j++ {
		if processStart.MatchString(lines[j].code) {
			return true
		}
	}
	return false
}

var processStart = regexp.MustCompile(`\b(start_link|start_supervised!?|start_child|child_spec)\b|\bstart\(|\{\s*[A-Z][\w.]*\s*,`)
