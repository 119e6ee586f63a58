package app

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/pitcrew/pitcrew/hook"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/queue"
)

// storedTasks counts what the intake put on the queue.
func (h *harness) storedTasks() int {
	in := asynq.NewInspectorFromRedisClient(h.redis)
	n := 0
	for _, q := range []string{queue.QueueGitHub, queue.QueueOutcome} {
		if info, err := in.GetQueueInfo(q); err == nil {
			n += info.Size + info.Completed
		}
	}
	return n
}

func TestIntakeRejectsBadDeliveriesBeforeStoringAnything(t *testing.T) {
	h := newHarness(t, false)
	good := testenv.LabeledEvent(t, "flaky", "alice", 1, flakyTest, "")
	big := append([]byte(`{"action":"labeled","pad":"`), bytes.Repeat([]byte("x"), hook.MaxGitHubBody)...)
	big = append(big, `"}`...)
	cases := []struct {
		name      string
		payload   []byte
		signature string
		want      int
	}{
		{"wrong signature", good, sign("not-the-secret", good), http.StatusUnauthorized},
		{"no signature", good, "", http.StatusUnauthorized},
		{"malformed signature", good, "sha256=zz", http.StatusUnauthorized},
		{"a SHA-1 signature in the SHA-256 header", good, "sha1=" + hmacSHA1(testWebhookSecret, good), http.StatusUnauthorized},
		{"malformed JSON", []byte(`{"action":`), sign(testWebhookSecret, []byte(`{"action":`)), http.StatusBadRequest},
		{"body over the limit", big, sign(testWebhookSecret, big), http.StatusRequestEntityTooLarge},
	}
	for _, c := range cases {
		if code := h.deliverSigned("issues", testenv.DeliveryID(), c.payload, c.signature); code != c.want {
			t.Errorf("%s: answered %d, want %d", c.name, code, c.want)
		}
	}
	if n := h.storedTasks(); n != 0 {
		t.Fatalf("%d tasks stored after rejected deliveries", n)
	}
	if keys := h.redis.Keys(t.Context(), "pitcrew:*").Val(); len(keys) != 0 {
		t.Fatalf("ledger touched: %v", keys)
	}
	if code := h.deliver("issues", testenv.DeliveryID(), good); code != http.StatusAccepted || h.storedTasks() != 1 {
		t.Fatalf("a good delivery answered %d", code)
	}
	if code := h.deliver("star", testenv.DeliveryID(), []byte(`{"action":"created"}`)); code != http.StatusOK || h.storedTasks() != 1 {
		t.Fatalf("an event pitcrew does not handle answered %d", code)
	}
}

func TestLabelWithoutUsableTestExplainsAndStartsNothing(t *testing.T) {
	h := newHarness(t, true)
	body := "Candidates: test/../../etc/passwd_test.exs:1 and test/hexpm/a_test.exs:1;curl${IFS}evil.sh and test/hexpm/accounts/user_test.exs"
	h.deliver("issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky", "alice", 5, "Flaky tests", body))
	h.eventually("the explaining comment", h.commentContains(5, "Nothing was started"))
	c := h.statusComment(5).Body
	for _, want := range []string{"contains `..`", "contains characters a test path cannot have", "has no line number", "test/path/to/file_test.exs:LINE", "remove the `flaky` label"} {
		if !strings.Contains(c, want) {
			t.Errorf("comment lacks %q:\n%s", want, c)
		}
	}
	if h.sandbox.SessionCount() != 0 {
		t.Fatal("a session was started")
	}
}

func TestLabelFromUserWithoutWriteAccess(t *testing.T) {
	h := newHarness(t, true)
	h.gh.SetPermission("mallory", "read")
	h.deliver("issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky", "mallory", 6, flakyTest, ""))
	h.eventually("the refusal", h.commentContains(6, "only people with write access"))
	if h.sandbox.SessionCount() != 0 {
		t.Fatal("a session was started for a reader")
	}
}

func TestLabelsIgnored(t *testing.T) {
	h := newHarness(t, true)
	h.deliver("issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky", "dependabot[bot]", 9, flakyTest, ""))
	h.deliver("issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "bug", "alice", 10, flakyTest, ""))
	h.eventually("both deliveries handled", func() bool { return strings.Count(h.logs.String(), "delivery handled") == 2 })
	if h.sandbox.SessionCount() != 0 || h.gh.Count(opCreateComment) != 0 {
		t.Fatalf("sessions %d, comments %d", h.sandbox.SessionCount(), h.gh.Count(opCreateComment))
	}
	// pitcrew's own bot may label (e.g. issues it files itself), without a
	// permission check.
	h.deliver("issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky", "pitcrew[bot]", 11, flakyTest, ""))
	h.eventually("a run for pitcrew's own label", func() bool { return h.sandbox.SessionCount() == 1 })
}

func TestABrokenConfigIsReportedInItsOwnWordsAtTheRefItWasReadAt(t *testing.T) {
	h := newHarness(t, true)
	h.gh.SetFile("hexpm/hexpm", ".github/pitcrew.yml", "flaky:\n  lable: flaky-test\n  verify_runs: five\n")
	h.deliver("issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky", "alice", 12, flakyTest, ""))
	h.eventually("the config error", h.commentContains(12, "flaky.lable: unknown key"))
	if h.sandbox.SessionCount() != 0 {
		t.Fatal("a session started with a broken configuration")
	}
	body := h.gh.Comments("hexpm/hexpm", 12)[0].Body
	for _, want := range []string{
		"could not use `.github/pitcrew.yml` as read from `hexpm/hexpm@main`",
		"\n- line 2: flaky.lable: unknown key (the keys of flaky are: enabled, label, verify\\_runs,",
		"\n- line 3: flaky.verify\\_runs: \"five\" is not a number (a whole number of runs of the fixed test, 1 to 500, default 50)",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the comment lacks %q:\n%s", want, body)
		}
	}
}

func TestConfiguredLabelAndOrgDefaults(t *testing.T) {
	h := newHarness(t, true)
	// No file in the repository: the owner's .github repository supplies it.
	h.gh.SetFile("hexpm/.github", "pitcrew.yml", "flaky:\n  label: flaky-test\n  verify_runs: 80\n")
	h.deliver("issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky", "alice", 13, "test/a_test.exs:1", ""))
	h.deliver("issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky-test", "alice", 14, "test/b_test.exs:2", ""))
	h.eventually("both deliveries handled", func() bool { return strings.Count(h.logs.String(), "delivery handled") == 2 })
	reqs, _ := h.sandbox.StartRequests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].Input, "test/b_test.exs:2") || !strings.Contains(reqs[0].Input, "at least 80 and at most 500") {
		t.Fatalf("want one run, for the configured label, with verify_runs from the org configuration; got %d", len(reqs))
	}
	if len(h.gh.Comments("hexpm/hexpm", 13)) != 0 {
		t.Fatal("the default label was acted on although the configuration renames it")
	}
}

func TestDailyLimit(t *testing.T) {
	h := newHarness(t, true)
	h.gh.SetFile("hexpm/hexpm", ".github/pitcrew.yml", "daily_limit: 1\n")
	h.deliver("issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky", "alice", 40, "test/a_test.exs:1", ""))
	h.eventually("the first run", h.commentContains(40, "the agent is working on it"))
	h.deliver("issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky", "alice", 41, "test/b_test.exs:2 and test/a_test.exs:1", ""))
	h.eventually("the limit", h.commentContains(41, "`test/b_test.exs:2`: not started: the daily limit of 1 runs for this repository is reached."))
	// A test with a live run still attaches: the limit only stops new runs.
	if c := h.statusComment(41).Body; !strings.Contains(c, "already being fixed by a run started from #40") {
		t.Fatalf("attached test missing:\n%s", c)
	}
	if h.sandbox.SessionCount() != 1 {
		t.Fatalf("%d sessions", h.sandbox.SessionCount())
	}
}

func TestGitHubOutagesAndRateLimitsAreWaitedOut(t *testing.T) {
	h := newHarness(t, true)
	h.gh.FailNext(502, nil, 2)
	h.gh.FailNext(403, map[string]string{"Retry-After": "1"}, 1)                                     // secondary rate limit
	h.gh.FailNext(403, map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": "0"}, 1) // primary, already reset
	h.startOne(80)
	if n := h.gh.Count(opCreateComment); n != 1 || h.sandbox.SessionCount() != 1 {
		t.Fatalf("%d comments, %d sessions", n, h.sandbox.SessionCount())
	}
}

func TestGitHub404FailsTheStepAtOnce(t *testing.T) {
	h := newHarness(t, true)
	h.gh.FailNext(404, nil, 20) // every call, retried or not, would get the same
	id := testenv.DeliveryID()
	h.deliver("issues", id, testenv.LabeledEvent(t, "flaky", "alice", 81, flakyTest, ""))
	// A step the queue will retry is "retry"; one it gave up on is "archived".
	inspector := asynq.NewInspectorFromRedisClient(h.redis)
	h.eventually("the delivery to be given up", func() bool {
		info, err := inspector.GetTaskInfo(queue.QueueGitHub, "gh:"+id)
		return err == nil && info.State == asynq.TaskStateArchived
	})
	if info, _ := inspector.GetTaskInfo(queue.QueueGitHub, "gh:"+id); info.Retried != 0 {
		t.Fatalf("a 404 was retried %d times", info.Retried)
	}
}

func TestAnotherInstallationCannotReachARun(t *testing.T) {
	h := newHarness(t, true)
	h.startOne(96)
	foreign := strings.Replace(string(testenv.LabeledEvent(t, "flaky", "alice", 97, flakyTest, "")), `"id":42`, `"id":43`, 1)
	h.deliver("issues", testenv.DeliveryID(), []byte(foreign))
	h.eventually("the refusal", h.commentContains(97, "belongs to another installation"))
	if h.sandbox.SessionCount() != 1 {
		t.Fatalf("%d sessions", h.sandbox.SessionCount())
	}
	if subjects, _ := h.app.Ledger.Subjects(t.Context(), "flaky:hexpm/hexpm:"+flakyTest+"#1"); len(subjects) != 1 {
		t.Fatalf("the foreign issue subscribed to the run: %v", subjects)
	}
}

func hmacSHA1(secret string, body []byte) string {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}
