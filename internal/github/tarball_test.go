package github

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// tarball is a gzipped tar of entries as GitHub lays them out: under a
// folder named for the commit.
func tarball(t testing.TB, entries ...tar.Header) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, h := range entries {
		h.Name = "hexpm-hexpm-abc1234/" + h.Name
		content := strings.Repeat("x", int(h.Size))
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
			content = ""
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(content))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// Only the test modules are kept: regular files named *_test.exs, outside
// deps and _build, of at most MaxFileAt; past the bounds, what was read
// comes with ErrTarballCut.
func TestReadTestModulesKeepsTheTestModulesOnly(t *testing.T) {
	reg := func(name string, size int64) tar.Header {
		return tar.Header{Name: name, Size: size, Mode: 0o644, Typeflag: tar.TypeReg}
	}
	got, err := ReadTestModules(bytes.NewReader(tarball(t,
		reg("test/a_test.exs", 3), reg("lib/a.ex", 3), reg("deps/x/test/b_test.exs", 3), reg("_build/c_test.exs", 3),
		reg("test/big_test.exs", MaxFileAt+1), tar.Header{Name: "test/link_test.exs", Linkname: "/etc/passwd", Typeflag: tar.TypeSymlink},
		reg("apps/web/test/d_test.exs", 2))))
	if err != nil || !reflect.DeepEqual(got, map[string]string{"test/a_test.exs": "xxx", "apps/web/test/d_test.exs": "xx"}) {
		t.Fatalf("%v, %v", got, err)
	}
	var many []tar.Header
	for i := 0; i <= MaxTestFiles; i++ {
		many = append(many, reg("test/m"+strconv.Itoa(i)+"_test.exs", 1))
	}
	got, err = ReadTestModules(bytes.NewReader(tarball(t, many...)))
	if !errors.Is(err, ErrTarballCut) || len(got) != MaxTestFiles {
		t.Fatalf("%d files, %v", len(got), err)
	}
	whole := tarball(t, reg("test/a_test.exs", 3), reg("test/b_test.exs", 3))
	if got, err = ReadTestModules(bytes.NewReader(whole[:len(whole)/2])); !errors.Is(err, ErrTarballCut) {
		t.Fatalf("a download cut short: %v, %v", got, err)
	}
	if _, err := ReadTestModules(strings.NewReader("not gzip")); err == nil || errors.Is(err, ErrTarballCut) {
		t.Fatalf("not a tarball: %v", err)
	}
}

// TestModules follows GitHub's redirect to the archive, which carries no
// credential of GitHub's.
func TestTestModulesFollowsTheArchiveRedirect(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /repos/a/b/tarball/main", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+r.Host+"/codeload/a/b?sig=1", http.StatusFound)
	})
	body := tarball(t, tar.Header{Name: "test/a_test.exs", Size: 3, Mode: 0o644, Typeflag: tar.TypeReg})
	mux.HandleFunc("GET /codeload/a/b", func(w http.ResponseWriter, r *http.Request) { w.Write(body) })
	g := restOn(t, mux)
	g.download = http.DefaultClient
	got, err := g.TestModules(context.Background(), Repo{"a", "b"}, "main")
	if err != nil || got["test/a_test.exs"] != "xxx" {
		t.Fatalf("%v, %v", got, err)
	}
}

func FuzzReadTestModules(f *testing.F) {
	f.Add(tarball(f, tar.Header{Name: "test/a_test.exs", Size: 3, Mode: 0o644, Typeflag: tar.TypeReg}))
	f.Add([]byte("\x1f\x8b"))
	f.Fuzz(func(t *testing.T, in []byte) {
		files, _ := ReadTestModules(bytes.NewReader(in))
		total := 0
		for name, content := range files {
			if !strings.HasSuffix(name, "_test.exs") || strings.Contains(name, "..") || len(content) > MaxFileAt {
				t.Fatalf("kept %q (%d bytes)", name, len(content))
			}
			total += len(content)
		}
		if len(files) > MaxTestFiles || total > MaxTestBytes {
			t.Fatalf("%d files, %d bytes", len(files), total)
		}
	})
}
