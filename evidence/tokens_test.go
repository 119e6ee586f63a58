package evidence

import (
	"regexp"
	"slices"
	"testing"
)

// The scanners find what the regexps they stand for find.
func TestTokenScannersMatchTheirRegexps(t *testing.T) {
	for _, s := range []string{
		"", "assert_receive {:done, ^ref}, 5_000", "Foo.Bar_1.baz(:ok, ::x, a1b, 1abc, fooBar)",
		"is_nil?(x) and not y! :", "héllo Wörld :é", "plug :require_admin when action in [:delete]",
		"__MODULE__.call(%{a: 1}) :: 9z", "A.", ":", "?a _ __ x?y!z",
	} {
		sameTokens(t, s)
	}
}

func sameTokens(t *testing.T, s string) {
	var words, atoms []string
	eachWord(s, func(w string) { words = append(words, w) })
	eachAtom(s, func(a string) { atoms = append(atoms, a) })
	if want := word.FindAllString(s, -1); !slices.Equal(words, want) {
		t.Errorf("eachWord(%q) = %q, word finds %q", s, words, want)
	}
	if want := atom.FindAllString(s, -1); !slices.Equal(atoms, want) {
		t.Errorf("eachAtom(%q) = %q, atom finds %q", s, atoms, want)
	}
}

func FuzzTokenScanners(f *testing.F) {
	f.Add("assert_receive {:done, ^ref}, 5_000 Foo.Bar :x")
	f.Fuzz(sameTokens)
}

// yamlKey finds what the regexp it stands for finds.
var yamlKeyRegexp = regexp.MustCompile(`^\s*(?:-\s+)?([\w.-]+)\s*:`)

func yamlKeyByRegexp(s string) string {
	if m := yamlKeyRegexp.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

func TestYAMLKeyMatchesItsRegexp(t *testing.T) {
	for _, s := range []string{"", "test:", "  - run: mix test", "-foo: x", "- : x", "-", "- ", "  retry :", "a b:", "\t-\tkey.x-y :v", "- - a:", "key", "é:"} {
		if got, want := yamlKey(s), yamlKeyByRegexp(s); got != want {
			t.Errorf("yamlKey(%q) = %q, the regexp finds %q", s, got, want)
		}
	}
}

func FuzzYAMLKey(f *testing.F) {
	f.Add("  - run: mix test")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := yamlKey(s), yamlKeyByRegexp(s); got != want {
			t.Errorf("yamlKey(%q) = %q, the regexp finds %q", s, got, want)
		}
	})
}
