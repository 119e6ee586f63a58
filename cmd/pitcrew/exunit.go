package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/pitcrew/pitcrew/exunit"
)

// exunitCommand implements `pitcrew exunit [FILE]`: it prints, as JSON,
// what the ExUnit log parser reads in a log (standard input without FILE),
// so users can see why a CI log was or was not taken as a flake.
func exunitCommand(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	in := stdin
	switch {
	case len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help"):
		fmt.Fprint(stdout, exunitUsage)
		return 0
	case len(args) == 0:
	case len(args) == 1:
		f, err := os.Open(args[0])
		if err != nil {
			fmt.Fprintln(stderr, "pitcrew exunit:", err)
			return 1
		}
		defer f.Close()
		in = f
	default:
		fmt.Fprint(stderr, exunitUsage)
		return 2
	}
	rep, err := exunit.ParseLog(in)
	if err != nil {
		fmt.Fprintln(stderr, "pitcrew exunit: reading the log:", err)
		return 1
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return 1
	}
	if len(rep.Runs) == 0 && len(rep.Failures) == 0 {
		fmt.Fprintln(stderr, "pitcrew exunit: the log holds no ExUnit output (no test run, failure or compilation error)")
		return 1
	}
	return 0
}

const exunitUsage = `usage: pitcrew exunit [FILE]

Reads a mix test output or a CI job's log (FILE, or standard input) the way
pitcrew reads CI logs, and prints as JSON what it found: each mix test run
(seed, counts, the step that ran it) and each failure (file:line, test,
module, parameters, first message lines). Any Elixir from 1.14 to 1.20:
a run's "format" says which summary it printed ("1.14", "1.19", "1.20"); a
1.20 summary gives "passed" of "total", "by_type" and the failed, skipped,
excluded and invalid counts; a --repeat-until-failure run its
"remaining_runs" and "repetition". Exits 1 when the log holds no ExUnit
output.
`
