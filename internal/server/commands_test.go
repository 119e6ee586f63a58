package server

import (
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/sandbox"
)

// A /pitcrew retry in a comment, through the signed route: a writer's
// starts a new run of the issue's test once, however often GitHub
// delivers it; a reader's gets one answer and starts nothing; people
// talking cost no GitHub call at all.
func TestARetryCommandStartsTheIssuesRunAgain(t *testing.T) {
	h := newHarness(t, true)
	h.gh.SetPermission("mallory", "read")
	if code := h.deliver("issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky", "alice", 7, "Flaky package controller test", issueBody)); code != 202 {
		t.Fatalf("label answered %d", code)
	}
	h.eventually("the first run", h.commentContains(7, "/s/ses_1"))
	h.finish("ses_1", sandbox.StatusCompleted, fixedAnswer)
	h.eventually("the first outcome", h.commentContains(7, "pull/1234"))

	calls := len(h.gh.Requests())
	talk := testenv.CommentEvent(t, "alice", 7, 9001, "Still flaky for me. Should we /pitcrew retry it?", false)
	if code := h.deliver("issue_comment", testenv.DeliveryID(), talk); code != 202 {
		t.Fatalf("comment answered %d", code)
	}
	h.eventually("the talk handled", h.handled("issue_comment", 1))
	if got := h.gh.Requests()[calls:]; len(got) != 0 {
		t.Fatalf("people talking cost %d GitHub calls: %+v", len(got), got)
	}

	reader := testenv.CommentEvent(t, "mallory", 7, 9002, "/pitcrew retry", false)
	h.deliver("issue_comment", testenv.DeliveryID(), reader)
	h.eventually("the reader's answer", func() bool {
		c := h.gh.Comments("hexpm/hexpm", 7)
		return len(c) == 2 && c[1].Body == "Only people with write access to this repository can give pitcrew commands; `mallory` has read access."
	})

	retry := testenv.CommentEvent(t, "alice", 7, 9003, "Came back on main.\n\n/pitcrew retry", false)
	for range 3 { // GitHub redelivers; each delivery has its own id
		if code := h.deliver("issue_comment", testenv.DeliveryID(), retry); code != 202 {
			t.Fatalf("retry answered %d", code)
		}
	}
	h.eventually("the second run", func() bool { return h.sandbox.SessionCount() == 2 })
	h.eventually("every delivery handled", h.handled("issue_comment", 3)) // the two copies of the same body are dropped as replays
	h.eventually("the second run's link", func() bool { return strings.Contains(h.gh.Comments("hexpm/hexpm", 7)[0].Body, "/s/ses_2") })
	if !h.gh.Reacted("hexpm/hexpm", 9003, "eyes") || h.gh.Reacted("hexpm/hexpm", 9002, "eyes") {
		t.Error("the writer's command is acknowledged with eyes, the reader's is not")
	}
	if n := h.gh.Count("POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"); n != 1 {
		t.Errorf("%d reactions, want 1", n)
	}
	if h.sandbox.SessionCount() != 2 {
		t.Errorf("%d sessions, want 2", h.sandbox.SessionCount())
	}
	replies := 0
	for _, c := range h.gh.Comments("hexpm/hexpm", 7) {
		if !strings.Contains(c.Body, "pitcrew:status") {
			replies++
		}
	}
	if replies != 1 {
		t.Errorf("%d replies, want the reader's only", replies)
	}
}
