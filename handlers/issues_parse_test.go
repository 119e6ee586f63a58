package handlers

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/testenv"
)

func TestParseLabeledIssue(t *testing.T) {
	real, err := os.ReadFile(testenv.Path("testdata", "webhooks", "issues.labeled.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The testenv.Event as published has no installation block: not for an app.
	if _, ok, err := ParseLabeledIssue(real); ok || err != nil {
		t.Fatalf("example without installation: ok=%v err=%v", ok, err)
	}
	ev, ok, err := ParseLabeledIssue(testenv.LabeledEvent(t, "flaky", "alice", 12, "Flaky", "body"))
	if err != nil || !ok {
		t.Fatalf("ok=%v err=%v", ok, err)
	}
	want := LabeledIssue{InstallationID: testenv.Installation, Repo: github.Repo{Owner: "hexpm", Name: "hexpm"}, Issue: 12, Label: "flaky", Sender: "alice", Text: "Flaky\nbody"}
	if ev != want {
		t.Fatalf("got %+v\nwant %+v", ev, want)
	}
	bot, _, _ := ParseLabeledIssue(testenv.LabeledEvent(t, "flaky", "renovate[bot]", 12, "", ""))
	if !bot.SenderIsBot {
		t.Fatal("bot sender not recognised")
	}

	modified := func(change func(map[string]any)) []byte {
		var m map[string]any
		json.Unmarshal(testenv.LabeledEvent(t, "flaky", "alice", 12, "t", "b"), &m)
		change(m)
		b, _ := json.Marshal(m)
		return b
	}
	for name, payload := range map[string][]byte{
		"unlabeled":    modified(func(m map[string]any) { m["action"] = "unlabeled" }),
		"pull request": modified(func(m map[string]any) { m["issue"].(map[string]any)["pull_request"] = map[string]any{"url": "x"} }),
		"no label":     modified(func(m map[string]any) { delete(m, "label") }),
	} {
		if _, ok, err := ParseLabeledIssue(payload); ok || err != nil {
			t.Errorf("%s: ok=%v err=%v", name, ok, err)
		}
	}
	for name, payload := range map[string][]byte{
		"not JSON":      []byte(`{"action":`),
		"wrong types":   []byte(`{"action":"labeled","issue":{"number":"twelve"}}`),
		"bad repo name": modified(func(m map[string]any) { m["repository"].(map[string]any)["full_name"] = "no-slash" }),
	} {
		if _, _, err := ParseLabeledIssue(payload); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzParseLabeledIssue(f *testing.F) {
	f.Add(testenv.LabeledEvent(f, "flaky", "alice", 12, "Flaky test/a_test.exs:1", "body"))
	f.Add([]byte(`{"action":"labeled","installation":{"id":1},"issue":{"number":1},"label":{"name":"x"},"sender":{"login":"a"},"repository":{"full_name":"a/b"}}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		ev, ok, err := ParseLabeledIssue(payload)
		if !ok {
			return
		}
		if err != nil || ev.InstallationID <= 0 || ev.Issue <= 0 || ev.Repo.Owner == "" || ev.Repo.Name == "" || ev.Label == "" || ev.Sender == "" {
			t.Fatalf("accepted an incomplete event: %+v %v", ev, err)
		}
	})
}
