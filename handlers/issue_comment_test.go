package handlers

import (
	"os"
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew/hook"
	"github.com/pitcrew/pitcrew/internal/testenv"
)

func TestParseComment(t *testing.T) {
	ev, ok, err := ParseComment(testenv.CommentEvent(t, "alice", 12, 901, "/pitcrew retry", true))
	if err != nil || !ok || ev != (Comment{InstallationID: testenv.Installation, Repo: hexpm, Issue: 12, OnPull: true, ID: 901, Author: "alice", Association: "OWNER", Body: "/pitcrew retry"}) {
		t.Fatalf("%+v %v %v", ev, ok, err)
	}
	if ev, ok, _ := ParseComment(testenv.CommentEvent(t, "alice", 12, 901, "x", false)); !ok || ev.OnPull {
		t.Fatalf("a comment on an issue: %+v %v", ev, ok)
	}
	for name, payload := range map[string][]byte{
		"a bot":      testenv.CommentEvent(t, "pitcrew[bot]", 12, 901, "/pitcrew retry", false),
		"an edit":    []byte(strings.Replace(string(testenv.CommentEvent(t, "alice", 12, 901, "/pitcrew retry", false)), `"action":"created"`, `"action":"edited"`, 1)),
		"a deletion": []byte(strings.Replace(string(testenv.CommentEvent(t, "alice", 12, 901, "/pitcrew retry", false)), `"action":"created"`, `"action":"deleted"`, 1)),
	} {
		if ev, ok, err := ParseComment(payload); ok || err != nil {
			t.Errorf("%s: %+v %v %v", name, ev, ok, err)
		}
	}
	// The example as GitHub's docs give it has no installation: not for an app.
	real, _ := os.ReadFile(testenv.Path("testdata", "webhooks", "issue_comment.created.json"))
	if _, ok, err := ParseComment(real); ok || err != nil {
		t.Fatalf("the bare example: %v %v", ok, err)
	}
	if _, _, err := ParseComment([]byte(`{"action":`)); err == nil {
		t.Fatal("a broken body")
	}
}

func TestTheIntakeStoresOnlyWhatAHandlerActsOn(t *testing.T) {
	stranger := strings.Replace(string(testenv.CommentEvent(t, "someone", 12, 3, "/pitcrew retry", false)), `"author_association":"OWNER"`, `"author_association":"NONE"`, -1)
	for _, c := range []struct {
		name    string
		event   string
		body    []byte
		ignored bool
	}{
		{"a writer's command", "issue_comment", testenv.CommentEvent(t, "alice", 12, 1, "/pitcrew retry", false), false},
		{"people talking", "issue_comment", testenv.CommentEvent(t, "alice", 12, 2, "shall we /pitcrew retry?", false), true},
		{"pitcrew's own comment", "issue_comment", testenv.CommentEvent(t, "pitcrew[bot]", 12, 3, "`/pitcrew retry` starts a new run", false), true},
		{"a stranger's command", "issue_comment", []byte(stranger), true},
		{"an edit", "issue_comment", []byte(strings.Replace(string(testenv.CommentEvent(t, "alice", 12, 4, "/pitcrew retry", false)), `"action":"created"`, `"action":"edited"`, 1)), true},
		{"a body that does not decode: the handler says why", "issue_comment", []byte(`{"action":1}`), false},
		{"an issue labelled", "issues", testenv.LabeledEvent(t, "bug", "alice", 12, "x", "y"), false},
		{"an issue opened", "issues", []byte(strings.Replace(string(testenv.LabeledEvent(t, "bug", "alice", 12, "x", "y")), `"action":"labeled"`, `"action":"opened"`, 1)), true},
		{"a person's edit of the dashboard", "issues", testenv.DashboardEditEvent(t, "alice", 500, "- [x] a"), false},
		{"pitcrew's own edit of the dashboard", "issues", testenv.DashboardEditEvent(t, "pitcrew[bot]", 500, "- [ ] a"), true},
		{"an edit of another issue", "issues", testenv.Event(t, "issues.edited.json", func(map[string]any) {}), true},
		{"an issues body that does not decode", "issues", []byte(`{"action":`), false},
		{"another event", "push", testenv.CommentEvent(t, "alice", 12, 5, "no command", false), false},
	} {
		if got := Ignored(c.event, hook.NewBody(c.body)); got != c.ignored {
			t.Errorf("%s: ignored %v, want %v", c.name, got, c.ignored)
		}
	}
}

func FuzzParseComment(f *testing.F) {
	f.Add(testenv.CommentEvent(f, "alice", 12, 901, "/pitcrew retry", true))
	f.Add(testenv.CommentEvent(f, "dependabot[bot]", 3, 1, "/pitcrew help", false))
	f.Fuzz(func(t *testing.T, payload []byte) {
		Ignored("issue_comment", hook.NewBody(payload))
		ev, ok, _ := ParseComment(payload)
		if ok && (ev.Issue <= 0 || ev.ID <= 0 || ev.InstallationID <= 0 || ev.Author == "" || strings.HasSuffix(ev.Author, "[bot]") || ev.Repo.Name == "") {
			t.Fatalf("comment %+v", ev)
		}
	})
}
