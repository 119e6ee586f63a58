package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckConfigSaysWhatIsWrongInTheFilesOwnWords(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yml")
	bad := filepath.Join(dir, "bad.yml")
	for name, content := range map[string]string{
		good: "flaky:\n  verify_runs: 80\n",
		bad:  "flaky:\n  enabeld: true\n  verify_runs: five\n",
	} {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stdout []string
		stderr string
	}{
		{name: "a valid file prints the settings that apply", args: []string{good}, code: 0,
			stdout: []string{good + ": ok;", "daily_limit: 5\n", "    verify_runs: 80\n", "    cooldown: 24h0m0s\n", "sentry:\n"}},
		{name: "each problem by line, key and what is allowed", args: []string{bad}, code: 1,
			stdout: []string{bad + ": 2 problems\n",
				"line 2: flaky.enabeld: unknown key (the keys of flaky are: enabled, label, verify_runs, cooldown, track_issues, in_job_retries, dashboard, verify, verify_runs_max, verify_daily_limit, siblings, rerun_known, rerun_daily_limit, quarantine_days)\n",
				`line 3: flaky.verify_runs: "five" is not a number (a whole number of runs of the fixed test, 1 to 500, default 50)` + "\n"}},
		{name: "standard input for -", args: []string{"-"}, stdin: "daily_limit: five\n", code: 1,
			stdout: []string{"standard input: 1 problem\n", `line 1: daily_limit: "five" is not a number (a whole number of runs per day, all jobs together, 0 to 1000, default 5)`}},
		{name: "an empty file is the defaults", args: []string{"-"}, stdin: "", code: 0, stdout: []string{"standard input: ok;", "verify: independent\n"}},
		{name: "a file that is not there", args: []string{filepath.Join(dir, "none.yml")}, code: 1, stderr: "no such file"},
		{name: "help", args: []string{"--help"}, code: 0, stdout: []string{"usage: pitcrew check-config [FILE|-]"}},
		{name: "two files are a usage error", args: []string{good, bad}, code: 2, stderr: "usage: pitcrew check-config"},
		{name: "an unknown flag is a usage error", args: []string{"--strict"}, code: 2, stderr: "usage: pitcrew check-config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errs bytes.Buffer
			code := checkConfigCommand(tc.args, strings.NewReader(tc.stdin), &out, &errs)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out.String(), errs.String())
			}
			for _, want := range tc.stdout {
				if !strings.Contains(out.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, out.String())
				}
			}
			if !strings.Contains(errs.String(), tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, errs.String())
			}
		})
	}
}

func TestCheckConfigReadsTheCheckoutsFileWithoutAnArgument(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	var out, errs bytes.Buffer
	if code := checkConfigCommand(nil, strings.NewReader(""), &out, &errs); code != 1 || !strings.Contains(errs.String(), "there is no .github/pitcrew.yml here") {
		t.Fatalf("without the file: exit %d, %s", code, errs.String())
	}
	if err := os.MkdirAll(filepath.Join(dir, ".github"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".github", "pitcrew.yml"), []byte("sentry:\n  enabled: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := checkConfigCommand(nil, strings.NewReader(""), &out, &errs); code != 0 || !strings.Contains(out.String(), ".github/pitcrew.yml: ok;") {
		t.Fatalf("with the file: exit %d, %s", code, out.String())
	}
}
