package prompts

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

const fixedAnswer = "I looped the test 400 times and it failed 7 times with seed 48213.\n" +
	"The cause was Application.put_env in an async test.\n\n```json\n" +
	`{"outcome": "fixed", "pr_url": "https://github.com/hexpm/hexpm/pull/1234", "cause": "PackageControllerTest changes :hexpm, :billing_impl with Application.put_env while other async tests read it.", "seed": 48213, "failures_before": 7, "failures_after": 0, "runs": 50, "notes": "extra"}` +
	"\n```\n"

func TestParseResult(t *testing.T) {
	r, err := ParseResult(fixedAnswer)
	if err != nil {
		t.Fatal(err)
	}
	if r.Outcome != OutcomeFixed || r.PRURL != "https://github.com/hexpm/hexpm/pull/1234" || *r.Seed != 48213 || *r.FailuresBefore != 7 || *r.FailuresAfter != 0 || *r.Runs != 50 {
		t.Fatalf("unexpected result %+v", r)
	}

	bad := []struct{ name, answer, want string }{
		{"no block", "I could not do it.", "no result block"},
		{"not json", "```json\n{outcome: fixed}\n```", "not valid JSON"},
		{"unknown outcome", "```json\n{\"outcome\": \"maybe\"}\n```", "unknown outcome"},
		{"foreign url", "```json\n{\"outcome\": \"fixed\", \"pr_url\": \"https://evil.example/pull/1\"}\n```", "not a GitHub pull request"},
		{"negative count", "```json\n{\"outcome\": \"fixed\", \"failures_before\": -1}\n```", "failures_before"},
		{"fractional seed", "```json\n{\"outcome\": \"fixed\", \"seed\": 1.5}\n```", "seed"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseResult(tt.answer)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}

	r, err = ParseResult("Tried 500 runs.\n```json\n{\"outcome\": \"not_reproduced\", \"pr_url\": null, \"seed\": null, \"runs\": 500}\n```")
	if err != nil || r.Outcome != OutcomeNotReproduced || r.Seed != nil || *r.Runs != 500 {
		t.Fatalf("not_reproduced: %+v %v", r, err)
	}
	if !errors.Is(mustErr(ParseResult("")), ErrNoResultBlock) {
		t.Fatal("empty answer should be ErrNoResultBlock")
	}
}

// The cause is kept as one line, as written; the renderers make it safe
// for GitHub (publish.Text), which the hostile-corpus test checks.
func TestParseResultKeepsTheCauseOnOneLine(t *testing.T) {
	r, err := ParseResult("```json\n{\"outcome\": \"fixed\", \"cause\": \"<img src=x> ping @octocat\\n`rm`\"}\n```")
	if err != nil {
		t.Fatal(err)
	}
	if r.Cause != "<img src=x> ping @octocat `rm`" {
		t.Fatalf("cause: %q", r.Cause)
	}
}

func mustErr(_ Result, err error) error { return err }

func FuzzParseResult(f *testing.F) {
	f.Add(fixedAnswer)
	f.Add("```json\n{\"outcome\":\"not_reproduced\"}\n```")
	f.Add("```\n{\"outcome\":\"fixed\",\"seed\":1e300}\n```")
	f.Fuzz(func(t *testing.T, answer string) {
		r, err := ParseResult(answer)
		if err != nil {
			return
		}
		if r.Outcome != OutcomeFixed && r.Outcome != OutcomeNotFixed && r.Outcome != OutcomeNotReproduced && r.Outcome != OutcomeOutsideCode {
			t.Fatalf("outcome %q accepted", r.Outcome)
		}
		if r.PRURL != "" && !strings.HasPrefix(r.PRURL, "https://github.com/") {
			t.Fatalf("pr_url %q accepted", r.PRURL)
		}
		// One plain line, bounded; Markdown safety is publish.Text's part, when it is shown.
		if utf8.RuneCountInString(r.Cause) > MaxCauseLen+1 || strings.ContainsAny(r.Cause, "\n\r") {
			t.Fatalf("cause %q accepted", r.Cause)
		}
	})
}

// A polluter the answer names is a test file:line with the seed of the
// failing pair; anything else is refused.
func TestTheAnswersPolluter(t *testing.T) {
	r, err := ParseResult("```json\n" + `{"outcome": "fixed", "polluter": {"test": "test/b_test.exs:40", "seed": 7, "shares": "the :cdn_url\nkey"}}` + "\n```")
	if err != nil || r.Polluter == nil || *r.Polluter != (Polluter{Test: "test/b_test.exs:40", Seed: 7, Shares: "the :cdn_url key"}) {
		t.Fatalf("%+v %v", r.Polluter, err)
	}
	for _, bad := range []string{`{"test": "lib/b.ex; rm", "seed": 7}`, `{"test": "test/b_test.exs:40"}`, `{"test": "test/b_test.exs:40", "seed": -1}`} {
		if _, err := ParseResult("```json\n{\"outcome\": \"fixed\", \"polluter\": " + bad + "}\n```"); err == nil {
			t.Errorf("accepted polluter %s", bad)
		}
	}
	if r, err := ParseResult("```json\n{\"outcome\": \"fixed\", \"polluter\": null}\n```"); err != nil || r.Polluter != nil {
		t.Fatalf("%+v %v", r.Polluter, err)
	}
}
