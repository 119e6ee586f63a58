package sandbox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/sandbox"
)

func TestStartRetriesWithSameKey(t *testing.T) {
	fake := testenv.NewSandbox(t)
	c, err := sandbox.NewClient(sandbox.Config{BaseURL: fake.URL, Org: fake.Org, APIKey: fake.APIKey, BaseDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	fake.FailNextStarts(2)
	ses, err := c.Start(context.Background(), "flaky:hexpm/hexpm:test/a_test.exs:1#1", "prompt", "https://github.com/hexpm/hexpm", nil)
	if err != nil {
		t.Fatal(err)
	}
	reqs, keys := fake.StartRequests()
	if len(reqs) != 3 || fake.SessionCount() != 1 || ses.ID == "" {
		t.Fatalf("%d requests, %d sessions, session %+v", len(reqs), fake.SessionCount(), ses)
	}
	for _, k := range keys {
		if k != "flaky:hexpm/hexpm:test/a_test.exs:1#1" {
			t.Fatalf("Idempotency-Key = %q", k)
		}
	}
	if reqs[0].Agent != "claude" || reqs[0].Resources[0].URL != "https://github.com/hexpm/hexpm" {
		t.Fatalf("request %+v", reqs[0])
	}
	// A retried start with the same key (a crashed worker) makes no new session.
	again, err := c.Start(context.Background(), "flaky:hexpm/hexpm:test/a_test.exs:1#1", "prompt", "https://github.com/hexpm/hexpm", nil)
	if err != nil || again.ID != ses.ID || fake.SessionCount() != 1 {
		t.Fatalf("second start: %+v %v (%d sessions)", again, err, fake.SessionCount())
	}

	got, err := c.Get(context.Background(), ses.ID)
	if err != nil || got.Status != sandbox.StatusRunning {
		t.Fatalf("get: %+v %v", got, err)
	}
	if _, err := c.Get(context.Background(), "ses_404"); !sandbox.IsPermanent(err) {
		t.Fatalf("missing session: %v", err)
	}
}

func TestWrongKeyIsPermanentAndSecretFree(t *testing.T) {
	fake := testenv.NewSandbox(t)
	c, _ := sandbox.NewClient(sandbox.Config{BaseURL: fake.URL, Org: fake.Org, APIKey: "wrong-secret-value", BaseDelay: time.Millisecond})
	_, err := c.Start(context.Background(), "k", "p", "https://github.com/o/r", nil)
	if !sandbox.IsPermanent(err) {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), "wrong-secret-value") {
		t.Fatal("error message leaks the API key")
	}
}

// A follow-up message goes to the session once per key, however often it
// is sent; a session still running refuses a new one for good.
func TestAFollowUpMessageIsSentOncePerKey(t *testing.T) {
	fake := testenv.NewSandbox(t)
	c, err := sandbox.NewClient(sandbox.Config{BaseURL: fake.URL, Org: fake.Org, APIKey: fake.APIKey, BaseDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ses, err := c.Start(context.Background(), "k#1", "prompt", "https://github.com/hexpm/hexpm", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Message(context.Background(), ses.ID, "k#1:followup:review:1", "more"); !sandbox.IsPermanent(err) {
		t.Fatalf("a message to a running session: %v", err)
	}
	fake.Finish(ses.ID, sandbox.StatusCompleted, "done")
	for range 2 {
		got, err := c.Message(context.Background(), ses.ID, "k#1:followup:review:1", "please use assert_receive")
		if err != nil || got.Status != sandbox.StatusRunning {
			t.Fatalf("message: %+v %v", got, err)
		}
	}
	if m := fake.Messages(ses.ID); len(m) != 1 || m[0] != "please use assert_receive" {
		t.Fatalf("messages %q", m)
	}
	if _, err := c.Message(context.Background(), "not a session id", "k", "x"); !sandbox.IsPermanent(err) {
		t.Fatalf("an invalid session id: %v", err)
	}
}
