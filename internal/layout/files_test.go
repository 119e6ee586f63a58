package layout

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// root is the module's directory, from this package's.
const root = "../.."

// maxHandlerFiles bounds handlers/: one file per event or outside source,
// plus jobs.go.
const maxHandlerFiles = 15

// maxLines bounds every source file outside test support, so that each
// can be read in one sitting.
const maxLines = 350

// testSupport holds code only the tests run; it is exempt from maxLines.
var testSupport = []string{"internal/testenv/"}

func TestHandlersHoldsOneFilePerEventAndTheJobList(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "handlers", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			sources = append(sources, f)
		}
	}
	if len(sources) > maxHandlerFiles {
		t.Errorf("handlers/ has %d source files, more than %d: a step several handlers share belongs in work/", len(sources), maxHandlerFiles)
	}
	for _, f := range sources {
		if filepath.Base(f) == "jobs.go" {
			continue
		}
		if !handlesSomething(t, f) {
			t.Errorf("%s handles no event: it declares no Handle or Refresh method and no source's handle function; move it to work/", f)
		}
	}
}

// handlesSomething reports whether a file declares an event handler: a
// Handle or Refresh method, or an outside source's handle function.
func handlesSomething(t *testing.T, file string) bool {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		name := fn.Name.Name
		if fn.Recv != nil && (name == "Handle" || name == "Refresh") || fn.Recv == nil && strings.HasPrefix(name, "handle") {
			return true
		}
	}
	return false
}

func TestNoSourceFileIsTooLongToReadInOneSitting(t *testing.T) {
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && rel != "." || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || exempt(filepath.ToSlash(rel)) {
			return nil
		}
		checked++
		if n := lines(t, path); n > maxLines {
			t.Errorf("%s has %d lines, more than %d: split it by concern", rel, n, maxLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("checked only %d files: is %s the module's root?", checked, root)
	}
}

func exempt(rel string) bool {
	for _, p := range testSupport {
		if strings.HasPrefix(rel, p) {
			return true
		}
	}
	return false
}

func lines(t *testing.T, path string) int {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		n++
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}
