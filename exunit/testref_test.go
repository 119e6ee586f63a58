package exunit

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestExtractTestRefs(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		refs     []string
		rejected []string // reasons, by prefix
	}{
		{"plain", "Flaky: test/hexpm/web/controllers/package_controller_test.exs:42 fails", []string{"test/hexpm/web/controllers/package_controller_test.exs:42"}, nil},
		{"code span and trailing dot", "see `test/hexpm/accounts/user_test.exs:7`.", []string{"test/hexpm/accounts/user_test.exs:7"}, nil},
		{"umbrella", "apps/hexpm_web/test/hexpm_web/live/search_live_test.exs:120", []string{"apps/hexpm_web/test/hexpm_web/live/search_live_test.exs:120"}, nil},
		{"dot slash", "./test/a_test.exs:3", []string{"test/a_test.exs:3"}, nil},
		{"blob link", "https://github.com/hexpm/hexpm/blob/main/test/hexpm/repository/releases_test.exs#L88", []string{"test/hexpm/repository/releases_test.exs:88"}, nil},
		{"duplicates and several", "test/a_test.exs:1 and test/b_test.exs:2, again test/a_test.exs:1", []string{"test/a_test.exs:1", "test/b_test.exs:2"}, nil},
		{"dot dot", "test/../../etc/passwd_test.exs:1", nil, []string{"contains `..`"}},
		{"shell metacharacter", "test/a_test.exs:1;rm -rf /", nil, []string{"contains characters"}},
		{"dollar", "test/$(whoami)_test.exs:1", nil, []string{"contains characters"}},
		{"no line", "test/hexpm/accounts/user_test.exs fails sometimes", nil, []string{"has no line number"}},
		{"not under test", "lib/hexpm_test.exs:4", nil, []string{"is not under `test/`"}},
		{"absolute", "/test/a_test.exs:4", nil, []string{"is an absolute path"}},
		{"line zero", "test/a_test.exs:0", nil, []string{"has a line number out of range"}},
		{"mixed", "test/good_test.exs:9 but not test/bad_test.exs", []string{"test/good_test.exs:9"}, []string{"has no line number"}},
		{"in parentheses", "(test/a_test.exs:5)", []string{"test/a_test.exs:5"}, nil},
		{"nothing", "the suite is slow on CI", nil, nil},
		{"ExUnit failure header", "  1) test shows package (HexpmWeb.PackageControllerTest)\n     test/hexpm_web/controllers/package_controller_test.exs:101\n", []string{"test/hexpm_web/controllers/package_controller_test.exs:101"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refs, rejected := ExtractTestRefs(tt.text)
			var got []string
			for _, r := range refs {
				got = append(got, r.String())
			}
			if !reflect.DeepEqual(got, tt.refs) {
				t.Errorf("refs = %q, want %q", got, tt.refs)
			}
			if len(rejected) != len(tt.rejected) {
				t.Fatalf("rejected = %+v, want reasons %q", rejected, tt.rejected)
			}
			for i, r := range rejected {
				if !strings.HasPrefix(r.Reason, tt.rejected[i]) {
					t.Errorf("rejected[%d].Reason = %q, want prefix %q", i, r.Reason, tt.rejected[i])
				}
			}
		})
	}
}

func TestExtractTestRefsCapsCount(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= MaxRefsPerText+3; i++ {
		b.WriteString("test/a" + strings.Repeat("b", i) + "_test.exs:1\n")
	}
	refs, rejected := ExtractTestRefs(b.String())
	if len(refs) != MaxRefsPerText || len(rejected) != 3 {
		t.Fatalf("got %d refs and %d rejected", len(refs), len(rejected))
	}
}

func FuzzExtractTestRefs(f *testing.F) {
	for _, s := range []string{"test/a_test.exs:1", "apps/x/test/b_test.exs:22 test/../c_test.exs:3", "`test/a_test.exs`", "_test.exs_test.exs:", "https://github.com/o/r/blob/m/test/a_test.exs#L9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		refs, _ := ExtractTestRefs(text)
		if len(refs) > MaxRefsPerText {
			t.Fatalf("%d refs", len(refs))
		}
		for _, r := range refs {
			// Every accepted reference must survive a round trip and be safe
			// to hand to `mix test` as one argument.
			again, err := ParseTestRef(r.String())
			if err != nil || again != r {
				t.Fatalf("ref %q does not round-trip: %v", r, err)
			}
			if strings.Contains(r.Path, "..") || !utf8.ValidString(r.Path) || !allowedRef.MatchString(r.Path) {
				t.Fatalf("unsafe path accepted: %q", r.Path)
			}
		}
	})
}
