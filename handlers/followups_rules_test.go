package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/github/githubtest"
	"github.com/pitcrew/pitcrew/internal/repoconfig"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/follow"
	"github.com/pitcrew/pitcrew/work/profiling"
	"github.com/pitcrew/pitcrew/work/worktest"
)

// endedFixWithPull is a flaky run on issue 3 that ended naming pull
// request 77, which pitcrew follows, after followUps follow-ups.
const pull77 = "https://github.com/hexpm/hexpm/pull/77"

func endedFixWithPull(t *testing.T, b work.Env, gh github.Client, followUps int) runs.Run {
	t.Helper()
	run := worktest.EndedRun(t, b, runs.KindFlaky, "flaky:hexpm/hexpm:test/a_test.exs:1", 3, "ses_fix", func(r *runs.Run) {
		worktest.FixedIn(pull77)(r)
		for i := 0; i < followUps; i++ {
			r.FollowUps = append(r.FollowUps, runs.FollowUp{N: i + 1, Max: 3, Source: fmt.Sprintf("review:%d", i)})
		}
	})
	run, err := follow.Pull(context.Background(), &b, gh, run)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// What a review of the agent's pull request does to its run, decided by
// PullRequestReview alone: no HTTP, struct fakes of GitHub and the sandbox.
func TestWhatAReviewOfTheAgentsPullRequestDoes(t *testing.T) {
	for _, c := range []struct {
		name, reviewer, state, body string
		inline                      []github.ReviewComment
		inlineErr                   error // reading the inline comments answers
		followUps                   int   // the run had before
		live                        bool  // the run is working on a follow-up
		sent                        bool
		reply                       string
	}{
		{name: "changes requested with a /pitcrew line inline", reviewer: "alice", state: "changes_requested", body: "Close, but not this way.",
			inline: []github.ReviewComment{{ID: 9, Path: "test/a_test.exs", Line: 12, Body: "/pitcrew a sleep is still a wait: use assert_receive on the :indexed message"}}, sent: true},
		{name: "a comment review asking in its body", reviewer: "alice", state: "commented", body: "/pitcrew please keep async: true", sent: true},
		{name: "people talking in the review", reviewer: "alice", state: "changes_requested", body: "Let's discuss this with the team first.",
			inline: []github.ReviewComment{{ID: 9, Path: "test/a_test.exs", Line: 12, Body: "why this?"}}},
		{name: "an approval is no follow-up", reviewer: "alice", state: "approved", body: "/pitcrew thanks"},
		{name: "a reader", reviewer: "mallory", state: "changes_requested", body: "/pitcrew do it my way", reply: "`mallory` has read access"},
		{name: "past the cap", reviewer: "alice", state: "changes_requested", body: "/pitcrew again", followUps: 3, reply: "this run had its 3 follow-ups (`followups.max_per_run`)"},
		{name: "inline comments GitHub will not show, the body asking", reviewer: "alice", state: "changes_requested", body: "/pitcrew keep async: true",
			inlineErr: githubtest.Answered(404), sent: true},
		{name: "inline comments GitHub will not show, the body silent", reviewer: "alice", state: "changes_requested", body: "See inline.",
			inlineErr: githubtest.Answered(403), reply: "could not read the inline comments of the review by `alice` (GitHub answered 403)"},
		{name: "while the agent works", reviewer: "alice", state: "changes_requested", body: "/pitcrew also this", followUps: 1, live: true, reply: "the agent is still working on this run"},
	} {
		t.Run(c.name, func(t *testing.T) {
			gh := &githubtest.Fake{Installation: testenv.Installation, Permissions: map[string]string{"alice": "write"},
				Pulls: map[int]github.PullRequest{77: {Number: 77, State: "open", HeadSHA: "1111111111111111111111111111111111111111"}}, Diffs: map[int]string{77: ""},
				ReviewNotes: map[int64][]github.ReviewComment{500: c.inline}, ReviewErrs: map[int64]error{500: c.inlineErr}}
			sb := &testenv.Sessions{}
			b := ruleBase(t, gh, sb)
			run := endedFixWithPull(t, b, gh, c.followUps)
			if c.live {
				if _, err := b.Ledger.Update(context.Background(), run, func(r *runs.Run) error {
					r.State = runs.Started
					r.FollowUps = append(r.FollowUps, runs.FollowUp{N: 2})
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			h := &PullRequestReview{b}
			review := testenv.ReviewWithBody(t, 77, 500, c.reviewer, c.state, c.body)
			for range 2 { // delivered twice: sent once
				if err := h.Handle(context.Background(), "pull_request_review", testenv.DeliveryID(), review); err != nil {
					t.Fatal(err)
				}
			}
			sent := sb.Messages["ses_fix"]
			if (len(sent) == 1) != c.sent || len(sent) > 1 {
				t.Fatalf("%d follow-ups sent, want sent=%v", len(sent), c.sent)
			}
			got, _ := b.Ledger.Get(context.Background(), run.ID)
			if c.sent {
				if got.State != runs.Started || len(got.FollowUps) != c.followUps+1 {
					t.Fatalf("run %s with %+v", got.State, got.FollowUps)
				}
				for _, want := range []string{"wrote about your pull request #77", `"review": ` + mustJSON(c.body)} {
					if !strings.Contains(sent[0], want) {
						t.Errorf("the follow-up lacks %q:\n%s", want, sent[0])
					}
				}
				for _, n := range c.inline {
					if !strings.Contains(sent[0], `"path": "`+n.Path+`"`) || !strings.Contains(sent[0], mustJSON(n.Body)) {
						t.Errorf("the follow-up lacks the inline comment %+v:\n%s", n, sent[0])
					}
				}
			}
			acked := false
			for _, w := range gh.WritesSoFar() {
				acked = acked || strings.HasPrefix(w, "ReactReview ")
			}
			if wantAck := c.sent && len(c.inline) > 0; acked != wantAck {
				t.Errorf("inline comment acknowledged %v, want %v", acked, wantAck)
			}
			var replies []string
			for _, cm := range gh.Comments {
				if !strings.Contains(cm.Body, publish.StatusMarker) {
					replies = append(replies, cm.Body)
				}
			}
			if c.reply == "" && len(replies) > 0 || c.reply != "" && (len(replies) != 1 || !strings.Contains(replies[0], c.reply)) {
				t.Fatalf("replies %q, want one with %q", replies, c.reply)
			}
		})
	}
}

// Other text after /pitcrew in a comment on the agent's pull request is
// for its run, from people with write access.
func TestACommentOnTheAgentsPullRequestGoesToItsRun(t *testing.T) {
	gh := &githubtest.Fake{Installation: testenv.Installation, Permissions: map[string]string{"alice": "write"},
		Pulls: map[int]github.PullRequest{77: {Number: 77, State: "open", HeadSHA: "1111111111111111111111111111111111111111"}}, Diffs: map[int]string{77: ""}}
	sb := &testenv.Sessions{}
	b := ruleBase(t, gh, sb)
	endedFixWithPull(t, b, gh, 0)
	h := &IssueComment{b}
	for _, c := range []struct {
		author string
		id     int64
	}{{"mallory", 1}, {"alice", 2}, {"alice", 2}} {
		if err := h.Handle(context.Background(), "issue_comment", testenv.DeliveryID(), testenv.CommentEvent(t, c.author, 77, c.id, "/pitcrew keep async: true and use a named ETS table per test", true)); err != nil {
			t.Fatal(err)
		}
	}
	sent := sb.Messages["ses_fix"]
	if len(sent) != 1 || !strings.Contains(sent[0], `"review": "/pitcrew keep async: true and use a named ETS table per test"`) {
		t.Fatalf("follow-ups %q", sent)
	}
	if len(gh.Comments) != 1 || gh.Comments[0].Issue != 77 || !strings.Contains(gh.Comments[0].Body, "`mallory` has read access") {
		t.Fatalf("comments %+v, want the reader's answer only", gh.Comments)
	}
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// /pitcrew open-pr on a merged pull request with a slow-query report sends
// its profiling session one follow-up; without a report it says so.
func TestOpenPRSendsTheProfilingSessionAFollowUp(t *testing.T) {
	const merge = "3333333333333333333333333333333333333333"
	gh := &githubtest.Fake{Installation: testenv.Installation, Permissions: map[string]string{"alice": "write"}}
	sb := &testenv.Sessions{}
	b := ruleBase(t, gh, sb)
	ctx := context.Background()
	h := &IssueComment{b}
	if err := h.Handle(ctx, "issue_comment", testenv.DeliveryID(), testenv.CommentEvent(t, "alice", 12, 801, "/pitcrew open-pr", true)); err != nil {
		t.Fatal(err)
	}
	if len(gh.Comments) != 1 || !strings.Contains(gh.Comments[0].Body, "pitcrew has no slow-query report of this merge") {
		t.Fatalf("comments %+v", gh.Comments)
	}

	files := []string{"priv/repo/migrations/20261201000000_add_index.exs"}
	if err := profiling.Start(ctx, &b, gh, profiling.Signal{InstallationID: testenv.Installation, Delivery: "d", Repo: github.Repo{Owner: "hexpm", Name: "hexpm"}, Commit: merge, PR: 12,
		Subject: runs.Subject{Repo: "hexpm/hexpm", Issue: 12}}, files, mustConfig(t)); err != nil {
		t.Fatal(err)
	}
	run, err := b.Ledger.BySession(ctx, "ses_"+profiling.Key("hexpm/hexpm", merge)+"#1")
	if err == nil {
		_, err = b.Ledger.Move(ctx, run, runs.Completed, func(r *runs.Run) { r.Report = true })
	}
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := h.Handle(ctx, "issue_comment", testenv.DeliveryID(), testenv.CommentEvent(t, "alice", 12, 802, "/pitcrew open-pr", true)); err != nil {
			t.Fatal(err)
		}
	}
	sent := sb.Messages[run.SessionID]
	if len(sent) != 1 || !strings.Contains(sent[0], "references #12") || !strings.Contains(sent[0], "`"+files[0]+"`") {
		t.Fatalf("follow-ups %q", sent)
	}
	status := gh.Comments[len(gh.Comments)-1].Body
	if !strings.Contains(status, "The agent is opening the change it measured as a pull request") || !strings.Contains(status, "iteration 1 of 3: `/pitcrew open-pr` by `alice`") {
		t.Fatalf("status %s", status)
	}
}

func mustConfig(t *testing.T) repoconfig.Config {
	t.Helper()
	cfg, err := jobs.Schema().Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// An attempt that sent the follow-up but stopped before the review was
// marked done is followed by one that sends nothing and says nothing.
func TestAFollowUpSentBeforeACrashIsNotAnsweredAsRefused(t *testing.T) {
	gh := &githubtest.Fake{Installation: testenv.Installation, Permissions: map[string]string{"alice": "write"},
		Pulls: map[int]github.PullRequest{77: {Number: 77, State: "open", HeadSHA: "1111111111111111111111111111111111111111"}}, Diffs: map[int]string{77: ""}}
	sb := &testenv.Sessions{}
	b := ruleBase(t, gh, sb)
	run := endedFixWithPull(t, b, gh, 0)
	f := runs.FollowUp{Reason: "the review by `alice`", Source: "review:500"}
	if refusal, err := follow.Send(context.Background(), &b, gh, hexpm, run.ID, f, "review", prompts.ReviewInput{PR: 77, Reviewer: "alice", Body: "/pitcrew x"}, true); err != nil || refusal != "" {
		t.Fatalf("first: %q %v", refusal, err)
	}
	// The crash: the review is not marked done; its delivery comes again.
	if refusal, err := follow.Send(context.Background(), &b, gh, hexpm, run.ID, f, "review", prompts.ReviewInput{PR: 77, Reviewer: "alice", Body: "/pitcrew x"}, true); err != nil || refusal != "" {
		t.Fatalf("again: %q %v", refusal, err)
	}
	if len(sb.Messages["ses_fix"]) != 1 {
		t.Fatalf("%d messages", len(sb.Messages["ses_fix"]))
	}
}
