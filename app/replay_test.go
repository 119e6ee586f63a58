package app

import (
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

func TestReplayDryRunWritesNothing(t *testing.T) {
	h := newHarness(t, false)
	h.gh.SetJob(111, 1, 11, "test", "failure", testenv.ExUnitLog(t, "gha_fail_seed_1.txt"))
	h.gh.SetJob(111, 2, 110, "test", "success", testenv.ExUnitLog(t, "gha_pass_seed_2.txt"))
	h.gh.SetPullFiles(12, "added priv/repo/migrations/20261201_a.exs")
	cases := []struct {
		event   string
		payload []byte
		want    []string // action kinds
		key     string
	}{
		{"issues", testenv.LabeledEvent(t, "flaky", "alice", 7, flakyTest, ""), []string{"session", "comment"}, "flaky:hexpm/hexpm:" + flakyTest + "#1"},
		{"workflow_run", testenv.RerunPassedEvent(t, 111, testenv.HeadSHA), []string{"session", "check_run"}, "flaky:hexpm/hexpm:test/racy_b_test.exs:25#1"},
		{"pull_request", testenv.MergedPullEvent(t, 12, testenv.MergeSHA), []string{"session", "comment"}, "migration:hexpm/hexpm:" + testenv.MergeSHA + "#1"},
	}
	for _, c := range cases {
		throwaway := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
		o := h.opts
		o.Redis, o.EmbeddedRedis = throwaway, true
		got, err := Replay(t.Context(), o, c.event, "replay-1", c.payload, true)
		if err != nil {
			t.Fatalf("%s: %v", c.event, err)
		}
		var kinds []string
		for _, a := range got.Actions {
			kinds = append(kinds, a.Kind)
			if a.Kind == "session" && (a.IdempotencyKey != c.key || a.Prompt == "") {
				t.Errorf("%s: session %+v", c.event, a)
			}
		}
		if strings.Join(kinds, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: actions %v, want %v", c.event, kinds, c.want)
		}
	}
	// Nothing to do: the replay says which rule.
	for _, c := range []struct {
		payload []byte
		why     string
	}{
		{testenv.LabeledEvent(t, "bug", "alice", 7, flakyTest, ""), "ignoring the label: it is not the flaky label of this repository"},
		{testenv.LabeledEvent(t, "flaky", "dependabot[bot]", 7, flakyTest, ""), "ignoring a label added by a bot"},
		{[]byte(strings.Replace(string(testenv.LabeledEvent(t, "flaky", "alice", 7, flakyTest, "")), `"action":"labeled"`, `"action":"unlabeled"`, 1)), `this one's is "unlabeled"`},
		{testenv.DashboardEditEvent(t, "alice", 500, "- [x] `test/a_test.exs:1` <!-- pitcrew:tick:0123456789ab -->"), "not this repository's dashboard"},
	} {
		o := h.opts
		o.Redis, o.EmbeddedRedis = redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()}), true
		got, err := Replay(t.Context(), o, "issues", "replay-2", c.payload, true)
		if err != nil || len(got.Actions) != 0 || len(got.Why) != 1 || !strings.Contains(got.Why[0], c.why) {
			t.Errorf("why %q, actions %+v, %v; want %q", got.Why, got.Actions, err, c.why)
		}
	}
	for _, r := range h.gh.Requests() {
		if r.Method != "GET" && !strings.HasSuffix(r.Operation, "/access_tokens") {
			t.Errorf("a dry run called %s %s", r.Method, r.Path)
		}
	}
	if h.sandbox.SessionCount() != 0 {
		t.Error("a dry run started a session")
	}
}
