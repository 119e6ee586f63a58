package app

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

// edit is payload with change applied to its decoded JSON.
func edit(t *testing.T, payload []byte, change func(ev map[string]any)) []byte {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(payload, &ev); err != nil {
		t.Fatal(err)
	}
	change(ev)
	out, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReplaySaysWhichRuleStoppedADelivery(t *testing.T) {
	h := newHarness(t, false)
	h.gh.SetPullFiles(12, "modified lib/hexpm/accounts.ex")
	labeled := testenv.LabeledEvent(t, "flaky", "alice", 7, flakyTest, "")
	for _, c := range []struct {
		name, event string
		payload     []byte
		why         string
	}{
		{"an action no handler reads", "issues", edit(t, labeled, func(ev map[string]any) { ev["action"] = "unlabeled" }),
			`pitcrew reads issues events whose action is labeled (the flaky label starts a fix) and edited (a dashboard's ticked boxes); this one's is "unlabeled"`},
		{"an edit of an issue that is no dashboard", "issues", edit(t, labeled, func(ev map[string]any) { ev["action"] = "edited" }),
			"an edited issue is read only when it is a flaky-tests dashboard (label pitcrew:dashboard); this one is not"},
		{"a label on a pull request", "issues", edit(t, labeled, func(ev map[string]any) {
			ev["issue"].(map[string]any)["pull_request"] = map[string]any{"url": "https://api.github.com/repos/hexpm/hexpm/pulls/7"}
		}), "the issue is a pull request: the flaky label starts a fix on an issue only"},
		{"no installation", "issues", edit(t, labeled, func(ev map[string]any) { delete(ev, "installation") }),
			"the delivery names no installation (installation.id)"},
		{"a run that failed", "workflow_run", edit(t, testenv.RerunPassedEvent(t, 111, testenv.HeadSHA), func(ev map[string]any) {
			ev["workflow_run"].(map[string]any)["conclusion"] = "failure"
		}), `the run's conclusion is "failure": pitcrew reads a run that passed`},
		{"a pull request closed unmerged", "pull_request", edit(t, testenv.MergedPullEvent(t, 12, testenv.MergeSHA), func(ev map[string]any) {
			ev["pull_request"].(map[string]any)["merged"] = false
		}), "the pull request was closed without a merge, and no run of pitcrew opened it"},
		{"a merge without migrations, as its handler says", "pull_request", testenv.MergedPullEvent(t, 12, testenv.MergeSHA),
			"ignoring the merge: it changed no file under a migrations/ directory"},
		{"a comment without a command", "issue_comment", testenv.CommentEvent(t, "alice", 7, 501, "Thanks, looks flaky to me", false),
			"the comment holds no /pitcrew command"},
		{"a bot's comment", "issue_comment", testenv.CommentEvent(t, "renovate[bot]", 7, 502, "/pitcrew retry", false),
			"the comment is by a bot (renovate[bot]): only people give pitcrew commands"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := h.opts
			o.Redis, o.EmbeddedRedis = redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()}), true
			got, err := Replay(t.Context(), o, c.event, "replay-why", c.payload, true)
			if err != nil || len(got.Actions) != 0 || len(got.Why) != 1 || !strings.Contains(got.Why[0], c.why) {
				t.Errorf("why %q, actions %+v, err %v; want %q", got.Why, got.Actions, err, c.why)
			}
		})
	}
}
