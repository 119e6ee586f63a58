package handlers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/github/githubtest"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/publish"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/follow"
)

// What a /pitcrew command in a comment does, decided by IssueComment
// alone: no HTTP, a struct fake of GitHub.
func TestWhatACommandInACommentDoes(t *testing.T) {
	const test = "test/hexpm/web/controllers/package_controller_test.exs:42"
	const head = "2222222222222222222222222222222222222222"
	migration := []github.ChangedFile{{Path: "priv/repo/migrations/20261201000000_add_index.exs", Status: "added"}}
	type setup int
	const (
		none    setup = iota
		ended         // issue 12 shows a flaky run that completed
		running       // issue 12 shows a flaky run still going on
	)
	for _, c := range []struct {
		name, config, sender, body string
		association                string // "" keeps the example's OWNER
		onPull                     bool
		pull                       *github.PullRequest
		files                      []github.ChangedFile
		setup                      setup
		sessions                   int      // new sessions the command started
		writes                     []string // the command's writes, in order
		reply                      string   // in the reply
		status                     string   // in the status comment after
	}{
		{name: "people talking", sender: "alice", body: "I think we should /pitcrew retry this later", setup: ended},
		{name: "a bot", sender: "dependabot[bot]", body: "/pitcrew retry", setup: ended},
		{name: "someone the repository does not know", sender: "stranger", association: "NONE", body: "/pitcrew retry", setup: ended},
		{name: "a reader", sender: "mallory", body: "/pitcrew retry", setup: ended, writes: []string{"CreateComment"},
			reply: "Only people with write access to this repository can give pitcrew commands; `mallory` has read access."},
		{name: "help", sender: "alice", body: "/pitcrew help", writes: []string{"React", "CreateComment"}, reply: "`/pitcrew retry` on an issue pitcrew answers on"},
		{name: "an unknown command", sender: "alice", body: "/pitcrew deploy `now` @everyone", writes: []string{"React", "CreateComment"}, reply: "pitcrew does not know ``/pitcrew deploy `now` @everyone``"},
		{name: "retry where pitcrew has no run", sender: "alice", body: "/pitcrew retry", writes: []string{"React", "CreateComment"}, reply: "pitcrew has no run here to retry"},
		{name: "retry of an ended run", sender: "eric", body: "Still flaky on main.\n/pitcrew retry", setup: ended, sessions: 1, writes: []string{"React", "EditComment"}, status: "`" + test + "`"},
		{name: "retry while the run goes on", sender: "alice", body: "/pitcrew retry", setup: running, writes: []string{"React", "CreateComment"}, reply: "Nothing was started: pitcrew's run is still going on `" + test + "`."},
		{name: "retry past the daily limit", config: "daily_limit: 1\n", sender: "alice", body: "/pitcrew retry", setup: ended, writes: []string{"React", "EditComment"}, status: "not started: the daily limit of 1 runs"},
		{name: "profile on an issue", sender: "alice", body: "/pitcrew profile", writes: []string{"React", "CreateComment"}, reply: "write it on that pull request"},
		{name: "profile of an open pull request with a migration", sender: "alice", body: "/pitcrew profile", onPull: true, pull: &github.PullRequest{Number: 12, State: "open", HeadSHA: head}, files: migration,
			sessions: 1, writes: []string{"React", "CreateComment"}, status: "Profiled on the pull request's head, before the change ships"},
		{name: "profile of a pull request without migrations", sender: "alice", body: "/pitcrew profile", onPull: true, pull: &github.PullRequest{Number: 12, State: "open", HeadSHA: head},
			files: []github.ChangedFile{{Path: "lib/hexpm/accounts.ex", Status: "modified"}}, writes: []string{"React", "CreateComment"}, reply: "adds or changes no migration under `priv/repo/migrations/`"},
		{name: "profile of a merged pull request", sender: "alice", body: "/pitcrew profile", onPull: true, pull: &github.PullRequest{Number: 12, State: "closed", Merged: true, HeadSHA: head}, files: migration,
			writes: []string{"React", "CreateComment"}, reply: "this one is merged"},
		{name: "profile with slow-query reports off", config: "migrations:\n  enabled: false\n", sender: "alice", body: "/pitcrew profile", onPull: true, pull: &github.PullRequest{Number: 12, State: "open", HeadSHA: head}, files: migration,
			writes: []string{"React", "CreateComment"}, reply: "slow-query reports are turned off"},
	} {
		t.Run(c.name, func(t *testing.T) {
			gh := &githubtest.Fake{Config: c.config, Permissions: map[string]string{"alice": "write", "eric": "admin"},
				Pulls: map[int]github.PullRequest{}, Files: map[int][]github.ChangedFile{12: c.files}}
			if c.pull != nil {
				gh.Pulls[12] = *c.pull
			}
			sb := &testenv.Sessions{}
			b := ruleBase(t, gh, sb)
			ctx := context.Background()
			if c.setup != none {
				if err := (&IssueLabeled{b}).Handle(ctx, "issues", testenv.DeliveryID(), testenv.LabeledEvent(t, "flaky", "alice", 12, "Flaky test", test)); err != nil {
					t.Fatal(err)
				}
				if c.setup == ended {
					endRuns(t, b)
				}
			}
			before, started := len(gh.WritesSoFar()), len(sb.Prompts)
			h := &IssueComment{b}
			comment := testenv.CommentEvent(t, c.sender, 12, 777, c.body, c.onPull)
			if c.association != "" {
				comment = []byte(strings.Replace(string(comment), `"author_association":"OWNER"`, `"author_association":"`+c.association+`"`, -1))
			}
			for range 2 { // delivered twice: acted on once
				if err := h.Handle(ctx, "issue_comment", testenv.DeliveryID(), comment); err != nil {
					t.Fatal(err)
				}
			}
			if got := len(sb.Prompts) - started; got != c.sessions {
				t.Errorf("%d sessions, want %d", got, c.sessions)
			}
			var writes []string
			for _, w := range gh.WritesSoFar()[before:] {
				writes = append(writes, strings.Fields(w)[0])
			}
			if strings.Join(writes, " ") != strings.Join(c.writes, " ") {
				t.Errorf("writes %q, want %q", gh.WritesSoFar()[before:], c.writes)
			}
			var replies []string
			status := ""
			for _, cm := range gh.Comments {
				if strings.Contains(cm.Body, publish.StatusMarker) {
					status = cm.Body
				} else {
					replies = append(replies, cm.Body)
				}
			}
			if c.reply == "" && len(replies) > 0 || c.reply != "" && (len(replies) != 1 || !strings.Contains(replies[0], c.reply)) {
				t.Errorf("replies %q, want one with %q", replies, c.reply)
			}
			if !strings.Contains(status, c.status) {
				t.Errorf("status comment %q lacks %q", status, c.status)
			}
		})
	}
}

// A reader is told once a day per issue, however many commands they write.
func TestAReaderIsToldOnce(t *testing.T) {
	gh := &githubtest.Fake{Permissions: map[string]string{}}
	h := &IssueComment{Env: ruleBase(t, gh, &testenv.Sessions{})}
	for id := int64(1); id <= 5; id++ {
		if err := h.Handle(context.Background(), "issue_comment", testenv.DeliveryID(), testenv.CommentEvent(t, "mallory", 12, id, "/pitcrew retry", false)); err != nil {
			t.Fatal(err)
		}
	}
	if len(gh.Comments) != 1 || !strings.Contains(gh.Comments[0].Body, "`mallory` has read access") {
		t.Fatalf("comments %+v, want one answer", gh.Comments)
	}
}

// endRuns ends every started run of the ledger as a completed one.
func endRuns(t *testing.T, b work.Env) {
	t.Helper()
	ctx := context.Background()
	ids, err := b.Ledger.StartedBefore(ctx, time.Now().Add(time.Hour), 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		run, err := b.Ledger.BySession(ctx, id)
		if err == nil {
			_, err = b.Ledger.Move(ctx, run, runs.Completed, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Every job /pitcrew retry starts again rebuilds a prompt its template
// takes from the run alone.
func TestEachJobsRetryRebuildsItsPrompt(t *testing.T) {
	alert, _ := json.Marshal(prompts.AlertInput{Repo: "hexpm/hexpm", Data: map[string]any{"title": "500s on /api/packages"}})
	files, _ := json.Marshal(publish.MigrationData{Files: []string{"priv/repo/migrations/20261201000000_add_index.exs"}})
	cfg, err := jobs.Schema().Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		run  runs.Run
		want string
	}{
		{runs.Run{Kind: runs.KindFlaky, Repo: "hexpm/hexpm", Origin: 12, About: "test/a_test.exs:9"}, "test/a_test.exs:9"},
		{runs.Run{Kind: runs.KindMigration, Repo: "hexpm/hexpm", Origin: 12, About: strings.Repeat("a", 40), Data: files}, "20261201000000_add_index.exs"},
		{runs.Run{Kind: runs.KindAlert, Repo: "hexpm/hexpm", Origin: 40, About: "dd-1", Data: alert}, "500s on /api/packages"},
		{runs.Run{Kind: kindSentry, Repo: "hexpm/hexpm", Origin: 41, About: "s-1", Data: alert}, "500s on /api/packages"},
	} {
		j, ok := jobs.Job(c.run.Kind)
		if !ok || j.Retry == nil {
			t.Fatalf("%s: no Retry", c.run.Kind)
		}
		in, err := j.Retry(c.run, cfg)
		if err != nil {
			t.Fatalf("%s: %v", c.run.Kind, err)
		}
		p, err := prompts.Render(j.Prompt, in)
		if err != nil || !strings.Contains(p, c.want) {
			t.Fatalf("%s: %v\n%s", c.run.Kind, err, p)
		}
	}
	if j, _ := jobs.Job(runs.KindAlert); j.Retry != nil {
		if _, err := j.Retry(runs.Run{Kind: runs.KindAlert, Repo: "hexpm/hexpm"}, cfg); err == nil {
			t.Fatal("an alert run that kept no alert was started again")
		}
	}
	if j, _ := jobs.Job(follow.VerifyJob.Kind); j.Retry != nil {
		t.Fatal("a verification is started by its fix's pull request, not by hand")
	}
}
