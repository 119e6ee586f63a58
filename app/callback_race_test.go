package app

import (
	"strings"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/sandbox"
)

// A session can end before pitcrew has recorded its id (the sandbox
// answers the start, then the run is written): while a run claimed a
// moment ago is still queued, a callback for a session pitcrew does not
// know is answered 503, which the sandbox sends again, not 200, which
// would leave the result to the reconciler minutes later.
func TestACallbackAheadOfItsSessionsRecordIsAskedAgain(t *testing.T) {
	h := newHarness(t, false)
	post := func() (int, string) {
		resp := h.sandbox.CallbackAnswer(t, h.server.URL+"/api/rush/hook", testRushSecret, sandbox.EventRunCompleted, "ses_early")
		return resp.StatusCode, resp.Header.Get("Retry-After")
	}
	if code, _ := post(); code != 200 {
		t.Fatalf("with no run starting, a callback for an unknown session answered %d", code)
	}
	run := runs.Run{Key: "flaky:hexpm/hexpm:test/a_test.exs:1", Kind: runs.KindFlaky, Repo: "hexpm/hexpm", InstallationID: 1}
	if _, _, err := h.app.Ledger.Claim(t.Context(), run, time.Hour, 10, runs.Subject{}); err != nil {
		t.Fatal(err)
	}
	if code, retry := post(); code != 503 || retry == "" {
		t.Fatalf("while a run is starting, a callback for a session not recorded answered %d (Retry-After %q)", code, retry)
	}
	if !strings.Contains(h.get("/metrics"), `pitcrew_sandbox_callbacks_total{outcome="unknown_session_retry"} 1`) || h.storedTasks() != 0 {
		t.Fatal("the callback was not counted as asked again, or something was queued for it")
	}
}
