package handlers

import (
	"os"
	"strings"
	"testing"

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

func FuzzParseComment(f *testing.F) {
	f.Add(testenv.CommentEvent(f, "alice", 12, 901, "/pitcrew retry", true))
	f.Add(testenv.CommentEvent(f, "dependabot[bot]", 3, 1, "/pitcrew help", false))
	f.Fuzz(func(t *testing.T, payload []byte) {
		ev, ok, _ := ParseComment(payload)
		if ok && (ev.Issue <= 0 || ev.ID <= 0 || ev.InstallationID <= 0 || ev.Author == "" || strings.HasSuffix(ev.Author, "[bot]") || ev.Repo.Name == "") {
			t.Fatalf("comment %+v", ev)
		}
	})
}
