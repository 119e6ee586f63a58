package evidence

import (
	"regexp"
	"slices"
	"strings"
)

// The flaky rule about running a test module alone (async: false), and
// the global state that would explain it.

var (
	asyncFalse = regexp.MustCompile(`^\s*use\s+[\w.]+,.*\basync:\s*false\b`)
	asyncTrue  = regexp.MustCompile(`^\s*use\s+[\w.]+,.*\basync:\s*true\b`)
	useCase    = regexp.MustCompile(`^\s*use\s+[\w.]*(Case|Test)\b`)
	// globalState is what makes tests of one module interfere with others
	// running at the same time.
	globalState = []struct {
		pattern *regexp.Regexp
		what    string
		hint    string // in every line the pattern matches, to skip the others cheaply
	}{
		{regexp.MustCompile(`\bApplication\.(put_env|delete_env|put_all_env)\b`), "Application.put_env", "Application."},
		{regexp.MustCompile(`\bSystem\.(put_env|delete_env)\b`), "System.put_env", "System."},
		{regexp.MustCompile(`\b(Mox\.)?set_mox_global\b`), "Mox.set_mox_global", "set_mox_global"},
		{regexp.MustCompile(`:named_table\b`), "a named ETS table", ":named_table"},
		{regexp.MustCompile(`:persistent_term\.(put|erase)\b`), ":persistent_term", ":persistent_term"},
		{regexp.MustCompile(`\bProcess\.register\b`), "a named process", "Process.register"},
		{regexp.MustCompile(`\bname:\s*(__MODULE__|[A-Z][\w.]*|:\w+|\{:global|\{:via)`), "a named process", "name:"},
		{regexp.MustCompile(`:sys\.(replace_state|suspend|resume)\(\s*([A-Z][\w.]*|:\w+)`), "a named process's state", ":sys."},
		{regexp.MustCompile(`:ets\.\w+\(\s*:\w+`), "a named ETS table", ":ets."},
		{regexp.MustCompile(`:telemetry\.attach(_many)?\b`), "a telemetry handler", ":telemetry."},
		{regexp.MustCompile(`\bmock_global\b|\bMox\.set_mox_from_context\b`), "a global mock", "mo"},
		{regexp.MustCompile(`\bPubSub\.(subscribe|broadcast)\([^,]+,\s*"`), "a fixed PubSub topic", "PubSub."},
		{regexp.MustCompile(`\bLogger\.(configure|put_module_level|add_backend)\b`), "the Logger configuration", "Logger."},
		{regexp.MustCompile(`\bcapture_log\b`), "the Logger configuration", "capture_log"},
		{regexp.MustCompile(`\b:global\.register_name\b`), "a globally registered name", ":global."},
		{regexp.MustCompile(`\bEcto\.Adapters\.SQL\.Sandbox\.mode\([^,]+,\s*\{:shared`), "the shared SQL sandbox mode", "Sandbox.mode"},
		{regexp.MustCompile(`\bFile\.(write|rm|mkdir)`), "the file system", "File."},
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
			} else {
				out = append(out, c.finding("async-disabled", Concern, l, "the module now runs alone, but the diff shows it touching no global state: running serially may only hide a race in the code under test"))
			}
		}
	}
	return out
}

// maxHeadReads bounds the files HeadReads asks for: one API call each.
const maxHeadReads = 5

// HeadReads lists the files whose content at the pull request's head
// would change a review of d (CheckWithHead): test modules made to run
// alone whose hunks show no global state, which may sit elsewhere in the
// file.
func HeadReads(d Diff, job Job) []string {
	if job != JobFlaky || d.TooLarge {
		return nil
	}
	var out []string
	for _, f := range d.Files {
		if f.Binary || f.Deleted() || !elixirFile(f.Path()) || len(out) == maxHeadReads {
			continue
		}
		c := newFileChange(f)
		for _, finding := range asyncOff(c) {
			if finding.Severity == Concern {
				out = append(out, f.Path())
				break
			}
		}
	}
	return out
}

// touches lists the global state lines touch.
func touches(lines []Line) []string {
	var what []string
	for _, g := range globalState {
		for _, l := range lines {
			if strings.Contains(l.code, g.hint) && g.pattern.MatchString(l.code) && !slices.Contains(what, g.what) {
				what = append(what, g.what)
				break
			}
		}
	}
	return what
}
