package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/pitcrew/pitcrew/app"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
)

// maxConfigFile bounds what check-config reads; GitHub's contents API,
// which the app reads the file through, serves no more than 1 MB inline.
const maxConfigFile = 1 << 20

// checkConfigCommand implements `pitcrew check-config [FILE|-]`: it reads
// a configuration file with the rules the app applies to the one it reads
// from GitHub, and prints the settings that apply (exit 0) or every
// problem in the file's own words (exit 1).
func checkConfigCommand(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	name := repoconfig.Path
	switch {
	case len(args) == 1 && isHelp(args[0]):
		fmt.Fprint(stdout, checkConfigUsage)
		return 0
	case len(args) > 1 || len(args) == 1 && len(args[0]) > 1 && args[0][0] == '-':
		fmt.Fprint(stderr, checkConfigUsage)
		return 2
	case len(args) == 1:
		name = args[0]
	}
	in, shown := stdin, "standard input"
	if name != "-" {
		f, err := os.Open(name)
		if errors.Is(err, os.ErrNotExist) && len(args) == 0 {
			fmt.Fprintf(stderr, "pitcrew check-config: there is no %s here; run it at the top of a checkout, or name the file (pitcrew check-config FILE)\n", repoconfig.Path)
			return 1
		}
		if err != nil {
			fmt.Fprintln(stderr, "pitcrew check-config:", err)
			return 1
		}
		defer f.Close()
		in, shown = f, name
	}
	content, err := io.ReadAll(io.LimitReader(in, maxConfigFile+1))
	if err != nil {
		fmt.Fprintf(stderr, "pitcrew check-config: reading %s: %v\n", shown, err)
		return 1
	}
	if len(content) > maxConfigFile {
		fmt.Fprintf(stderr, "pitcrew check-config: %s is larger than 1 MB, more than pitcrew reads\n", shown)
		return 1
	}
	schema := app.ConfigSchema()
	cfg, err := schema.Parse(content)
	var problems repoconfig.Problems
	if errors.As(err, &problems) {
		fmt.Fprintf(stdout, "%s: %d %s\n", shown, len(problems), plural(len(problems), "problem", "problems"))
		for _, p := range problems {
			fmt.Fprintln(stdout, p)
		}
		return 1
	}
	if err != nil {
		fmt.Fprintf(stdout, "%s: %v\n", shown, err)
		return 1
	}
	settings, err := schema.YAML(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "pitcrew check-config:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: ok; the settings that apply, defaults included:\n\n%s", shown, settings)
	return 0
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

const checkConfigUsage = `usage: pitcrew check-config [FILE|-]

Checks a pitcrew configuration file offline, with the rules pitcrew applies
to the one it reads from GitHub: FILE, standard input for -, or, without
an argument, .github/pitcrew.yml in the current directory. Prints the
settings that apply (every key, defaults included) and exits 0 when the
file is valid; prints each problem with its line, its key and what the key
allows, and exits 1, when it is not. Exits 2 for a usage error.
`
