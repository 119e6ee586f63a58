package handlers

import (
	"os"
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew/hook"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/publish"
)

func TestParseDashboardEdit(t *testing.T) {
	id := publish.TickID("flaky:hexpm/hexpm:test/a_test.exs:1")
	body := "- [x] `test/a_test.exs:1` <!-- pitcrew:tick:" + id + " -->\n- [ ] `test/b_test.exs:2` <!-- pitcrew:tick:0123456789ab -->"
	ev, ok, err := ParseDashboardEdit(testenv.DashboardEditEvent(t, "alice", 500, body))
	if err != nil || !ok || ev.InstallationID != testenv.Installation || ev.Repo != hexpm || ev.Issue != 500 || ev.Editor != "alice" || strings.Join(ev.Ticks, ",") != id {
		t.Fatalf("%+v %v %v", ev, ok, err)
	}
	edit := string(testenv.DashboardEditEvent(t, "alice", 500, body))
	again := strings.Replace(edit, `"from":"the body before"`, `"from":"- [x] <!-- pitcrew:tick:`+id+` -->"`, 1)
	if ev, ok, err := ParseDashboardEdit([]byte(again)); !ok || err != nil || len(ev.Ticks) != 0 {
		t.Fatalf("a box ticked before the edit: %+v %v %v", ev, ok, err)
	}
	for name, payload := range map[string]string{
		"a bot's edit":       string(testenv.DashboardEditEvent(t, "pitcrew[bot]", 500, body)),
		"a title's edit":     strings.Replace(edit, `"changes":{"body":{"from":"the body before"}}`, `"changes":{"title":{"from":"x"}}`, 1),
		"another action":     strings.Replace(edit, `"action":"edited"`, `"action":"closed"`, 1),
		"another label":      strings.Replace(edit, `"name":"pitcrew:dashboard"`, `"name":"bug"`, 1),
		"a pull request":     strings.Replace(edit, `"number":500,`, `"number":500,"pull_request":{"url":"https://api.github.com/repos/hexpm/hexpm/pulls/500"},`, 1),
		"no installation":    strings.Replace(edit, `"installation":{"id":42`, `"installation":{"id":0`, 1),
		"the bare example":   mustRead(t, "issues.edited.json"),
		"the example's edit": string(testenv.Event(t, "issues.edited.json", func(map[string]any) {})),
	} {
		if ev, ok, err := ParseDashboardEdit([]byte(payload)); ok || err != nil {
			t.Errorf("%s: %+v %v %v", name, ev, ok, err)
		}
	}
	if _, _, err := ParseDashboardEdit([]byte(`{"action":`)); err == nil {
		t.Fatal("a broken body")
	}
}

func mustRead(t *testing.T, name string) string {
	b, err := os.ReadFile(testenv.Path("testdata", "webhooks", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func FuzzParseDashboardEdit(f *testing.F) {
	f.Add(testenv.DashboardEditEvent(f, "alice", 500, "- [x] `a` <!-- pitcrew:tick:0123456789ab -->"))
	f.Add(testenv.Event(f, "issues.edited.json", func(map[string]any) {}))
	f.Fuzz(func(t *testing.T, payload []byte) {
		Ignored("issues", hook.NewBody(payload))
		ev, ok, _ := ParseDashboardEdit(payload)
		if ok && (ev.Issue <= 0 || ev.InstallationID <= 0 || ev.Editor == "" || strings.HasSuffix(ev.Editor, "[bot]") || ev.Repo.Name == "" || len(ev.Ticks) > 20) {
			t.Fatalf("edit %+v", ev)
		}
	})
}
