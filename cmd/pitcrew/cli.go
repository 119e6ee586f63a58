package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/pitcrew/pitcrew/work/follow"
)

// subcommand is one of pitcrew's commands besides serving webhooks.
type subcommand struct {
	name, args, what string
	run              func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
	ownHelp          bool // run answers --help itself, at more length
}

// subcommands are listed by `pitcrew help` in this order.
var subcommands = []subcommand{
	{"replay", "--event TYPE --file PAYLOAD.json [--dry-run] [--config FILE]", "runs a captured delivery through its handler and prints what it did (or would do)",
		func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
			return replayCommand(args, stdout, stderr)
		}, false},
	{"check-config", "[FILE|-]", "checks a .github/pitcrew.yml offline, as pitcrew reads it, and prints the settings that apply or each problem", checkConfigCommand, true},
	{"runs", "[-config FILE] list | show RUN_ID | retry RUN_ID", "lists, shows or retries the runs in the ledger of REDIS_URL (or of the embedded Redis of a pitcrew running here)",
		func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
			return runsCommand(args, stdout, stderr)
		}, false},
	{"exunit", "[FILE]", "reads a mix test output or CI log as pitcrew does and prints what it found, as JSON", exunitCommand, true},
	{"review", "[--job flaky|alert] [--base DIR] [--head DIR] FILE|-", "checks a unified diff with a job's reviewer rules and prints the findings, as JSON", reviewCommand, true},
	{"siblings", "--fix FILE.patch DIR", "prints the tests of a checkout that share the cause a fix addressed, as JSON", siblingsCommand, true},
	{"ci-workflow", "", "prints the workflow a repository adds as .github/workflows/pitcrew-verify.yml to verify fixes in its own CI (flaky.verify: ci)",
		func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
			if len(args) > 0 {
				fmt.Fprintln(stderr, "usage: pitcrew ci-workflow > .github/workflows/"+follow.CIWorkflowFile)
				return 2
			}
			fmt.Fprint(stdout, follow.CIWorkflow)
			return 0
		}, false},
	{"demo", "[--serve]", "plays every story against built-in fakes of GitHub and the sandbox and shows what GitHub would show",
		func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
			return demoCommand(args, stdout, stderr)
		}, false},
	{"healthcheck", "[-config FILE]", "exits 0 when the pitcrew on PITCREW_ADDR answers /healthz (the container's probe)", healthcheckCommand, false},
}

func isHelp(arg string) bool {
	switch arg {
	case "help", "-h", "-help", "--help":
		return true
	}
	return false
}

// usage lists how to serve and every subcommand.
func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: pitcrew [-config FILE]        serve webhooks (setup pages when no GitHub App is configured)")
	fmt.Fprintln(w, "       pitcrew SUBCOMMAND [ARGS]")
	fmt.Fprintln(w, "\nsubcommands:")
	for _, s := range subcommands {
		fmt.Fprintf(w, "  %-12s %s\n", s.name, s.what)
	}
	fmt.Fprintln(w, "  help         prints this; pitcrew SUBCOMMAND --help says more of one")
}

// dispatch runs the subcommand args name and returns its exit code; serve
// is true when args ask for the server instead (none, or its flags).
func dispatch(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int, serve bool) {
	switch {
	case len(args) == 0:
		return 0, true
	case isHelp(args[0]):
		usage(stdout)
		return 0, false
	case strings.HasPrefix(args[0], "-"):
		return 0, true
	}
	for _, s := range subcommands {
		if s.name != args[0] {
			continue
		}
		if len(args) > 1 && isHelp(args[1]) && !s.ownHelp {
			fmt.Fprintf(stdout, "usage: %s\n\n%s.\n", strings.TrimSpace("pitcrew "+s.name+" "+s.args), upperFirst(s.what))
			return 0, false
		}
		return s.run(args[1:], stdin, stdout, stderr), false
	}
	fmt.Fprintf(stderr, "pitcrew: unknown subcommand %q\n\n", args[0])
	usage(stderr)
	return 2, false
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
