package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// CIStepScript is the run script of the step named step in a workflow's
// first job.
func CIStepScript(t T, workflow, step string) string {
	var w struct {
		Jobs map[string]struct {
			Steps []struct {
				Name string `yaml:"name"`
				Run  string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(workflow), &w); err != nil {
		t.Fatal(err)
	}
	for _, j := range w.Jobs {
		for _, s := range j.Steps {
			if s.Name == step {
				return s.Run
			}
		}
	}
	t.Fatalf("no step %q in the workflow", step)
	return ""
}

// RunCIScript runs a workflow step's script with bash, env as its
// environment, and a `mix` on its PATH that prints, at its nth call, the
// real ExUnit output logs[n-1] (a name under exunit/testdata/logs or
// evidence/testdata/runlogs; the last one again past the end) and fails
// when its name says fail. It returns what the job's log would hold, each
// line stamped as GitHub Actions does, and the script's exit code.
func RunCIScript(t T, script string, env map[string]string, logs ...string) (log string, code int) {
	dir, err := os.MkdirTemp("", "pitcrew-ci-*")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	var paths []string
	for _, name := range logs {
		p := Path("exunit", "testdata", "logs", name)
		if _, err := os.Stat(p); err != nil {
			p = Path("evidence", "testdata", "runlogs", name)
		}
		paths = append(paths, p)
	}
	list := filepath.Join(dir, "logs")
	mix := `#!/usr/bin/env bash
n=$(cat "$PITCREW_MIX_CALLS" 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" >"$PITCREW_MIX_CALLS"
total=$(wc -l <"$PITCREW_MIX_LOGS"); ((n > total)) && n=$total
f=$(sed -n "${n}p" "$PITCREW_MIX_LOGS"); cat "$f"
case "$f" in *fail*) exit 2 ;; esac
`
	if err := os.WriteFile(list, []byte(strings.Join(paths, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mix"), []byte(mix), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin", "PITCREW_MIX_CALLS=" + filepath.Join(dir, "calls"), "PITCREW_MIX_LOGS=" + list}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			t.Fatal(err)
		}
	}
	var stamped strings.Builder
	for i, line := range strings.SplitAfter(out.String(), "\n") {
		if line != "" {
			fmt.Fprintf(&stamped, "2026-12-07T05:%02d:%02d.%07dZ %s", i/3600%60, i/60%60, i%10_000_000, line)
		}
	}
	return stamped.String(), code
}
