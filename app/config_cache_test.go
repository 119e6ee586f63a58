package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/handlers"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
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

// cacheProbe is a handler that reads the repository's cached
// configuration and counts the round trips the read cost.
type cacheProbe struct {
	ledger *runs.Ledger
	trips  *testenv.Trips
	got    string
	cost   int64
}

func (p *cacheProbe) Handles() []string { return []string{"issues"} }

func (p *cacheProbe) Handle(ctx context.Context, _, _ string, _ []byte) error {
	before := p.trips.RoundTrips.Load()
	v, _, err := p.ledger.Cached(ctx, "config:hexpm/hexpm")
	p.got, p.cost = string(v), p.trips.RoundTrips.Load()-before
	return err
}

func TestTheWorkerReadsTheRepositorysConfigurationWithItsOwnChecks(t *testing.T) {
	rdb := testenv.Redis(t)
	ledger := runs.NewLedger(rdb)
	if err := ledger.Cache(t.Context(), "config:hexpm/hexpm", []byte(`{"content":"flaky: {}"}`), time.Minute); err != nil {
		t.Fatal(err)
	}
	trips := &testenv.Trips{}
	rdb.AddHook(trips)
	probe := &cacheProbe{ledger: ledger, trips: trips}
	w := NewDeliveryWorker(rdb, ledger, probe)
	w.CachedReads = handlers.CachedReads
	id := testenv.DeliveryID()
	framed := append([]byte("issues\n"+id+"\n"), testenv.LabeledEvent(t, "flaky", "alice", 1, "test/a_test.exs:1", "")...)
	if err := w.ProcessTask(t.Context(), queue.DeliveryTask(id, framed)); err != nil {
		t.Fatal(err)
	}
	if probe.got != `{"content":"flaky: {}"}` || probe.cost != 0 {
		t.Fatalf("the handler read %q in %d round trips", probe.got, probe.cost)
	}
}
