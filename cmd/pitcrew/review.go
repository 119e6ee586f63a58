package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/internal/github"
)

// reviewCommand implements `pitcrew review [--job flaky|alert] [--base
// DIR] [--head DIR] FILE|-`: it reads a unified diff and prints, as JSON,
// what the job's rules found.
// It exits 0 whatever the verdict; 1 when the input cannot be read or is
// not a diff, 2 for a usage error.
func reviewCommand(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("review", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	job := fs.String("job", "flaky", "the rules to apply: flaky or alert")
	head := fs.String("head", "", "a checkout of the change's head: its changed Elixir files are read whole, as code")
	base := fs.String("base", "", "a checkout of the change's base: the same, for the other side")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprint(stdout, reviewUsage)
			return 0
		}
		fmt.Fprint(stderr, reviewUsage)
		return 2
	}
	if *job != string(evidence.JobFlaky) && *job != string(evidence.JobAlert) {
		fmt.Fprintf(stderr, "pitcrew review: unknown job %q (%s or %s)\n\n%s", *job, evidence.JobFlaky, evidence.JobAlert, reviewUsage)
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprint(stderr, reviewUsage)
		return 2
	}
	in := stdin
	if name := fs.Arg(0); name != "-" {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(stderr, "pitcrew review:", err)
			return 1
		}
		defer f.Close()
		in = f
	}
	d, err := evidence.ParseDiff(in)
	if err != nil {
		fmt.Fprintln(stderr, "pitcrew review:", err)
		return 1
	}
	sides := map[bool]map[string]string{}
	for isBase, dir := range map[bool]string{false: *head, true: *base} {
		if dir == "" {
			continue
		}
		var paths []string
		for _, f := range evidence.FileReads(d, evidence.Job(*job)) {
			if f.Base == isBase {
				paths = append(paths, f.Path)
			}
		}
		if sides[isBase], err = readHead(dir, paths, stderr); err != nil {
			fmt.Fprintf(stderr, "pitcrew review: --%s: %v\n", map[bool]string{false: "head", true: "base"}[isBase], err)
			return 1
		}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(evidence.CheckFiles(d, evidence.Job(*job), sides[true], sides[false])); err != nil {
		return 1
	}
	return 0
}

const reviewUsage = `usage: pitcrew review [--job flaky|alert] [--base DIR] [--head DIR] FILE|-

Reads a unified diff (as git show or git diff prints it; - for standard
input) and prints as JSON what a reviewer of the job's fixes would look at
first: {"verdict": "concern"|"note"|"clean", "findings": [{"rule",
"severity", "file", "line", "text", "why", "construct"}]}. --job flaky
(the default) looks for disguised waits and retries, skips, exclusions,
deleted or weakened tests and async: false; --job alert for loosened
plugs, pipelines, authorization, ownership and billing checks, changed
defaults and roles, and deleted tests. Elixir is read as code (tests by
describe and name, calls with their arguments, functions clause by
clause): --base DIR and --head DIR read the changed files whole from
checkouts of the change's two sides, as pitcrew reads them from GitHub
(only regular files inside DIR, symbolic links resolved, of at most
1 MiB; of any other it says why on standard error); without them, or for
a file they do not hold, the review reads what the hunks show. It exits 0
whatever the verdict, 1 when the input is not a diff or a DIR cannot be
opened.
`

// readHead reads paths (a diff's, slash-separated) from the checkout dir,
// confined to it: a path that leads outside dir, through ".." or a
// symbolic link, one that is not a regular file and one larger than the
// app reads at a pull request's head (github.MaxFileAt) is not read, and
// stderr says why, once per path.
func readHead(dir string, paths []string, stderr io.Writer) (map[string]string, error) {
	top, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(top)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	files := map[string]string{}
	refused := map[string]bool{}
	for _, path := range paths {
		if _, done := files[path]; done || refused[path] {
			continue
		}
		content, why := headFile(root, top, path)
		if why != "" {
			refused[path] = true
			fmt.Fprintf(stderr, "pitcrew review: not reading %s: %s\n", printable(path), why)
			continue
		}
		files[path] = content
	}
	return files, nil
}

// headFile reads path from root, opened on top (the checkout with its
// symbolic links resolved); why says what refused it ("" when read).
func headFile(root *os.Root, top, path string) (content, why string) {
	name := filepath.FromSlash(path)
	if !filepath.IsLocal(name) {
		return "", "outside --head"
	}
	// The resolved path names the refusal; root enforces it when the file
	// is opened, even if a link changed in between.
	if resolved, err := filepath.EvalSymlinks(filepath.Join(top, name)); err == nil {
		if rel, err := filepath.Rel(top, resolved); err != nil || !filepath.IsLocal(rel) {
			return "", "outside --head"
		}
	}
	// O_NONBLOCK: opening a FIFO to read would otherwise wait for a writer.
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "not in --head"
	}
	if err != nil {
		return "", printable(err.Error())
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", printable(err.Error())
	}
	if !info.Mode().IsRegular() {
		return "", "not a regular file"
	}
	tooLarge := fmt.Sprintf("larger than %d bytes", github.MaxFileAt)
	if info.Size() > github.MaxFileAt {
		return "", tooLarge
	}
	b, err := io.ReadAll(io.LimitReader(f, github.MaxFileAt+1))
	if err != nil {
		return "", err.Error()
	}
	if len(b) > github.MaxFileAt { // it grew since Stat
		return "", tooLarge
	}
	return string(b), ""
}

// printable is s as the terminal may show it: quoted when it holds a
// character that is not printable (an escape sequence, say).
func printable(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 || !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	return s
}
