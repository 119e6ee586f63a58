package layout

import (
	"os/exec"
	"strings"
	"testing"
)

// floors is the pipeline's order, top to bottom, stated once (the README's
// architecture picture draws it): a package imports packages on its own
// floor or below, never above. A new package must be given a floor here.
var floors = [][]string{
	{"cmd/pitcrew", "cmd/pitcrew-load", "bench/ceiling"}, // the commands
	{"app", "app/ops"}, // the wiring: routes, workers, periodic tasks
	{"handlers"},       // one file per event or source
	{"work/flaky", "work/follow", "work/incidents", "work/dashboard", "work/profiling"},
	{"work"}, // what the jobs share: Env, the registry, commands
	{"hook"}, // the intake: signatures, bounded bodies, the durable queue
	{"publish"},
	{"runs"},
	{"prompts", "queue", "sandbox"},
	{"evidence", "exunit", "alerts", "commands", "codeowners", "setup"}, // domain: no HTTP
	{"", "internal/github", "internal/github/githubtest", "internal/repoconfig", "internal/weburl", "internal/durable", "internal/metrics", "internal/hostrule", "internal/relay", "internal/faults"}, // leaves
}

// testSupport are packages only tests (and the offline demo) use: they
// fake what sits anywhere in the pipeline, so they sit outside its order.
var testSupportPackages = []string{"internal/testenv", "internal/layout", "work/worktest"}

func TestNoImportRunsBackUp(t *testing.T) {
	floor := map[string]int{}
	for i, f := range floors {
		for _, p := range f {
			floor[strings.TrimSuffix(module+"/"+p, "/")] = i
		}
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := f[0]
		if contains(testSupportPackages, strings.TrimPrefix(pkg, module+"/")) {
			continue
		}
		from, ok := floor[pkg]
		if !ok {
			t.Errorf("%s has no floor in the pipeline's order (floors): give it one", pkg)
			continue
		}
		for _, imp := range f[1:] {
			if to, ok := floor[imp]; ok && to < from {
				t.Errorf("%s (floor %d) imports %s (floor %d): an import runs back up", pkg, from, imp, to)
			}
			if imp != module && strings.HasPrefix(imp, module+"/") && contains(testSupportPackages, strings.TrimPrefix(imp, module+"/")) && !strings.HasPrefix(pkg, module+"/cmd/") {
				t.Errorf("%s imports the test support %s", pkg, imp)
			}
		}
	}
}
