package profiling_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/github/githubtest"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work/profiling"
	"github.com/pitcrew/pitcrew/work/worktest"
)

// What pitcrew checks of a profiling run's slow-queries.json: the report
// read against its schema, each query's Ecto site at the commit profiled,
// the commit it says it measured (samples from real PostgreSQL plans).
func TestAReportIsCheckedAgainstTheCommitItProfiled(t *testing.T) {
	const commit = "2222222222222222222222222222222222222222"
	sample, err := os.ReadFile(testenv.Path("evidence", "testdata", "slowq", "agrees.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, data, about string
		files             map[string]string
		unread, missing   string
		problems          int
	}{
		{name: "it checks out", data: string(sample), about: commit, files: map[string]string{"lib/shop/orders.ex": strings.Repeat("x\n", 50)}},
		{name: "its Ecto file is not there", data: string(sample), about: commit, missing: "does not exist at this commit"},
		{name: "its Ecto file is shorter", data: string(sample), about: commit, files: map[string]string{"lib/shop/orders.ex": "x\n"}, missing: "has 2 lines at this commit, not 42"},
		{name: "it measured another commit", data: string(sample), about: strings.Repeat("3", 40), files: map[string]string{"lib/shop/orders.ex": strings.Repeat("x\n", 50)}, problems: 1},
		{name: "none left", about: commit, unread: "the run left no slow-queries.json"},
		{name: "not JSON", data: "{", about: commit, unread: "slow-queries.json is not JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			gh := &githubtest.Fake{HeadFiles: c.files}
			b := worktest.Env(t, gh, &testenv.Sessions{})
			run := runs.Run{ID: "m1", Repo: "hexpm/hexpm", About: c.about}
			if c.data != "" {
				if err := b.Ledger.SaveData(context.Background(), run.ID, []byte(c.data)); err != nil {
					t.Fatal(err)
				}
			}
			r, err := profiling.Review(context.Background(), &b, gh, github.Repo{Owner: "hexpm", Name: "hexpm"}, run)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.unread != "":
				if !strings.HasPrefix(r.Unread, c.unread) {
					t.Fatalf("unread %q, want %q", r.Unread, c.unread)
				}
				return
			case r.Unread != "" || len(r.Problems) != c.problems || len(r.Missing) != 1:
				t.Fatalf("%+v", r)
			case c.missing == "" && r.Missing[0] != "", c.missing != "" && !strings.Contains(r.Missing[0], c.missing):
				t.Fatalf("missing %q, want %q", r.Missing[0], c.missing)
			}
		})
	}
}

// Which changed files are migrations, and which names a prompt may hold.
func TestWhichFilesAreMigrations(t *testing.T) {
	files := []github.ChangedFile{{Path: "priv/repo/migrations/1_a.exs", Status: "added"}, {Path: "apps/web/priv/repo/migrations/2_b.exs", Status: "modified"},
		{Path: "priv/repo/migrations/3_gone.exs", Status: "removed"}, {Path: "lib/a.ex", Status: "modified"}, {Path: "priv/repo/migrations/4 `x`.exs", Status: "added"}}
	got := profiling.Files(files, []string{"priv/repo/migrations/", "apps/*/priv/repo/migrations/"})
	if strings.Join(got, ",") != "apps/web/priv/repo/migrations/2_b.exs,priv/repo/migrations/1_a.exs,priv/repo/migrations/4 `x`.exs" {
		t.Fatalf("%v", got)
	}
	usable, notice := profiling.UsableNames(got)
	if len(usable) != 2 || !strings.Contains(notice, "1 migration file was skipped") {
		t.Fatalf("%v %q", usable, notice)
	}
}
