package commands

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTheFirstCommandOfABody(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       Command
		ok         bool
	}{
		{"a command alone", "/pitcrew retry", Command{Name: Retry, Line: 1}, true},
		{"after people talking", "Looks flaky again on main.\n\n/pitcrew retry\n\nthanks!", Command{Name: Retry, Line: 3}, true},
		{"with words after it", "/pitcrew open-pr  as a draft please", Command{Name: OpenPR, Text: "as a draft please", Line: 1}, true},
		{"any case, a tab, CRLF", "/pitcrew\tPROFILE\r\n", Command{Name: Profile, Line: 1}, true},
		{"indented a little", "  /pitcrew help", Command{Name: Help, Line: 1}, true},
		{"an unknown word", "/pitcrew deploy to prod", Command{Text: "deploy to prod", Line: 1}, true},
		{"free text for the agent", "/pitcrew please keep the async: true and use a named table instead", Command{Text: "please keep the async: true and use a named table instead", Line: 1}, true},
		{"the bare prefix", "/pitcrew", Command{Line: 1}, true},
		{"a hundred commands act once, on the first", strings.Repeat("/pitcrew profile\n", 50) + strings.Repeat("/pitcrew retry\n", 50), Command{Name: Profile, Line: 1}, true},
		{"people talking", "Should we ask pitcrew to retry this? I think /pitcrew retry would do it.", Command{}, false},
		{"a quoted command", "> /pitcrew retry\n\nDid that work?", Command{}, false},
		{"in a fenced block", "Type this:\n```\n/pitcrew retry\n```\n", Command{}, false},
		{"in a tilde fence, then a real one", "~~~~\n/pitcrew profile\n~~~\n~~~~\n/pitcrew retry", Command{Name: Retry, Line: 5}, true},
		{"an indented code block", "Example:\n\n    /pitcrew retry\n", Command{}, false},
		{"another word that starts the same", "/pitcrewbot retry\n/pitcrew-x retry", Command{}, false},
		{"an unclosed fence hides the rest", "```elixir\n/pitcrew retry", Command{}, false},
		{"empty", "", Command{}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := First(c.body)
			if ok != c.ok || got != c.want {
				t.Fatalf("First = %+v, %v; want %+v, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

func TestACommandsTextIsBounded(t *testing.T) {
	got, ok := First("/pitcrew " + strings.Repeat("é", MaxText))
	if !ok || len(got.Text) > MaxText || !utf8.ValidString(got.Text) {
		t.Fatalf("text of %d bytes, valid %v", len(got.Text), utf8.ValidString(got.Text))
	}
	if _, ok := First(strings.Repeat("x", MaxBody) + "\n/pitcrew retry"); ok {
		t.Fatal("a command past the bound was read")
	}
}

func FuzzFirst(f *testing.F) {
	for _, s := range []string{"/pitcrew retry", "a\n```\n/pitcrew x\n```\n/pitcrew open-pr now", "> /pitcrew help", "/pitcrew\t\u00a0profile", "    /pitcrew retry"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		c, ok := First(body)
		if !ok {
			if c != (Command{}) {
				t.Fatalf("no command, yet %+v", c)
			}
			return
		}
		if c.Line < 1 || len(c.Text) > MaxText || strings.Contains(c.Text, "\n") || (utf8.ValidString(body) && !utf8.ValidString(c.Text)) {
			t.Fatalf("command %+v", c)
		}
		lines := strings.Split(body, "\n")
		if c.Line > len(lines) || !strings.HasPrefix(strings.TrimLeft(lines[c.Line-1], " \t"), prefix) {
			t.Fatalf("line %d is not a command line: %q", c.Line, lines[min(c.Line, len(lines))-1])
		}
		if c.Name != "" && !strings.HasPrefix(strings.ToLower(strings.TrimSpace(strings.TrimLeft(lines[c.Line-1], " \t")[len(prefix):])), string(c.Name)) {
			t.Fatalf("named %s from %q", c.Name, lines[c.Line-1])
		}
	})
}
