package handlers

import (
	"os"
	"reflect"
	"testing"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/work/profiling"
)

func TestMigrationFiles(t *testing.T) {
	files := []github.ChangedFile{
		{Path: "priv/repo/migrations/1_a.exs", Status: "added"}, {Path: "apps/core/priv/repo/migrations/2_b.exs", Status: "modified"},
		{Path: "apps/core/nested/priv/repo/migrations/3_c.exs", Status: "added"}, {Path: "priv/repo/migrations/4_d.exs", Status: "removed"},
		{Path: "priv/repo/migrations/README.md", Status: "added"}, {Path: "priv/repo/seeds.exs", Status: "modified"},
	}
	got := profiling.Files(files, profiling.Section.Defaults().Paths)
	want := []string{"apps/core/priv/repo/migrations/2_b.exs", "priv/repo/migrations/1_a.exs"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q", got)
	}
	if got := profiling.Files(files, []string{"apps/*/nested/priv/repo/migrations/"}); len(got) != 1 {
		t.Fatalf("configured path: %q", got)
	}
}

func TestParseMergedPull(t *testing.T) {
	real, _ := os.ReadFile(testenv.Path("testdata", "webhooks", "pull_request.closed.json"))
	if _, ok, err := ParseMergedPull(real); ok || err != nil {
		t.Fatalf("closed without merge: ok=%v err=%v", ok, err)
	}
	ev, ok, err := ParseMergedPull(testenv.MergedPullEvent(t, 12, testenv.MergeSHA))
	if err != nil || !ok || ev.Number != 12 || ev.MergeSHA != testenv.MergeSHA || ev.Repo != (github.Repo{Owner: "hexpm", Name: "hexpm"}) {
		t.Fatalf("%+v %v %v", ev, ok, err)
	}
	if _, _, err := ParseMergedPull([]byte(`{"action":`)); err == nil {
		t.Fatal("accepted broken JSON")
	}
}

func FuzzParseMergedPull(f *testing.F) {
	f.Add(testenv.MergedPullEvent(f, 12, testenv.MergeSHA))
	f.Fuzz(func(t *testing.T, payload []byte) {
		ev, ok, _ := ParseMergedPull(payload)
		if ok && (ev.Number <= 0 || !github.ValidSHA(ev.MergeSHA) || ev.InstallationID <= 0) {
			t.Fatalf("accepted %+v", ev)
		}
	})
}

func FuzzParseDefaultBranchPush(f *testing.F) {
	b, _ := os.ReadFile(testenv.Path("testdata", "webhooks", "push.json"))
	f.Add(b)
	f.Fuzz(func(t *testing.T, payload []byte) {
		ev, ok, _ := ParseDefaultBranchPush(payload)
		if ok && (!github.ValidSHA(ev.After) || ev.InstallationID <= 0) {
			t.Fatalf("accepted %+v", ev)
		}
	})
}
