package app

import (
	"bytes"
	"net/http"
	"strconv"
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
	v, err := sandbox.NewVerifier(testRushSecret)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"event":"run.completed","session_id":"ses_early"}`)
	post := func(id string) *http.Response {
		at := time.Now().Unix()
		req, _ := http.NewRequest("POST", h.server.URL+"/api/rush/hook", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("webhook-id", id)
		req.Header.Set("webhook-timestamp", strconv.FormatInt(at, 10))
		req.Header.Set("webhook-signature", v.Sign(id, at, body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := post("msg_none"); resp.StatusCode != 200 {
		t.Fatalf("with no run starting, a callback for an unknown session answered %d", resp.StatusCode)
	}
	run := runs.Run{Key: "flaky:hexpm/hexpm:test/a_test.exs:1", Kind: runs.KindFlaky, Repo: "hexpm/hexpm", InstallationID: 1}
	if _, _, err := h.app.Ledger.Claim(t.Context(), run, time.Hour, 10, runs.Subject{}); err != nil {
		t.Fatal(err)
	}
	resp := post("msg_starting")
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("while a run is starting, a callback for a session not recorded answered %d (Retry-After %q)", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if !strings.Contains(h.get("/metrics"), `pitcrew_sandbox_callbacks_total{outcome="unknown_session_retry"} 1`) || h.storedTasks() != 0 {
		t.Fatal("the callback was not counted as asked again, or something was queued for it")
	}
}
