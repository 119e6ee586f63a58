package app

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/pitcrew/pitcrew/hook"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/queue"
)

// post sends a signed delivery with the given content type; chunked sends
// the body without a Content-Length.
func (h *harness) post(event, id, contentType string, body []byte, chunked bool) int {
	var r io.Reader = bytes.NewReader(body)
	if chunked {
		r = io.MultiReader(r) // hides the length from net/http
	}
	return h.postHook(event, id, contentType, sign(testWebhookSecret, body), r)
}

// storedDeliveries reads back every pending delivery task, by delivery id.
func (h *harness) storedDeliveries() map[string][]byte {
	in := asynq.NewInspectorFromRedisClient(h.redis)
	tasks, err := in.ListPendingTasks(queue.QueueGitHub, asynq.PageSize(1000))
	if err != nil {
		h.t.Fatal(err)
	}
	stored := map[string][]byte{}
	for _, task := range tasks {
		event, id, body, err := queue.DecodeDelivery(task.Payload)
		if err != nil || event != "issues" || task.ID != "gh:"+id {
			h.t.Fatalf("task %s: event %q, id %q, %v", task.ID, event, id, err)
		}
		stored[id] = body
	}
	return stored
}

// The intake reads bodies into pooled buffers: each stored delivery must
// still be exactly the body sent, whatever ran beside it.
func TestIntakeStoresEveryBodyIntactUnderConcurrency(t *testing.T) {
	h := newHarness(t, false)
	sent := map[string][]byte{}
	for i := range 60 {
		sent[testenv.DeliveryID()] = testenv.LabeledEvent(t, "flaky", "alice", 100+i, fmt.Sprintf("test/t%d_test.exs:%d", i, i), "")
	}
	var wg sync.WaitGroup
	i := 0
	for id, body := range sent {
		chunked := i%3 == 0
		i++
		wg.Go(func() {
			if code := h.post("issues", id, "application/json", body, chunked); code != http.StatusAccepted {
				t.Errorf("delivery %s answered %d", id, code)
			}
		})
	}
	wg.Wait()
	stored := h.storedDeliveries()
	if len(stored) != len(sent) {
		t.Fatalf("%d deliveries stored, %d sent", len(stored), len(sent))
	}
	for id, body := range sent {
		if !bytes.Equal(stored[id], body) {
			t.Errorf("delivery %s stored as a different body", id)
		}
	}
}

func TestIntakeContentTypesAndHeaders(t *testing.T) {
	h := newHarness(t, false)
	payload := testenv.LabeledEvent(t, "flaky", "alice", 1, flakyTest, "")
	form := []byte("payload=" + url.QueryEscape(string(payload)))
	formID := testenv.DeliveryID()
	if code := h.post("issues", formID, "application/x-www-form-urlencoded", form, false); code != http.StatusAccepted {
		t.Fatalf("a form-encoded delivery answered %d", code)
	}
	if stored := h.storedDeliveries()[formID]; !bytes.Equal(stored, payload) {
		t.Fatalf("a form-encoded delivery was stored as %.60q, want its payload field", stored)
	}
	for _, c := range []struct {
		name, event, contentType string
		want                     int
	}{
		{"no event header", "", "application/json", http.StatusBadRequest},
		{"plain text", "issues", "text/plain", http.StatusBadRequest},
		{"no content type", "issues", "", http.StatusBadRequest},
	} {
		if code := h.post(c.event, testenv.DeliveryID(), c.contentType, payload, false); code != c.want {
			t.Errorf("%s: answered %d, want %d", c.name, code, c.want)
		}
	}
	if code := h.post("issues", "", "application/json", payload, false); code != http.StatusBadRequest {
		t.Errorf("no delivery id: answered %d, want 400", code)
	}
	// Before the signature holds, the event header is anyone's text: not
	// UTF-8 here, which a Prometheus label refuses.
	if code := h.deliverSigned("\xff\xfe", testenv.DeliveryID(), payload, sign("not-the-secret", payload)); code != http.StatusUnauthorized {
		t.Fatalf("a forged delivery with a binary event name answered %d", code)
	}
	if m := h.get("/metrics"); !strings.Contains(m, `event="unverified",outcome="rejected"`) || strings.Contains(m, "\xff") {
		t.Error("an unverified event name reached the metrics")
	}
	big := append([]byte(`{"pad":"`), bytes.Repeat([]byte("x"), hook.MaxGitHubBody)...)
	if code := h.post("issues", testenv.DeliveryID(), "application/json", append(big, `"}`...), true); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a chunked body over the limit answered %d", code)
	}
	if n := len(h.storedDeliveries()); n != 1 {
		t.Fatalf("%d deliveries stored, want only the form-encoded one", n)
	}
}

// A delivery that a version before the compression stored (as JSON, under
// the old task type) is still handled once this version takes over.
func TestADeliveryStoredAsJSONByAnOlderVersionIsHandled(t *testing.T) {
	h := newHarness(t, true)
	id := testenv.DeliveryID()
	body := bytes.Replace(testenv.LabeledEvent(t, "flaky", "alice", 7, "test/a_test.exs:1", ""),
		[]byte(`"action":"labeled"`), []byte(`"action":"unlabeled"`), 1)
	old := asynq.NewTask(queue.TaskGitHubDeliveryJSON, append([]byte("issues\n"+id+"\n"), body...),
		asynq.TaskID("gh:"+id), asynq.Queue(queue.QueueGitHub))
	if _, err := asynq.NewClientFromRedisClient(h.redis).Enqueue(old); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for h.redis.Exists(t.Context(), queue.ProcessedKey(id)).Val() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the delivery stored as JSON was not handled in 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
