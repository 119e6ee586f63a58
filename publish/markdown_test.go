package publish

import (
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"CI", "CI"},
		{"@octocat please look", "@\u200boctocat please look"},
		{"fixes #12", "fixes #\u200b12"},
		{"<img src=x onerror=alert(1)>", `\<img src=x onerror=alert(1)\>`},
		{"&#64;octocat", `\&#` + "\u200b" + `64;octocat`},
		{"[click](https://evil.example)", `\[click\](https:/` + "\u200b" + `/evil.example)`},
		{"![x](https://evil.example/x.png)", `\!\[x\](https:/` + "\u200b" + `/evil.example/x.png)`},
		{"see www.evil.example and GH-12", "see www\u200b.evil.example and GH-\u200b12"},
		{"`code` **bold** _em_ ~~s~~ $x$ a|b", "\\`code\\` \\*\\*bold\\*\\* \\_em\\_ \\~\\~s\\~\\~ \\$x\\$ a\\|b"},
		{"two\nlines\r\n\n# heading", "two lines #\u200b heading"},
		{"- item", `\- item`},
		{"1. item", `1\. item`},
		{"> quote", `\> quote`},
		{"=====", `\=====`},
		{"a\u202egnp.exe", "agnp.exe"},
		{"zero\u200bwidth\u200d\u2060\ufeff", "zerowidth"},
		{"soft\u00adhyphen", "softhyphen"},
		{"\u3164\u115f", ""},
		{"back\\slash", `back\\slash`},
		{"naïve café 🚀", "naïve café 🚀"},
		{"bad\xffutf8", "badutf8"},
		{"abcdef", "abc…"},
	} {
		max := 100
		if c.in == "abcdef" {
			max = 3
		}
		if got := Text(c.in, max); got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCode(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"priv/repo/migrations/1_add.exs", "`priv/repo/migrations/1_add.exs`"},
		{"a`b.exs", "``a`b.exs``"},
		{"x``y", "```x``y```"},
		{"`start", "`` `start ``"},
		{"end`", "`` end` ``"},
		{"", "` `"},
		{"line\nbreak", "`line break`"},
		{"rtl\u202eexs.txt", "`rtlexs.txt`"},
		{"@octocat <b>", "`@octocat <b>`"},
	} {
		if got := Code(c.in, 100); got != c.want {
			t.Errorf("Code(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCodeBlock(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{"assert 1 == 2"}, "```\nassert 1 == 2\n```\n"},
		{[]string{"```", "escape"}, "````\n```\nescape\n````\n"},
		{[]string{"tab\there\u202e", "cr\r"}, "```\ntab\there\ncr\n```\n"},
	} {
		if got := CodeBlock(c.in); got != c.want {
			t.Errorf("CodeBlock(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestMarkdown(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"## Slow queries\n\ncc @octocat", "## Slow queries\n\ncc @\u200boctocat"},
		{"Fixes #3 and closes owner/repo#4", "Fixes #\u200b3 and closes owner/repo#\u200b4"},
		{"mail me at a@b.example; `@inside` code", "mail me at a@b.example; `@\u200binside` code"},
		{"_@octocat_ `x`@hubot @@team /@ops &#64;eve &#x40;bob &commat;amy", "_@\u200boctocat_ `x`@\u200bhubot @@\u200bteam /@\u200bops @\u200beve @\u200bbob @\u200bamy"},
		{"hidden\u202e text\u200b", "hidden text"},
	} {
		if got := Markdown(c.in); got != c.want {
			t.Errorf("Markdown(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestLine(t *testing.T) {
	if got := Line("  Datadog\u202e alert:\n\t5xx  rate ", 100); got != "Datadog alert: 5xx rate" {
		t.Errorf("Line = %q", got)
	}
}

// FuzzMarkdownSafety checks what every helper promises, whatever the input.
func FuzzMarkdownSafety(f *testing.F) {
	for _, s := range []string{"@octocat", "fixes #1", "<script>", "a`b", "```", "\u202e", "- x\n# y", "1) z", "&amp;", "\\`"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, out := range map[string]string{"Line": Line(s, 50), "Text": Text(s, 50), "Code": Code(s, 50)} {
			if !utf8.ValidString(out) || strings.ContainsAny(out, "\n\r") {
				t.Fatalf("%s(%q) = %q: not one valid line", name, s, out)
			}
			for _, r := range strings.ReplaceAll(out, zwsp, "") {
				if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
					t.Fatalf("%s(%q) = %q keeps invisible %U", name, s, out, r)
				}
			}
		}
		text := Text(s, 50)
		if liveAutolink.MatchString(text) {
			t.Fatalf("Text(%q) = %q: a live autolink", s, text)
		}
		for i := 0; i < len(text); i++ {
			switch c := text[i]; {
			case c == '@' || c == '#':
				if !strings.HasPrefix(text[i+1:], zwsp) {
					t.Fatalf("Text(%q) = %q: %c not defused", s, text, c)
				}
			case strings.IndexByte("<>`*_[]&|~$!", c) >= 0:
				if n := backslashesBefore(text, i); n%2 == 0 {
					t.Fatalf("Text(%q) = %q: %c at %d not escaped", s, text, c, i)
				}
			}
		}
		code := Code(s, 50)
		fence := code[:strings.IndexFunc(code, func(r rune) bool { return r != '`' })]
		inner := strings.TrimSuffix(strings.TrimPrefix(code, fence), fence)
		if strings.Contains(inner, fence) {
			t.Fatalf("Code(%q) = %q: the fence occurs inside", s, code)
		}
		lines := strings.Split(strings.TrimSuffix(CodeBlock(strings.Split(s, "\n")), "\n"), "\n")
		f := lines[0]
		for _, l := range lines[1 : len(lines)-1] {
			if strings.HasPrefix(strings.TrimLeft(l, " "), f) {
				t.Fatalf("CodeBlock(%q): line %q closes the fence %q", s, l, f)
			}
		}
	})
}

var liveAutolink = regexp.MustCompile(`(?i)(?:://|\bwww\.)`)

func backslashesBefore(s string, i int) int {
	n := 0
	for i > 0 && s[i-1] == '\\' {
		n++
		i--
	}
	return n
}

func TestSafeURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://rush.example/s/ses_1", "https://rush.example/s/ses_1"},
		{"http://localhost:8080/x?a=1&b=2#f", "http://localhost:8080/x?a=1&b=2#f"},
		{"javascript:alert(1)", ""},
		{"https://sentry.io/x\t@org/team", ""}, // a tab would make the rest a mention
		{"https://sentry.io/x\n@org", ""},
		{"https://a.example/x y", ""},
		{"https://a.example/[x](https://evil)", ""},
		{"https://a.example/`x`", ""},
		{"https://a.example/\"onmouseover=", ""},
		{"https://a.example/\u2028x", ""},
		{"ftp://a.example/", ""},
	} {
		if got := SafeURL(c.in); got != c.want {
			t.Errorf("SafeURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
