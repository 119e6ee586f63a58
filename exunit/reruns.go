package exunit

import (
	"path"
	"slices"
	"strings"
)

// A test counts as flaky only when a later run actually ran it and it
// passed; this file reads, from a run's `mix test` command line, what that
// run ran. GitHub Actions logs show the command (the step's script); logs
// without it are read as the whole suite.

// command is what one `mix test` command line selects.
type command struct {
	known  bool     // the log showed the command
	failed bool     // --failed: the tests that failed in the previous run
	narrow bool     // a selection pitcrew cannot resolve (--only, --stale, partitions, a test filter)
	paths  []string // explicit test paths, relative to the step's directory; none: the whole suite
	dir    string   // the directory the step changed to (cd DIR && ...)
	app    string   // the umbrella app whose section printed the run
}

// command reads the `mix test` command line that printed run: the
// StepRun-th `mix test` of its step's script (the last one when the
// script has fewer, as an umbrella prints a run per app).
func (r Run) command() command {
	var cmds []string
	dir, viaXargs := "", false
	for _, seg := range splitScript(r.Step) {
		f := strings.Fields(seg)
		if len(f) >= 2 && f[0] == "cd" && len(cmds) == 0 {
			dir = path.Clean(f[1])
		}
		if i := mixTest(f); i >= 0 {
			cmds = append(cmds, strings.Join(f[i+2:], " "))
			viaXargs = viaXargs || slices.Contains(f[:i], "xargs")
		}
	}
	if len(cmds) == 0 {
		return command{}
	}
	c := command{known: true, dir: dir, app: r.App}
	if viaXargs || (r.App != "" && len(cmds) > 1) {
		// Paths from standard input; or an umbrella, whose runs (one per
		// app) cannot be matched to the step's several commands.
		c.narrow = true
	}
	args := strings.Fields(cmds[min(r.StepRun, len(cmds)-1)])
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == ">" || a == ">>" || a == "<" || a == "2>" || a == "&>" || a == "2>>":
			i++ // a redirection's file
		case strings.HasPrefix(a, ">") || strings.HasPrefix(a, "<") || strings.HasPrefix(a, "2>") || strings.HasPrefix(a, "&>"):
		case strings.ContainsAny(a, "$`"):
			c.narrow = true // paths pitcrew cannot see: a variable or a command's output
		case a == "--failed":
			c.failed = true
		case a == "--only" || a == "--stale" || a == "--partitions" || a == "--exclude" || strings.HasPrefix(a, "--only=") || strings.HasPrefix(a, "--exclude="):
			c.narrow = true
			i += valuesOf(a)
		case valueFlags[a]:
			i++
		case strings.HasPrefix(a, "-"), strings.ContainsAny(a, "<>|&"):
		default:
			file, _, _ := strings.Cut(a, ":") // test/x_test.exs:12 runs one test of the file
			if strings.Contains(a, ":") {
				c.narrow = true
			}
			c.paths = append(c.paths, path.Clean(file))
		}
	}
	return c
}

// valueFlags are `mix test` options followed by a value that is not a path.
var valueFlags = map[string]bool{"--seed": true, "--max-cases": true, "--max-failures": true, "--include": true,
	"--formatter": true, "--slowest": true, "--timeout": true, "--repeat-until-failure": true}

// valuesOf is how many words after a narrowing flag are its value.
func valuesOf(a string) int {
	if a == "--stale" || strings.Contains(a, "=") {
		return 0
	}
	return 1 // --only TAG, --exclude TAG, --partitions N
}

// splitScript cuts a step's script into simple commands.
func splitScript(s string) []string {
	return strings.FieldsFunc(strings.NewReplacer("&&", "\n", "||", "\n", ";", "\n", "|", "\n").Replace(s), func(r rune) bool { return r == '\n' })
}

// mixTest finds "mix test" (or "mix coveralls...", which runs the suite the
// same way) in a simple command's words.
func mixTest(f []string) int {
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "mix" && (f[i+1] == "test" || strings.HasPrefix(f[i+1], "coveralls")) {
			return i
		}
	}
	return -1
}

// ranFile reports whether a run with this command ran the tests of file
// (a path from the repository's root), given whether it is a rerun of the
// failures of an earlier run that included the file.
func (c command) ranFile(file string, rerunOfFailure bool) bool {
	switch {
	case c.app != "" && !strings.HasPrefix(file, "apps/"+c.app+"/"):
		return false // another umbrella app's run
	case !c.known:
		return true // a log without the command: the whole suite, as a bare mix test
	case c.failed:
		return rerunOfFailure
	case c.narrow:
		return false
	case len(c.paths) == 0:
		return true
	}
	for _, p := range c.paths {
		if c.dir != "" && c.dir != "." {
			p = path.Join(c.dir, p)
		}
		if file == p || strings.HasPrefix(file, strings.TrimSuffix(p, "/")+"/") {
			return true
		}
	}
	return false
}

// completed reports whether a run is one whose result can clear a test:
// it compiled, printed its counts, and did not fail in most of its tests.
func (r Run) completed() bool {
	return r.Summary && !r.CompileError && r.ran() > 0 && !r.mostlyFailed()
}

// Passed reports whether the log shows the test run and passing: a run
// that completed, whose command included the test's file, and that did
// not fail it. why says what was missing when it did not.
func (r Report) Passed(ref TestRef) (ok bool, why string) {
	why = "the passing attempt's log shows no completed test run"
	for i, run := range r.Runs {
		if !run.completed() {
			continue
		}
		if !run.command().ranFile(ref.Path, r.failedBefore(ref, i)) {
			why = "the passing attempt's test command did not include " + ref.Path
			continue
		}
		if !r.failedIn(ref, i) {
			return true, ""
		}
		why = "the test failed in the passing attempt too"
	}
	return false, why
}

// RetriedFlakes returns the failures that a later run in the same log
// reran and passed: `mix test || mix test --failed`, or a later step that
// runs the tests again, made the job pass after the test failed.
func (r Report) RetriedFlakes() []Failure {
	var out []Failure
	for _, f := range r.Flaky() {
		ref, _ := f.Ref()
		for j := f.Invocation + 1; j < len(r.Runs); j++ {
			run := r.Runs[j]
			if run.completed() && run.command().ranFile(ref.Path, true) && !r.failedIn(ref, j) {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// failedBefore reports whether the test failed in a run before run.
func (r Report) failedBefore(ref TestRef, run int) bool {
	for i := 0; i < run; i++ {
		if r.failedIn(ref, i) {
			return true
		}
	}
	return false
}

func (r Report) failedIn(ref TestRef, run int) bool {
	for _, f := range r.Failures {
		if got, ok := f.Ref(); ok && f.Invocation == run && got == ref {
			return true
		}
	}
	return false
}
