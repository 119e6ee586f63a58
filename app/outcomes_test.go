package app

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/queue"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/sandbox"
)

// startOne labels issue n and waits for its run to be under way.
func (h *harness) startOne(n int) {
	h.t.Helper()
	h.deliver("issues", testenv.DeliveryID(), testenv.LabeledEvent(h.t, "flaky", "alice", n, flakyTest, ""))
	h.eventually("the run to start", h.commentContains(n, "the agent is working on it"))
}

func TestFailedRunSaysWhyAndHowToRetry(t *testing.T) {
	h := newHarness(t, true)
	h.startOne(20)
	h.finish("ses_1", sandbox.StatusFailed, "The sandbox ran out of memory while compiling deps.")
	h.eventually("the failure", h.commentContains(20, "failed: The sandbox ran out of memory"))
	if c := h.statusComment(20).Body; !strings.Contains(c, "remove the `flaky` label and add it again") {
		t.Fatalf("no retry hint:\n%s", c)
	}
	// Retrying as told starts a new run at once: failures hold no cooldown.
	h.startOne(20)
	_, keys := h.sandbox.StartRequests()
	if h.sandbox.SessionCount() != 2 || keys[1] != "flaky:hexpm/hexpm:"+flakyTest+"#2" {
		t.Fatalf("sessions %d, keys %q", h.sandbox.SessionCount(), keys)
	}
	if n := h.gh.Count(opCreateComment); n != 1 {
		t.Fatalf("%d comments created on one issue", n)
	}
}

func TestAnOutcomeGitHubRefusedIsShownByTheTasksRetry(t *testing.T) {
	h := newHarness(t, true)
	h.startOne(19)
	// The outcome is recorded, then every attempt at the comment's edit
	// fails: the refresh task fails, and its retry must show the outcome
	// the ledger already has.
	h.gh.FailNext(http.StatusBadGateway, nil, 4)
	h.finish("ses_1", sandbox.StatusFailed, "The sandbox ran out of memory while compiling deps.")
	h.eventually("the failure", h.commentContains(19, "failed: The sandbox ran out of memory"))
	if r, _ := h.app.Ledger.BySession(t.Context(), "ses_1"); r.State != runs.Failed || !strings.HasPrefix(r.RecordedBy, "cb:") {
		t.Fatalf("run %s, recorded by %q", r.State, r.RecordedBy)
	}
}

func TestNotReproducedAndCooldown(t *testing.T) {
	h := newHarness(t, true)
	h.startOne(21)
	h.finish("ses_1", sandbox.StatusCompleted, "No failure in 500 runs.\n```json\n{\"outcome\":\"not_reproduced\",\"pr_url\":null,\"runs\":500}\n```")
	h.eventually("the outcome", h.commentContains(21, "could not reproduce the failure in 500 runs; no pull request was opened"))

	// Within the cooldown, another report of the same test links to it.
	h.deliver("issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky", "alice", 22, flakyTest, ""))
	h.eventually("the cooldown answer", h.commentContains(22, "by a run started from #21; a new run can start after"))
	if h.sandbox.SessionCount() != 1 {
		t.Fatalf("%d sessions", h.sandbox.SessionCount())
	}
}

func TestDeletedStatusCommentIsRecreated(t *testing.T) {
	h := newHarness(t, true)
	h.startOne(23)
	h.gh.DeleteComment(h.statusComment(23).ID)
	h.finish("ses_1", sandbox.StatusCompleted, fixedAnswer)
	h.eventually("a new status comment with the outcome", h.commentContains(23, "pull/1234"))
}

func TestAnswerWithoutResultBlock(t *testing.T) {
	h := newHarness(t, true)
	h.startOne(24)
	h.finish("ses_1", sandbox.StatusCompleted, "I fixed it, trust me.")
	h.eventually("the unreadable outcome", h.commentContains(24, "its answer had no readable result"))
	if body := h.statusComment(24).Body; !strings.Contains(body, "I fixed it, trust me.") || !strings.Contains(body, "<details>") {
		t.Fatalf("the answer is not shown:\n%s", body)
	}
}

// An answer without its JSON block still gives the pull request it opened
// (of the run's own repository only) and the answer itself.
func TestAnAnswerWithoutResultBlockKeepsItsPullRequest(t *testing.T) {
	h := newHarness(t, true)
	h.startOne(26)
	h.finish("ses_1", sandbox.StatusCompleted, "Upstream has https://github.com/elixir-ecto/ecto/pull/4400.\nI opened https://github.com/hexpm/hexpm/pull/55 with the fix.")
	h.eventually("the pull request read from the text", h.commentContains(26, "its answer links https://github.com/hexpm/hexpm/pull/55"))
	body := h.statusComment(26).Body
	if strings.Contains(body, "links https://github.com/elixir-ecto") || !strings.Contains(body, "I opened https://github.com/hexpm/hexpm/pull/55 with the fix.") {
		t.Fatalf("status comment:\n%s", body)
	}
}

func TestCallbacksAreOnlyHints(t *testing.T) {
	h := newHarness(t, true)
	h.startOne(25)
	// A forged callback changes nothing.
	if code := h.sandbox.Callback(t, h.server.URL+"/api/rush/hook", "whsec_d3Jvbmctc2VjcmV0", sandbox.EventRunCompleted, "ses_1"); code != http.StatusUnauthorized {
		t.Fatalf("forged callback answered %d", code)
	}
	// A genuine callback that runs ahead of the session changes nothing
	// either: the API still says running.
	if code := h.callback(sandbox.EventRunCompleted, "ses_1"); code != http.StatusAccepted {
		t.Fatalf("callback answered %d", code)
	}
	h.eventually("the refresh", func() bool { return strings.Contains(h.logs.String(), "session has not ended yet") })
	// An unknown session is acknowledged and ignored.
	if code := h.callback(sandbox.EventRunFailed, "ses_999"); code != http.StatusOK {
		t.Fatalf("unknown session answered %d", code)
	}
	if r, _ := h.app.Ledger.BySession(t.Context(), "ses_1"); r.State != "started" {
		t.Fatalf("run is %s", r.State)
	}
	if c := h.statusComment(25).Body; !strings.Contains(c, "the agent is working on it") {
		t.Fatalf("status changed:\n%s", c)
	}
}

func TestSandboxErrorsAreRetriedWithTheSameKey(t *testing.T) {
	h := newHarness(t, true)
	h.sandbox.FailNextStarts(2)
	h.startOne(26)
	reqs, keys := h.sandbox.StartRequests()
	if len(reqs) != 3 || h.sandbox.SessionCount() != 1 || keys[0] != keys[1] || keys[1] != keys[2] {
		t.Fatalf("%d start requests, %d sessions, keys %q", len(reqs), h.sandbox.SessionCount(), keys)
	}
}

// A sandbox down when a fix is asked for shows on the issue at once, not
// minutes later: queued, what the sandbox answered, and that pitcrew tries
// again; then the run starts on a later try, with the same key.
func TestASandboxDownIsShownWhilePitcrewTriesAgain(t *testing.T) {
	h := newHarness(t, true)
	h.sandbox.FailNextStarts(5) // every call of the task's first try
	h.deliver("issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky", "alice", 36, flakyTest, ""))
	h.eventually("the wait on the issue", h.commentContains(36, "🕓 queued: the sandbox answered HTTP 500 at "))
	if c := h.statusComment(36).Body; !strings.Contains(c, "pitcrew tries again, and says here if it gives up") {
		t.Fatalf("status comment:\n%s", c)
	}
	h.eventually("the run to start on a later try", h.commentContains(36, "the agent is working on it"))
	_, keys := h.sandbox.StartRequests()
	if h.sandbox.SessionCount() != 1 || len(keys) != 6 || keys[0] != keys[5] {
		t.Fatalf("%d sessions, keys %q", h.sandbox.SessionCount(), keys)
	}
}

func fastReconciler(o *Options) {
	o.Schedule = queue.Schedule{SweepEvery: time.Hour, ReconcileEvery: 200 * time.Millisecond}
	o.StaleAfter = 300 * time.Millisecond
}

func TestLostCallbackIsCaughtByTheReconciler(t *testing.T) {
	h := newHarness(t, true, fastReconciler)
	h.startOne(27)
	h.sandbox.Finish("ses_1", sandbox.StatusCompleted, fixedAnswer) // and no callback arrives
	h.eventually("the reconciler to find the outcome", h.commentContains(27, "pull/1234"))
}

func TestSessionWithoutOutcomeFailsAfterMaxAge(t *testing.T) {
	h := newHarness(t, true, fastReconciler, func(o *Options) { o.MaxRunAge = 500 * time.Millisecond })
	h.startOne(28)
	h.eventually("the run to be given up", h.commentContains(28, "the sandbox reported no outcome within 500ms"))
}

func TestCommentCreatedButNotRecordedIsFoundNotDuplicated(t *testing.T) {
	h := newHarness(t, true)
	// An attempt created the comment, then died before recording its id.
	subject := runs.Subject{Repo: "hexpm/hexpm", Issue: 29}
	if err := h.app.Ledger.SaveStatus(t.Context(), subject, runs.Status{InstallationID: testenv.Installation, Creating: true}); err != nil {
		t.Fatal(err)
	}
	gh, _ := github.NewClients(h.opts.ClientCreator).Installation(testenv.Installation)
	if _, err := gh.CreateComment(t.Context(), github.Repo{Owner: "hexpm", Name: "hexpm"}, 29, publish.StatusMarker+"\nqueued"); err != nil {
		t.Fatal(err)
	}
	h.startOne(29)
	if n := len(h.gh.Comments("hexpm/hexpm", 29)); n != 1 {
		t.Fatalf("%d comments", n)
	}
}

func TestStatusPageShowsRunsAndDeliveries(t *testing.T) {
	h := newHarness(t, true, func(o *Options) { o.StatusToken = "" })
	h.startOne(95)
	// The worker records the delivery just after the run starts.
	h.eventually("the delivery on the status page", func() bool { return strings.Contains(h.get("/"), "handled") })
	page := h.get("/")
	redisWord := map[bool]string{false: "external", true: "embedded"}[testenv.RedisIsEmbedded()]
	for _, want := range []string{"pitcrew · pitcrew", redisWord, "test/hexpm/web/controllers/package_controller_test.exs:42", "started", "hexpm/hexpm", "/s/ses_1", "issues", "handled"} {
		if !strings.Contains(page, want) {
			t.Errorf("status page lacks %q", want)
		}
	}
	// With a token set, the page needs it even from loopback.
	guarded := newHarness(t, false, func(o *Options) { o.StatusToken = "status-secret" })
	resp, _ := http.Get(guarded.server.URL + "/")
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("without the token: %d", resp.StatusCode)
	}
	if !strings.Contains(guarded.get("/?token=status-secret"), "No runs yet") {
		t.Fatal("with the token the page is not shown")
	}
}

// The counts a fix claims stand beside those pitcrew reads in the run's
// own evidence log, downloaded from the session like any artifact.
func TestTheRunsEvidenceLogIsCountedByPitcrew(t *testing.T) {
	h := newHarness(t, true)
	h.startOne(27)
	log, err := os.ReadFile(testenv.Path("evidence", "testdata", "runlogs", "backed.log"))
	if err != nil {
		t.Fatal(err)
	}
	h.sandbox.AddArtifact("ses_1", "pitcrew-evidence.log", string(log))
	h.finish("ses_1", sandbox.StatusCompleted, fixedAnswer) // claims seed 48213, 7 failures before and 50 runs
	h.eventually("the measured counts", h.commentContains(27, "Measured in the run's log: 2 of 4 runs failed before the fix"))
	body := h.statusComment(27).Body
	for _, want := range []string{"the log shows 6 runs after the fix; the answer says 50", "seed 48213 failed in none of the log's runs before the fix"} {
		if !strings.Contains(body, want) {
			t.Fatalf("lacks %q:\n%s", want, body)
		}
	}
}
