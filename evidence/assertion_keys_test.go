package evidence

import "testing"

// The options a function under test is called with are not what an
// assertion checks: keysDropped reads the assertion's own arguments.
func TestCallsBlanked(t *testing.T) {
	for in, want := range map[string]string{
		"f(a: 1) == 10":            "f() == 10",
		"f(g(x), y: 2) == [z: 1]":  "f() == [z: 1]",
		"worker: W, args: %{a: 1}": "worker: W, args: %{a: 1}",
		"f(":                       "f(",
	} {
		if got := callsBlanked(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
