// Package layout guards pitcrew's import rules (the README's
// architecture): a table of what each package may not import, read with
// go list, so the layout cannot drift silently.
package layout

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/pitcrew/pitcrew"

// pipeline is every stage package; domain packages (exunit, alerts, setup)
// and pure helpers may not import any of them.
var pipeline = append([]string{module + "/handlers", module + "/runs", module + "/prompts", module + "/sandbox", module + "/publish", module + "/cmd/pitcrew"}, steps...)

// steps are the packages of what the jobs share (work and its concerns).
var steps = []string{module + "/work", module + "/work/flaky", module + "/work/follow", module + "/work/incidents", module + "/work/dashboard", module + "/work/profiling"}

var transport = []string{"net/http", "github.com/hibiken/asynq", "github.com/redis/go-redis/v9", "github.com/google/go-github/v66/github"}

// forbidden lists, per package, the imports it must not have.
var forbidden = map[string][]string{
	// a handler parses, decides and makes one call; carrying is the wiring's part
	// (go-github stays: its event types are how handlers read payloads)
	module + "/handlers": append([]string{module + "/sandbox", module + "/app", module + "/app/ops", module + "/cmd/pitcrew"}, without(transport, "github.com/google/go-github/v66/github")...),
	module + "/prompts":  without(pipeline, module+"/prompts"),
	module + "/sandbox":  without(pipeline, module+"/sandbox"),
	module + "/publish":  append([]string{module + "/handlers", module + "/sandbox", module + "/cmd/pitcrew"}, transport...),
	module + "/exunit":   append(append([]string{}, pipeline...), transport...),
	module + "/alerts":   append(append([]string{}, pipeline...), transport...),
	module + "/evidence": append(append([]string{}, pipeline...), transport...),
	module + "/commands": append(append([]string{}, pipeline...), transport...),
	// the steps the jobs share reach GitHub and the sandbox only through
	// interfaces; they know no handler and no wiring
	module + "/work":            stepRule,
	module + "/work/flaky":      stepRule,
	module + "/work/follow":     stepRule,
	module + "/work/incidents":  stepRule,
	module + "/work/dashboard":  stepRule,
	module + "/work/profiling":  stepRule,
	module + "/internal/weburl": append(append([]string{}, pipeline...), transport...),
	module + "/internal/relay":  append([]string{}, pipeline...),
	// making a write durable knows nothing of what was written
	module + "/internal/durable": append(append([]string{}, pipeline...), "net/http", "github.com/hibiken/asynq"),
	module + "/runs":             {module + "/handlers", module + "/publish", "net/http", "github.com/hibiken/asynq"},
	module + "/setup":            append([]string{}, pipeline...),
	// the hooks store requests; deciding what they mean is the handlers' part
	module + "/hook": {module + "/handlers", module + "/publish", module + "/prompts", module + "/cmd/pitcrew"},
	// periodic work re-asks GitHub and re-reads sessions; it decides nothing a handler decides
	module + "/app/ops": {module + "/handlers", module + "/publish", module + "/prompts", module + "/sandbox", module + "/cmd/pitcrew"},
	// the queue carries tasks; it knows no stage that makes or takes them
	module + "/queue": append([]string{}, pipeline...),
	// the GitHub client knows nothing of pitcrew's pipeline
	module + "/internal/github": append([]string{}, pipeline...),
	// the repository configuration knows no job: each job declares its section
	module + "/internal/repoconfig": append(append([]string{}, pipeline...), transport...),
}

var stepRule = append([]string{module + "/handlers", module + "/sandbox", module + "/app", module + "/app/ops", module + "/cmd/pitcrew"}, transport...)

// onlyFrom lists packages that only the wiring (app), or only the
// commands, may import.
var onlyFrom = map[string][]string{
	module + "/handlers": {module + "/app"},
	module + "/app":      {module + "/cmd/pitcrew"},
	module + "/app/ops":  {module + "/app"},
}

func TestImportsFollowTheLayout(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg, imports := f[0], f[1:]
		if _, ok := forbidden[pkg]; ok {
			seen++
		}
		for _, imp := range imports {
			for _, bad := range forbidden[pkg] {
				if imp == bad {
					t.Errorf("%s imports %s, which the layout forbids", pkg, imp)
				}
			}
			if allowed, ok := onlyFrom[imp]; ok && !contains(allowed, pkg) {
				t.Errorf("%s imports %s; only %v may", pkg, imp, allowed)
			}
		}
	}
	if seen != len(forbidden) {
		t.Fatalf("go list showed %d of the %d packages the table names: a package was renamed or moved", seen, len(forbidden))
	}
}

func without(list []string, drop string) []string {
	var out []string
	for _, s := range list {
		if s != drop {
			out = append(out, s)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
