package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/internal/github"
)

// Bounds on what `pitcrew siblings` reads of a checkout.
const (
	maxSiblingFiles = 5000
	maxSiblingBytes = 64 << 20
)

// siblingsCommand implements `pitcrew siblings --fix FILE.patch DIR`: it
// reads the cause a fix addressed from its diff and prints, as JSON, the
// tests of the checkout DIR that share it.
func siblingsCommand(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("siblings", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.Usage = func() {}
	fix := flags.String("fix", "", "the fix, as a unified diff (git show prints one)")
	if err := flags.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprint(stdout, siblingsUsage)
			return 0
		}
		fmt.Fprint(stderr, siblingsUsage)
		return 2
	}
	if *fix == "" || flags.NArg() != 1 {
		fmt.Fprint(stderr, siblingsUsage)
		return 2
	}
	f, err := os.Open(*fix)
	if err != nil {
		fmt.Fprintln(stderr, "pitcrew siblings:", err)
		return 1
	}
	d, err := evidence.ParseDiff(f)
	f.Close()
	if err != nil {
		fmt.Fprintln(stderr, "pitcrew siblings:", err)
		return 1
	}
	files, scanned, err := testModules(flags.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, "pitcrew siblings:", err)
		return 1
	}
	var changed []string
	for _, f := range d.Files {
		changed = append(changed, f.Path())
	}
	// A module the fix made run alone is read whole for the global state
	// it touches: the checkout holds it as it is now, which is what it
	// touched before unless the fix removed that too.
	cause := evidence.CauseOf(d, files)
	found, more := evidence.FindSiblings(cause, files, changed)
	out := struct {
		Cause    evidence.Cause     `json:"cause"`
		Siblings []evidence.Sibling `json:"siblings"`
		More     int                `json:"more"`
		Scanned  int                `json:"scanned"`
	}{cause, found, more, scanned}
	if out.Siblings == nil {
		out.Siblings = []evidence.Sibling{}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return 1
	}
	return 0
}

// testModules reads the test modules (*_test.exs) under dir: regular
// files only (no symbolic link is followed), each at most
// github.MaxFileAt, at most maxSiblingFiles and maxSiblingBytes in all.
// Paths are slash-separated and relative to dir, as in a diff.
func testModules(dir string) (map[string]string, int, error) {
	files := map[string]string{}
	total := 0
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := e.Name()
		if e.IsDir() && (strings.HasPrefix(name, ".") && path != dir || name == "_build" || name == "deps" || name == "node_modules") {
			return filepath.SkipDir
		}
		if !e.Type().IsRegular() || !strings.HasSuffix(name, "_test.exs") || len(files) >= maxSiblingFiles {
			return nil
		}
		info, err := e.Info()
		if err != nil || info.Size() > github.MaxFileAt || total+int(info.Size()) > maxSiblingBytes {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = string(b)
		total += len(b)
		return nil
	})
	return files, len(files), err
}

const siblingsUsage = `usage: pitcrew siblings --fix FILE.patch DIR

Reads the cause a flaky-test fix addressed from its diff (as git show
prints it): the global state its tests shared (an Application env key, a
Mox mock in global mode, a named ETS table, a :persistent_term key), a
sleep standing in for an event, the wall clock read in a test. Then reads
every test module (*_test.exs) of the checkout DIR as code and prints, as
JSON, the tests that share it, ranked: 1 the same state written in
another async module, 2 read from an async module, 3 the same wait or
time shape; at most 20, "more" counts the rest. {"cause", "siblings":
[{"file", "line", "test", "rank", "why"}], "more", "scanned"}. Only
regular files are read (no symbolic link is followed, _build and deps are
skipped), each of at most 1 MiB, 5,000 files and 64 MiB in all. It exits
0 whatever it finds, 1 when the diff or DIR cannot be read.
`
