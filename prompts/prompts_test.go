package prompts

import (
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew/exunit"
)

func TestFlakyPrompt(t *testing.T) {
	ref := exunit.TestRef{Path: "test/hexpm/web/controllers/package_controller_test.exs", Line: 42}
	p, err := Flaky(FlakyInput{Repo: "hexpm/hexpm", Issue: 12, Test: ref, VerifyRuns: 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"hexpm/hexpm", "issue #12", "mix test test/hexpm/web/controllers/package_controller_test.exs:42", "Run the test 50 times", "never fix it with a retry", "```json"} {
		if !strings.Contains(strings.ToLower(p), strings.ToLower(want)) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if p2, _ := Flaky(FlakyInput{Repo: "hexpm/hexpm", Test: ref, VerifyRuns: 50}); strings.Contains(p2, "issue #") {
		t.Error("prompt without an issue mentions one")
	}
	for _, in := range []FlakyInput{
		{Repo: "hexpm/hexpm; rm", Test: ref, VerifyRuns: 50},
		{Repo: "hexpm/hexpm", Test: exunit.TestRef{Path: "test/../x_test.exs", Line: 1}, VerifyRuns: 50},
		{Repo: "hexpm/hexpm", Test: ref, VerifyRuns: 0},
	} {
		if _, err := Flaky(in); err == nil {
			t.Errorf("Flaky(%+v) accepted invalid input", in)
		}
	}
}
