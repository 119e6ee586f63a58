package testenv

// T is what the fakes and payload builders use of a test: *testing.T and
// *testing.B satisfy it, and so does a program that plays them outside a
// test (pitcrew demo).
type T interface {
	Helper()
	Errorf(format string, args ...any)
	Error(args ...any)
	Fatalf(format string, args ...any)
	Fatal(args ...any)
	Cleanup(func())
	Logf(format string, args ...any)
}
