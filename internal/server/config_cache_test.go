package server

import (
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

func TestConfigIsCachedUntilAPushChangesIt(t *testing.T) {
	h := newHarness(t, true)
	const opContents = "GET /repos/{owner}/{repo}/contents/{path}"
	h.gh.SetFile("hexpm/hexpm", ".github/pitcrew.yml", "flaky:\n  verify_runs: 60\n")
	h.startOne(90)
	h.deliver("issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky", "alice", 91, "test/other_test.exs:3", ""))
	h.eventually("the second run", h.commentContains(91, "the agent is working on it"))
	if n := h.gh.Count(opContents); n != 1 {
		t.Fatalf("configuration read %d times for two labels", n)
	}
	// A push to the default branch that changes the file drops the cache.
	h.gh.SetFile("hexpm/hexpm", ".github/pitcrew.yml", "flaky:\n  verify_runs: 70\n")
	h.deliver("push", testenv.DeliveryID(), testenv.PushEvent(t, strings.Repeat("a", 40), []any{}, []any{".github/pitcrew.yml"}))
	h.eventually("the push handled", func() bool { return strings.Count(h.logs.String(), "delivery handled") == 3 })
	h.deliver("issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky", "alice", 92, "test/third_test.exs:4", ""))
	h.eventually("the third run", func() bool { return h.sandbox.SessionCount() == 3 })
	reqs, _ := h.sandbox.StartRequests()
	if !strings.Contains(reqs[2].Input, "at least 70 and at most 500") || h.gh.Count(opContents) != 2 {
		t.Fatalf("the changed configuration was not read again (%d reads)", h.gh.Count(opContents))
	}
}
