package exunit

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

// TestParseLiveMixTest runs real `mix test` on the fixture project with its
// doctests made to fail, and parses what it prints. .ci/run installs
// Debian's elixir so this runs in CI; without mix it is skipped.
func TestParseLiveMixTest(t *testing.T) {
	mix, err := exec.LookPath("mix")
	if err != nil {
		testenv.SkipWithout(t, "mix", "apt-get install -y elixir")
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/fixture")); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, "_build"))
	cmd := exec.Command(mix, "test", "--seed", "0", "--max-cases", "1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MIX_ENV=test", "RACY_DOCTEST_FAIL=1", "HOME="+dir)
	out, _ := cmd.CombinedOutput() // exits 2: tests failed
	rep, err := ParseLog(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 || rep.Runs[0].Seed == nil || *rep.Runs[0].Seed != 0 || rep.Runs[0].Doctests != 3 || rep.Runs[0].Failures < 2 {
		t.Fatalf("runs %s\noutput:\n%s", runsString(rep.Runs), out)
	}
	doctests := 0
	for _, f := range rep.Flaky() {
		if f.Kind == KindDoctest && f.File == "test/racy_doc_test.exs" && f.Line == 3 {
			doctests++
		}
	}
	if doctests != 2 {
		t.Fatalf("%d doctest failures found in:\n%s", doctests, out)
	}
}
