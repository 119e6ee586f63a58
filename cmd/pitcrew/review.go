package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pitcrew/pitcrew/evidence"
)

// reviewCommand implements `pitcrew review [--job flaky|alert] [--head
// DIR] FILE|-`: it
// reads a unified diff and prints, as JSON, what the job's rules found.
// It exits 0 whatever the verdict; 1 when the input cannot be read or is
// not a diff, 2 for a usage error.
func reviewCommand(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("review", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	job := fs.String("job", "flaky", "the rules to apply: flaky or alert")
	head := fs.String("head", "", "a checkout of the change's head, for the files the diff alone cannot settle")
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
	files := map[string]string{}
	if *head != "" {
		for _, path := range evidence.HeadReads(d, evidence.Job(*job)) {
			if b, err := os.ReadFile(filepath.Join(*head, filepath.FromSlash(path))); err == nil {
				files[path] = string(b)
			}
		}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(evidence.CheckWithHead(d, evidence.Job(*job), files)); err != nil {
		return 1
	}
	return 0
}

const reviewUsage = `usage: pitcrew review [--job flaky|alert] [--head DIR] FILE|-

Reads a unified diff (as git show or git diff prints it; - for standard
input) and prints as JSON what a reviewer of the job's fixes would look at
first: {"verdict": "concern"|"note"|"clean", "findings": [{"rule",
"severity", "file", "line", "text", "why"}]}. --job flaky (the default)
looks for disguised waits and retries, skips, exclusions, deleted or
weakened tests and async: false; --job alert for loosened plugs,
pipelines, authorization, ownership and billing checks, changed defaults
and deleted tests. --head DIR reads, from a checkout of the change's head,
the few files whose hunks alone cannot settle a rule (a test module made
to run alone: the global state it touches may sit outside the hunks), as
pitcrew reads them from GitHub. It exits 0 whatever the verdict, 1 when
the input is not a diff.
`
