package prompts

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pitcrew/pitcrew/exunit"
	"github.com/pitcrew/pitcrew/internal/weburl"
)

func TestPullRequestLinksReadsOnlyTheRunsRepository(t *testing.T) {
	for _, c := range []struct {
		name, answer string
		want         []string
	}{
		{"a plain link", "Opened https://github.com/hexpm/hexpm/pull/77 with the fix.", []string{"https://github.com/hexpm/hexpm/pull/77"}},
		{"Markdown link, other casing, files tab", "See [the PR](https://GitHub.com/HexPM/hexpm/pull/77/files).", []string{"https://github.com/hexpm/hexpm/pull/77"}},
		{"twice and a second one", "PR: https://github.com/hexpm/hexpm/pull/77 (also https://github.com/hexpm/hexpm/pull/77#discussion) then https://github.com/hexpm/hexpm/pull/78.",
			[]string{"https://github.com/hexpm/hexpm/pull/77", "https://github.com/hexpm/hexpm/pull/78"}},
		{"another repository", "Upstream fix: https://github.com/elixir-ecto/ecto/pull/4400", nil},
		{"a look-alike host", "https://github.com.evil.test/hexpm/hexpm/pull/1 and https://notgithub.com/hexpm/hexpm/pull/2", nil},
		{"a repository whose name extends ours", "https://github.com/hexpm/hexpm-mirror/pull/3", nil},
		{"an issue, not a pull request", "https://github.com/hexpm/hexpm/issues/12", nil},
		{"pull zero", "https://github.com/hexpm/hexpm/pull/0", nil},
		{"a number too long", "https://github.com/hexpm/hexpm/pull/12345678901", nil},
		{"no link", "I could not reproduce it.", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := PullRequestLinks(c.answer, "hexpm/hexpm"); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestPullRequestLinksAreBounded(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(&b, "https://github.com/hexpm/hexpm/pull/%d ", i)
	}
	if got := PullRequestLinks(b.String(), "hexpm/hexpm"); len(got) != maxAnswerPRs {
		t.Fatalf("%d links", len(got))
	}
}

func TestKeepAnswerKeepsTheEnd(t *testing.T) {
	if got := KeepAnswer("  short\r\nanswer \xff "); got != "short\nanswer" {
		t.Fatalf("%q", got)
	}
	long := strings.Repeat("line of the agent's work\n", 1000) + "SUMMARY: fixed in PR 77"
	got := KeepAnswer(long)
	if !strings.HasSuffix(got, "SUMMARY: fixed in PR 77") || !strings.HasPrefix(got, "… (the start is cut)\nline of") || utf8.RuneCountInString(got) > MaxAnswerLen+30 {
		t.Fatalf("kept %d runes: %q…", utf8.RuneCountInString(got), got[:80])
	}
}

func FuzzPullRequestLinks(f *testing.F) {
	f.Add("Opened https://github.com/hexpm/hexpm/pull/77 and https://github.com/a/b/pull/1")
	f.Add("[x](https://GITHUB.com/hexpm/HEXPM/pull/9/files)")
	f.Fuzz(func(t *testing.T, answer string) {
		links := PullRequestLinks(answer, "hexpm/hexpm")
		if len(links) > maxAnswerPRs {
			t.Fatalf("%d links", len(links))
		}
		for _, l := range links {
			if !weburl.IsPull(l) || !strings.HasPrefix(l, "https://github.com/hexpm/hexpm/pull/") {
				t.Fatalf("bad link %q", l)
			}
		}
		if kept := KeepAnswer(answer); !utf8.ValidString(kept) || utf8.RuneCountInString(kept) > MaxAnswerLen+30 {
			t.Fatalf("kept %q", kept)
		}
	})
}

func TestPullRequestLinksOfAnEnterpriseServer(t *testing.T) {
	weburl.Set("https://ghe.example.com/")
	defer weburl.Set("")
	got := PullRequestLinks("Opened https://ghe.example.com/hexpm/hexpm/pull/9, like https://github.com/hexpm/hexpm/pull/8.", "hexpm/hexpm")
	if len(got) != 1 || got[0] != "https://ghe.example.com/hexpm/hexpm/pull/9" {
		t.Fatalf("links %q", got)
	}
	// The result block's pr_url and a prior fix are the Enterprise's too.
	res, err := ParseResult("```json\n{\"outcome\": \"fixed\", \"pr_url\": \"https://ghe.example.com/hexpm/hexpm/pull/9\"}\n```")
	if err != nil || res.PRURL != "https://ghe.example.com/hexpm/hexpm/pull/9" {
		t.Fatalf("result %+v %v", res, err)
	}
	if _, err := ParseResult("```json\n{\"outcome\": \"fixed\", \"pr_url\": \"https://github.com/hexpm/hexpm/pull/9\"}\n```"); err == nil {
		t.Fatal("a github.com pull request was taken for the Enterprise's")
	}
	in := FlakyInput{Repo: "hexpm/hexpm", Issue: 3, Test: exunit.TestRef{Path: "test/a_test.exs", Line: 1}, VerifyRuns: 5}
	if _, err := Render("flaky", in.WithPriorFix("https://ghe.example.com/hexpm/hexpm/pull/7", time.Now())); err != nil {
		t.Fatalf("a prior fix on the Enterprise server: %v", err)
	}
	weburl.Set("HTTPS://GHE.example.com/github/")
	if got := PullRequestLinks("see https://ghe.example.com/github/hexpm/hexpm/pull/5", "hexpm/hexpm"); len(got) != 1 {
		t.Fatalf("links under a path prefix, scheme in capitals: %q", got)
	}
}
