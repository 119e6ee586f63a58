package app

import (
	"reflect"
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/sandbox"
)

// A /pitcrew retry in a comment, through the signed route: a writer's
// starts a new run of the issue's test once, however often GitHub
// delivers it; a reader's gets one answer and starts nothing; people
// talking, and pitcrew's own comments, are answered without being stored
// and cost no GitHub call at all.
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
	if code := h.deliver("issue_comment", testenv.DeliveryID(), talk); code != 200 {
		t.Fatalf("people talking answered %d, want 200: not stored", code)
	}
	// pitcrew's own status comment, edited, comes back as issue_comment too.
	own := testenv.CommentEvent(t, "pitcrew[bot]", 7, 1000, "<!-- pitcrew:status --> see https://github.com/apps/pitcrew", false)
	if code := h.deliver("issue_comment", testenv.DeliveryID(), own); code != 200 {
		t.Fatalf("pitcrew's own comment answered %d, want 200: not stored", code)
	}
	if got := h.gh.Requests()[calls:]; len(got) != 0 {
		t.Fatalf("people talking cost %d GitHub calls: %+v", len(got), got)
	}

	reader := testenv.CommentEvent(t, "mallory", 7, 9002, "/pitcrew retry", false)
	h.deliver("issue_comment", testenv.DeliveryID(), reader)
	h.eventually("the reader's answer", func() bool {
		c := h.gh.Comments("hexpm/hexpm", 7)
		return len(c) == 2 && c[1].Body == "Only people with write access to this repository can give pitcrew commands; `mallory` has read access."
	})

	h.eventually("the reader handled", h.handled("issue_comment", 1))
	calls = len(h.gh.Requests())
	retry := testenv.CommentEvent(t, "alice", 7, 9003, "Came back on main.\n\n/pitcrew retry", false)
	for range 3 { // GitHub redelivers; each delivery has its own id
		if code := h.deliver("issue_comment", testenv.DeliveryID(), retry); code != 202 {
			t.Fatalf("retry answered %d", code)
		}
	}
	h.eventually("the second run", func() bool { return h.sandbox.SessionCount() == 2 })
	h.eventually("every delivery handled", h.handled("issue_comment", 2)) // the two copies of the same body are dropped as replays
	h.eventually("the second run's link", func() bool { return strings.Contains(h.gh.Comments("hexpm/hexpm", 7)[0].Body, "/s/ses_2") })
	got := h.callsSince(calls)
	t.Logf("GitHub calls for the retry: %v", got)
	want := map[string]int{"GET /repos/{owner}/{repo}/collaborators/{username}/permission": 1, "POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions": 1,
		"PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}": 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GitHub calls for the retry: %v, want %v (the configuration is cached)", got, want)
	}
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

// A review of the agent's pull request with a /pitcrew line becomes a
// follow-up to the run's own session, through the signed route and the
// sandbox API: the session runs again, its second answer is read from the
// API as the first was, and the issue shows the iteration.
func TestAReviewGoesBackToTheRunThatOpenedThePullRequest(t *testing.T) {
	h := newHarness(t, true)
	h.gh.SetFile("hexpm/hexpm", ".github/pitcrew.yml", "flaky:\n  verify: \"off\"\n")
	h.gh.SetPull(1234, "1111111111111111111111111111111111111111", "open", false, diffSample(t, "flaky/sleep_added.diff"))
	h.startOne(30)
	h.finish("ses_1", sandbox.StatusCompleted, fixedAnswer)
	h.eventually("the followed pull request", h.commentContains(30, "evidence: 1 concern"))

	h.gh.AddReviewComment(1234, 600, "test/hexpm/repository/package_search_test.exs", 42, "/pitcrew a sleep is still a wait: assert_receive the :indexed message instead")
	review := testenv.ReviewWithBody(t, 1234, 600, "alice", "changes_requested", "Close, but not this way.")
	calls := len(h.gh.Requests())
	if code := h.deliver("pull_request_review", testenv.DeliveryID(), review); code != 202 {
		t.Fatalf("review answered %d", code)
	}
	h.eventually("the follow-up sent", func() bool { return len(h.sandbox.Messages("ses_1")) == 1 })
	h.eventually("the review handled", h.handled("pull_request_review", 1))
	got := h.callsSince(calls)
	t.Logf("GitHub calls for the review: %v", got)
	if got[opEditComment] != 1 || len(got) != 4 {
		t.Errorf("GitHub calls for the review: %v, want its inline comments, the permission, the reaction and one edit", got)
	}
	if !h.gh.Reacted("hexpm/hexpm", 60001, "eyes") {
		t.Error("the inline comment with the command is not acknowledged with eyes")
	}
	msg := h.sandbox.Messages("ses_1")[0]
	for _, want := range []string{"wrote about your pull request #1234", `"review": "Close, but not this way."`, `"path": "test/hexpm/repository/package_search_test.exs"`, `"line": 42`} {
		if !strings.Contains(msg, want) {
			t.Errorf("the follow-up lacks %q:\n%s", want, msg)
		}
	}
	h.eventually("the iteration on the issue", h.commentContains(30, "💬 iteration 1 of 3: the review by `alice` · the agent is working on it"))
	if body := h.statusComment(30).Body; !strings.Contains(body, "changes requested") {
		t.Errorf("the one edit lacks the review's verdict:\n%s", body)
	}

	second := strings.Replace(fixedAnswer, `"cause": "An async test changed`, `"cause": "Now waits for the message; an async test changed`, 1)
	h.finish("ses_1", sandbox.StatusCompleted, second)
	h.eventually("the second answer", h.commentContains(30, "Cause: Now waits for the message"))
	if body := h.statusComment(30).Body; !strings.Contains(body, "💬 iteration 1 of 3: the review by `alice`") || strings.Contains(body, "working on it") {
		t.Fatalf("status after the follow-up:\n%s", body)
	}
	if h.sandbox.SessionCount() != 1 {
		t.Errorf("%d sessions: a follow-up goes to the run's own session", h.sandbox.SessionCount())
	}
}
