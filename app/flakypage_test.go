package app

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/runs"
)

// GET /flaky follows the status page's rules: a rebinding Host is refused
// without a token, the token is needed with one.
func TestTheFlakyPageHasTheStatusPagesRules(t *testing.T) {
	h := newHarness(t, false, func(o *Options) { o.StatusToken = "" })
	port := h.server.URL[strings.LastIndex(h.server.URL, ":")+1:]
	if code, body := h.getAs("attacker.example:"+port, "/flaky"); code != http.StatusMisdirectedRequest || strings.Contains(body, "Flaky tests") {
		t.Fatalf("rebinding Host: %d", code)
	}
	if code, body := h.getAs("localhost:"+port, "/flaky"); code != http.StatusOK || !strings.Contains(body, "No flaky test seen yet") {
		t.Fatalf("loopback: %d %s", code, body)
	}
	guarded := newHarness(t, false, func(o *Options) { o.StatusToken = "status-secret" })
	if code, _ := guarded.getAs("pitcrew.example.com", "/flaky"); code != http.StatusForbidden {
		t.Fatalf("no token: %d", code)
	}
	if code, _ := guarded.getAs("pitcrew.example.com", "/flaky?token=status-secret"); code != http.StatusOK {
		t.Fatalf("the token: %d", code)
	}
	// The status page's link keeps the token it was reached with.
	if _, body := guarded.getAs("pitcrew.example.com", "/?token=status-secret"); !strings.Contains(body, `href="/flaky?token=status-secret"`) {
		t.Fatal("the status page links /flaky without its token")
	}
}

// The page lists each repository's tests with their sightings, a bar
// chart of the last 30 days, and what CI logs named them, escaped.
func TestTheFlakyPageShowsSightingsPerDay(t *testing.T) {
	h := newHarness(t, false, func(o *Options) { o.StatusToken = "s" })
	ctx := context.Background()
	for i, occ := range []string{"workflow_run:1/1", "workflow_run:2/1", "workflow_run:3/1"} {
		if _, err := h.app.Ledger.RecordSighting(ctx, "hexpm/hexpm", runs.Seen{Key: "flaky:hexpm/hexpm:test/a_test.exs:1", Occurrence: occ,
			Commit: testenv.HeadSHA, Where: "https://github.com/hexpm/hexpm/actions/runs/" + string(rune('1'+i)),
			Name: `test <script>alert(1)</script>`, Module: "Hexpm.ATest"}); err != nil {
			t.Fatal(err)
		}
	}
	code, body := h.getAs("pitcrew.example.com", "/flaky", "Authorization", "Bearer s")
	if code != http.StatusOK {
		t.Fatalf("%d", code)
	}
	for _, want := range []string{"<h2>hexpm/hexpm</h2>", "<code>test/a_test.exs:1</code>", "3 on 1 commit<", "&lt;script&gt;alert(1)&lt;/script&gt;",
		`<svg xmlns="http://www.w3.org/2000/svg" width="120" height="20"`, "peak 3", `fill="#cf222e"`, "<code>5779607</code>"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>") {
		t.Fatal("a test name reached the page unescaped")
	}
}
