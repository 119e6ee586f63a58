package testenv

import (
	"fmt"
	"os"
	"testing"
)

// SkipWithout skips t because a tool it needs is missing, and says so on
// standard error too: go test prints a passing package's standard error
// but not its skips, and a test that silently did not run looks like one
// that passed.
func SkipWithout(t testing.TB, tool, install string) {
	t.Helper()
	fmt.Fprintf(os.Stderr, "SKIPPED %s: %s is not installed (%s)\n", t.Name(), tool, install)
	t.Skipf("%s is not installed (%s)", tool, install)
}
