package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/pitcrew/pitcrew/evidence"
)

// reviewCommand implements `pitcrew review [--job flaky|alert] FILE|-`: it
// reads a unified diff and prints, as JSON, what the job's rules found.
// It exits 0 whatever the verdict; 1 when the input cannot be read or is
// not a diff, 2 for a usage error.
func reviewCommand(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("review", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	job := fs.String("job", "flaky", "the rules to apply: flaky or alert")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprint(stdout, reviewUsage)
			return 0
		}
		fmt.Fprint(stderr, reviewUsage)
		return 2
	}
	if (*job != string(evidence.JobFlaky) && *job != string(evidence.JobAlert)) || fs.NArg() != 1 {
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
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(evidence.Check(d, evidence.Job(*job))); err != nil {
		return 1
	}
	return 0
}

const reviewUsage = `usage: pitcrew review [--job flaky|alert] FILE|-

Reads a unified diff (as git show or git diff prints it; - for standard
input) and prints as JSON what a reviewer of the job's fixes would look at
first: {"verdict": "concern"|"note"|"clean", "findings": [{"rule",
"severity", "file", "line", "text", "why"}]}. --job flaky (the default)
looks for disguised waits and retries, skips, exclusions, deleted or
weakened tests and async: false; --job alert for loosened plugs,
pipelines, authorization, ownership and billing checks, changed defaults
and deleted tests. It exits 0 whatever the verdict, 1 when the input is
not a diff.
`
