package runs

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

func TestSightingsCountEachOccurrenceOnce(t *testing.T) {
	ctx := context.Background()
	l := NewLedger(testenv.Redis(t))
	for _, o := range []struct{ occ, commit string }{{"1/1", "aaa"}, {"1/1", "aaa"}, {"2/1", "aaa"}, {"3/2", "bbb"}} {
		if _, err := l.RecordSighting(ctx, "o/r", Seen{Key: "k", Occurrence: o.occ, Commit: o.commit}); err != nil {
			t.Fatal(err)
		}
	}
	s, err := l.RecordSighting(ctx, "o/r", Seen{Key: "k", Occurrence: "3/2", Commit: "bbb"})
	if err != nil || s.Count != 3 || s.Commits != 2 || s.FirstSeen.IsZero() {
		t.Fatalf("%+v %v", s, err)
	}
}

// at makes the ledger's clock read day d (days since 1970) at noon.
func at(l *Ledger, d int64) { l.now = func() time.Time { return time.Unix(d*86400+12*3600, 0).UTC() } }

func TestTheFlakyTestsIndexListsTheMostRecentlySeenWithTheirHistoryAndRun(t *testing.T) {
	ctx := context.Background()
	l := NewLedger(testenv.Redis(t))
	const today = 20000
	seen := func(day int64, key, occ string) {
		at(l, day)
		if _, err := l.RecordSighting(ctx, "Hexpm/Hexpm", Seen{Key: key, Occurrence: occ, Commit: "c" + occ, Where: "https://github.com/hexpm/hexpm/actions/runs/" + occ,
			Name: "test " + key, Module: "Mod"}); err != nil {
			t.Fatal(err)
		}
	}
	seen(today-2, "flaky:hexpm/hexpm:test/a_test.exs:1", "1")
	seen(today-1, "flaky:hexpm/hexpm:test/b_test.exs:2", "2")
	seen(today, "flaky:hexpm/hexpm:test/a_test.exs:1", "3")
	seen(today, "flaky:hexpm/hexpm:test/a_test.exs:1", "4")
	run := newRun("flaky:hexpm/hexpm:test/a_test.exs:1")
	if _, _, err := l.Claim(ctx, run, time.Hour, 10, Subject{}); err != nil {
		t.Fatal(err)
	}

	tests, total, err := l.FlakyTests(ctx, "hexpm/hexpm", 10)
	if err != nil || total != 2 || len(tests) != 2 {
		t.Fatalf("%d tests of %d: %v", len(tests), total, err)
	}
	a, b := tests[0], tests[1]
	if a.Key != "flaky:hexpm/hexpm:test/a_test.exs:1" || b.Key != "flaky:hexpm/hexpm:test/b_test.exs:2" {
		t.Fatalf("not most recent first: %s, %s", a.Key, b.Key)
	}
	if a.Sighting.Count != 3 || a.Sighting.Commits != 3 || a.Sighting.Commit != "c4" || a.Sighting.Name != "test "+a.Key || !a.Sighting.LastSeen.After(a.Sighting.FirstSeen) {
		t.Fatalf("sighting %+v", a.Sighting)
	}
	if got := a.Recent(l.now(), 3); fmt.Sprint(got) != "[1 0 2]" {
		t.Fatalf("last three days of a: %v", got)
	}
	if a.Run == nil || a.Run.State != Queued || b.Run != nil {
		t.Fatalf("runs: %+v / %+v", a.Run, b.Run)
	}
	// Keyed by its lower-case name, the repository is listed as GitHub spells it.
	if repos, err := l.FlakyRepos(ctx, 10); err != nil || fmt.Sprint(repos) != "[Hexpm/Hexpm]" {
		t.Fatalf("repos %v %v", repos, err)
	}
}

func TestSightingsHistoryKeepsNinetyDays(t *testing.T) {
	ctx := context.Background()
	l := NewLedger(testenv.Redis(t))
	key := "flaky:o/r:test/a_test.exs:1"
	for d := int64(0); d < 200; d++ {
		at(l, 20000+d)
		if _, err := l.RecordSighting(ctx, "o/r", Seen{Key: key, Occurrence: fmt.Sprint(d)}); err != nil {
			t.Fatal(err)
		}
	}
	tests, _, err := l.FlakyTests(ctx, "o/r", 1)
	if err != nil || len(tests) != 1 {
		t.Fatal(err)
	}
	if n := len(tests[0].Days); n != 90 {
		t.Fatalf("%d days of history kept, want 90", n)
	}
	if tests[0].Sighting.Count != 200 {
		t.Fatalf("count %d", tests[0].Sighting.Count)
	}
	// A test last seen more than 90 days ago leaves the repository's index.
	at(l, 20000+200+91)
	if _, err := l.RecordSighting(ctx, "o/r", Seen{Key: "flaky:o/r:test/b_test.exs:1", Occurrence: "x"}); err != nil {
		t.Fatal(err)
	}
	if tests, total, _ := l.FlakyTests(ctx, "o/r", 10); total != 1 || tests[0].Key != "flaky:o/r:test/b_test.exs:1" {
		t.Fatalf("index after 91 quiet days: %d, %+v", total, tests)
	}
}

// An edit of the dashboard while a refresh writes it is not lost: the
// refresh does not record its body as the issue's, nor drop the edit's note.
func TestAnEditDuringARefreshIsNotLost(t *testing.T) {
	ctx := context.Background()
	l := NewLedger(testenv.Redis(t))
	if err := l.SaveDashboard(ctx, "o/r", Dashboard{Issue: 7, Digest: "one"}, false); err != nil {
		t.Fatal(err)
	}
	read, err := l.Dashboard(ctx, "o/r")
	if err != nil || read.Issue != 7 || read.Digest != "one" {
		t.Fatalf("%+v %v", read, err)
	}
	if err := l.DashboardEdited(ctx, "o/r", "a reader's tick was undone"); err != nil {
		t.Fatal(err)
	}
	read.Digest = "two"
	if err := l.SaveDashboard(ctx, "o/r", read, true); err != nil {
		t.Fatal(err)
	}
	got, _ := l.Dashboard(ctx, "o/r")
	if got.Digest != "" || got.Note != "a reader's tick was undone" || got.Issue != 7 {
		t.Fatalf("after a refresh that raced an edit: %+v", got)
	}
	// The next refresh, with no edit in between, records its body and may
	// drop the note.
	got.Digest = "three"
	if err := l.SaveDashboard(ctx, "o/r", got, true); err != nil {
		t.Fatal(err)
	}
	if got, _ = l.Dashboard(ctx, "o/r"); got.Digest != "three" || got.Note != "" {
		t.Fatalf("%+v", got)
	}
}
