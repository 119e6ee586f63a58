package handlers

import (
	"context"
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/github/githubtest"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/publish"
)

// /pitcrew profile starts a session only for a pull request whose head is
// in the repository itself: a fork's migrations would run in the sandbox
// with pitcrew's credentials. Decided by IssueComment alone, on the
// struct fake of GitHub.
func TestProfileRefusesAPullRequestFromAFork(t *testing.T) {
	const head = "2222222222222222222222222222222222222222"
	const why = "its migrations would run in the sandbox with pitcrew's credentials. Push the branch to this repository to profile it."
	migration := []github.ChangedFile{{Path: "priv/repo/migrations/20261201000000_add_index.exs", Status: "added"}}
	for _, c := range []struct {
		name, headRepo string
		sessions       int
		reply          []string // all in the one reply; none means no reply
	}{
		{name: "a branch of the repository", headRepo: "hexpm/hexpm", sessions: 1},
		{name: "a branch of the repository, named in another case", headRepo: "HexPM/Hexpm", sessions: 1},
		{name: "a fork", headRepo: "someone/hexpm", reply: []string{"Nothing was started: pitcrew does not profile a pull request from a fork (`someone/hexpm`)", why}},
		{name: "a fork of the same name under another owner", headRepo: "hexpm-fork/hexpm", reply: []string{"(`hexpm-fork/hexpm`)", why}},
		{name: "a fork GitHub no longer names", headRepo: githubtest.NoRepo, reply: []string{"a fork GitHub no longer names", why}},
		{name: "a fork whose name would render", headRepo: "mallory/`x` @everyone", reply: []string{"(``mallory/`x` @everyone``)", why}},
	} {
		t.Run(c.name, func(t *testing.T) {
			gh := &githubtest.Fake{Permissions: map[string]string{"alice": "write"},
				Pulls: map[int]github.PullRequest{12: {Number: 12, State: "open", HeadSHA: head, HeadRepo: c.headRepo}},
				Files: map[int][]github.ChangedFile{12: migration}}
			sb := &testenv.Sessions{}
			h := &IssueComment{Env: ruleBase(t, gh, sb)}
			if err := h.Handle(context.Background(), "issue_comment", testenv.DeliveryID(), testenv.CommentEvent(t, "alice", 12, 777, "/pitcrew profile", true)); err != nil {
				t.Fatal(err)
			}
			if len(sb.Prompts) != c.sessions {
				t.Errorf("%d sessions, want %d", len(sb.Prompts), c.sessions)
			}
			var replies, statuses []string
			for _, cm := range gh.Comments {
				if strings.Contains(cm.Body, publish.StatusMarker) {
					statuses = append(statuses, cm.Body)
				} else {
					replies = append(replies, cm.Body)
				}
			}
			if c.reply == nil {
				if len(replies) != 0 || len(statuses) != 1 {
					t.Errorf("replies %q, status comments %q; want no reply and the run's status", replies, statuses)
				}
				return
			}
			if len(statuses) != 0 || len(replies) != 1 {
				t.Fatalf("replies %q, status comments %q; want one reply and no status", replies, statuses)
			}
			for _, want := range c.reply {
				if !strings.Contains(replies[0], want) {
					t.Errorf("reply %q lacks %q", replies[0], want)
				}
			}
		})
	}
}
