package app

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/sandbox"
)

// A flaky fix's evidence check run names the tests of the default branch
// that share its cause, linked at the commit scanned; a tarball GitHub
// will not give is said so, and the evidence is posted all the same.
func TestTheEvidenceNamesSiblingsThatShareTheCause(t *testing.T) {
	const head = "1111111111111111111111111111111111111111"
	fix := "diff --git a/test/hexpm/web/cdn_test.exs b/test/hexpm/web/cdn_test.exs\n--- a/test/hexpm/web/cdn_test.exs\n+++ b/test/hexpm/web/cdn_test.exs\n" +
		"@@ -3,3 +3,3 @@\n   setup do\n-    Application.put_env(:hexpm, :cdn_url, \"http://cdn\")\n+    start_supervised!({Hexpm.CDN, url: \"http://cdn\"})\n   end\n"
	sibling := "defmodule Hexpm.Web.AssetsTest do\n  use Hexpm.ConnCase, async: true\n\n  test \"asset urls\" do\n    assert Application.get_env(:hexpm, :cdn_url) =~ \"cdn\"\n  end\nend\n"
	for _, c := range []struct {
		name  string
		fault func(h *harness)
		want  string
	}{
		{"scanned", nil, fmt.Sprintf("- [test/hexpm/web/assets\\_test.exs:5](https://github.com/hexpm/hexpm/blob/%s/test/hexpm/web/assets_test.exs#L5) `asset urls`: reads :hexpm, :cdn\\_url (app-env) in a module that runs async", testenv.BaseSHA)},
		{"the tarball refused", func(h *harness) { h.gh.FailOn("GET /repos/{owner}/{repo}/tarball/{ref}", 403, nil, 1) },
			"not scanned: GitHub answered 403 for the repository's tarball."},
		{"turned off", func(h *harness) { h.gh.SetFile("hexpm/hexpm", ".github/pitcrew.yml", "flaky:\n  siblings: false\n") }, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, true, func(o *Options) { o.DashboardEvery = 200 * time.Millisecond })
			h.gh.SetPull(1234, head, "open", false, fix)
			h.gh.SetFile("hexpm/hexpm", "test/hexpm/web/assets_test.exs", sibling)
			h.gh.SetFile("hexpm/hexpm", "lib/hexpm/cdn.ex", "defmodule Hexpm.CDN do\nend\n")
			if c.fault != nil {
				c.fault(h)
			}
			h.startOne(37)
			h.finish("ses_1", sandbox.StatusCompleted, fixedAnswer)
			h.eventually("the evidence check run", func() bool { return len(h.evidenceRuns()) == 1 })
			out, _ := h.evidenceRuns()[0]["output"].(map[string]any)
			summary := fmt.Sprint(out["summary"])
			if c.want == "" {
				if strings.Contains(summary, "Siblings") || h.gh.Count("GET /repos/{owner}/{repo}/tarball/{ref}") != 0 {
					t.Fatalf("siblings scanned while turned off:\n%s", summary)
				}
				return
			}
			if !strings.Contains(summary, "### Siblings that share the cause") || !strings.Contains(summary, c.want) {
				t.Fatalf("evidence summary lacks %q:\n%s", c.want, summary)
			}
			if c.fault != nil {
				return
			}
			// The sibling is on the dashboard, predicted, with a box to tick.
			h.eventually("the predicted row", func() bool {
				_, body := h.dashboardIssue()
				return strings.Contains(body, "### Predicted, not seen yet") && strings.Contains(body, "- [ ] `test/hexpm/web/assets_test.exs:4` asset urls <!-- pitcrew:tick:") &&
					strings.Contains(body, "Predicted on ") && strings.Contains(body, "from [PR #1234](https://github.com/hexpm/hexpm/pull/1234) ([the test](https://github.com/hexpm/hexpm/blob/"+testenv.BaseSHA+"/test/hexpm/web/assets_test.exs#L4))")
			})
		})
	}
}
