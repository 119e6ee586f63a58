package app

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

// A worker that dies after the 2xx, even after the sandbox made the session
// but before pitcrew recorded it, loses nothing: another worker finishes the
// job, and the Idempotency-Key keeps it to one session.
func TestWorkerCrashBetweenAcknowledgeAndStart(t *testing.T) {
	h := newHarness(t, false)
	if code := h.deliver("issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky", "alice", 30, flakyTest, "")); code != 202 {
		t.Fatalf("answered %d", code)
	}
	if h.storedTasks() != 1 || h.sandbox.SessionCount() != 0 {
		t.Fatal("the delivery is not stored, or work started inside the request")
	}

	release := make(chan struct{})
	var calls atomic.Int32
	h.sandbox.AfterCreate = func() {
		if calls.Add(1) == 1 {
			<-release
		}
	}
	t.Cleanup(func() { close(release) })

	crashing := h.newApp()
	if err := crashing.StartWorker(); err != nil {
		t.Fatal(err)
	}
	h.eventually("the first worker to create the session", func() bool { return h.sandbox.SessionCount() == 1 })
	crashing.Shutdown() // the worker stops mid-task; the task goes back on the queue

	h.startWorker(h.app)
	h.eventually("the second worker to finish the job", h.commentContains(30, "/s/ses_1"))
	reqs, keys := h.sandbox.StartRequests()
	if h.sandbox.SessionCount() != 1 || len(reqs) != 2 || keys[0] != keys[1] {
		t.Fatalf("sessions %d, start requests %d, keys %q", h.sandbox.SessionCount(), len(reqs), keys)
	}
	if n := h.gh.Count(opCreateComment); n != 1 {
		t.Fatalf("%d status comments", n)
	}
}

func TestInstallationCreatesTheFlakyLabel(t *testing.T) {
	h := newHarness(t, true)
	h.deliver("installation", testenv.DeliveryID(), testenv.Event(t, "installation.created.json", func(map[string]any) {}))
	h.eventually("the label in the installed repository", func() bool { return h.gh.HasLabel("Codertocat/Hello-World", "flaky") })

	added := func() []byte {
		return testenv.Event(t, "installation_repositories.added.json", func(map[string]any) {})
	}
	h.deliver("installation_repositories", testenv.DeliveryID(), added())
	h.deliver("installation_repositories", testenv.DeliveryID(), added()) // a second, separate event: label exists
	h.eventually("both deliveries handled", func() bool { return strings.Count(h.logs.String(), "delivery handled") == 3 })
	if !h.gh.HasLabel("Codertocat/Space", "flaky") {
		t.Fatal("no label in the added repository")
	}
	if strings.Contains(h.logs.String(), "handling delivery failed") {
		t.Fatalf("an existing label was treated as an error:\n%s", h.logs.String())
	}
	var label struct{ Color, Description string }
	for _, r := range h.gh.Requests() {
		if r.Operation == "/repos/{owner}/{repo}/labels" {
			json.Unmarshal(r.Body, &label)
		}
	}
	if label.Color == "" || !strings.Contains(label.Description, "pitcrew") {
		t.Fatalf("label without colour or description: %+v", label)
	}
}
