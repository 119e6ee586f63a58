package follow_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/github/githubtest"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work/follow"
	"github.com/pitcrew/pitcrew/work/worktest"
)

const pull77 = "https://github.com/hexpm/hexpm/pull/77"

// Which pull requests pitcrew follows and what it makes of them, decided
// by the follow step alone: no HTTP, a struct fake of GitHub.
func TestWhatFollowingAPullRequestDoes(t *testing.T) {
	sleepy, _ := os.ReadFile(testenv.Path("evidence", "testdata", "flaky", "sleep_added.diff"))
	plug, _ := os.ReadFile(testenv.Path("evidence", "testdata", "alert", "plug_removed.diff"))
	alone, _ := os.ReadFile(testenv.Path("evidence", "testdata", "flaky", "async_off_module_global.diff"))
	const module = "test/hexpm/billing/report_test.exs"
	atHead, _ := os.ReadFile(testenv.Path("evidence", "testdata", "flaky", "async_off_module_global.head", module))
	const head = "1111111111111111111111111111111111111111"
	open := github.PullRequest{Number: 77, State: "open", HeadSHA: head}
	for _, c := range []struct {
		name      string
		kind      runs.Kind
		prURL     string
		answerPRs []string
		pull      *github.PullRequest
		diff      string
		diffErr   error
		headFiles map[string]string // the repository at the pull request's head
		follows   bool
		state     string // of the followed pull request
		check     string // the evidence check run's title; "" for none
		summary   string // in its summary, when set
	}{
		{name: "a flaky fix with a sleep", kind: runs.KindFlaky, prURL: "https://github.com/hexpm/hexpm/pull/77", pull: &open, diff: string(sleepy),
			follows: true, state: runs.PullOpen, check: "Evidence: 1 concern"},
		{name: "an alert fix read with the alert rules", kind: runs.KindAlert, prURL: "https://github.com/hexpm/hexpm/pull/77", pull: &open, diff: string(plug),
			follows: true, state: runs.PullOpen, check: "Evidence: 1 concern"},
		{name: "the same diff under the flaky rules is clean", kind: runs.KindFlaky, prURL: "https://github.com/hexpm/hexpm/pull/77", pull: &open, diff: string(plug),
			follows: true, state: runs.PullOpen, check: "Evidence: clean"},
		{name: "a pull request read from the answer's text", kind: runs.KindFlaky, answerPRs: []string{"https://github.com/hexpm/hexpm/pull/77"}, pull: &open, diff: string(sleepy),
			follows: true, state: runs.PullOpen, check: "Evidence: 1 concern"},
		{name: "a module made to run alone, its global state outside the hunks", kind: runs.KindFlaky, prURL: "https://github.com/hexpm/hexpm/pull/77", pull: &open, diff: string(alone),
			headFiles: map[string]string{module: string(atHead)}, follows: true, state: runs.PullOpen, check: "Evidence: 1 note"},
		{name: "the same module when its file cannot be read at head", kind: runs.KindFlaky, prURL: "https://github.com/hexpm/hexpm/pull/77", pull: &open, diff: string(alone),
			follows: true, state: runs.PullOpen, check: "Evidence: 1 note", summary: "was not read whole"},
		{name: "a diff GitHub will not produce", kind: runs.KindFlaky, prURL: "https://github.com/hexpm/hexpm/pull/77", pull: &open, diffErr: github.ErrDiffTooLarge,
			follows: true, state: runs.PullOpen, check: "Evidence: not checked: GitHub will not produce a diff this large"},
		{name: "a pull request that is gone", kind: runs.KindFlaky, prURL: "https://github.com/hexpm/hexpm/pull/77", follows: true, state: runs.PullGone},
		{name: "a merged pull request", kind: runs.KindFlaky, prURL: "https://github.com/hexpm/hexpm/pull/77", pull: &github.PullRequest{Number: 77, State: "closed", Merged: true, MergedAt: time.Now(), HeadSHA: head},
			diff: string(sleepy), follows: true, state: runs.PullMerged, check: "Evidence: 1 concern"},
		{name: "a pull request of another repository", kind: runs.KindFlaky, prURL: "https://github.com/elixir-ecto/ecto/pull/77", pull: &open, diff: string(sleepy)},
		{name: "a profiling run's pull request", kind: runs.KindMigration, prURL: "https://github.com/hexpm/hexpm/pull/77", pull: &open, diff: string(sleepy)},
		{name: "a run that names none", kind: runs.KindFlaky, pull: &open, diff: string(sleepy)},
	} {
		t.Run(c.name, func(t *testing.T) {
			gh := &githubtest.Fake{Installation: testenv.Installation, Pulls: map[int]github.PullRequest{}, Diffs: map[int]string{77: c.diff},
				DiffErrs: map[int]error{77: c.diffErr}, HeadFiles: c.headFiles, Suites: map[string]string{"github-actions/1": "success", "pitcrew/2": "neutral"}}
			if c.pull != nil {
				gh.Pulls[77] = *c.pull
			}
			b := worktest.Env(t, gh, &testenv.Sessions{})
			run := worktest.EndedRun(t, b, c.kind, "flaky:hexpm/hexpm:test/a_test.exs:1", 3, "ses_1", func(r *runs.Run) {
				r.AnswerPRs = c.answerPRs
				if c.prURL != "" {
					worktest.FixedIn(c.prURL)(r)
				}
			})
			if follow.Follows(b.Jobs, run) != c.follows {
				t.Fatalf("follows %v, want %v", follow.Follows(b.Jobs, run), c.follows)
			}
			if !c.follows {
				return
			}
			run, err := follow.Pull(context.Background(), &b, gh, run)
			if err != nil {
				t.Fatal(err)
			}
			if run.PR == nil || run.PR.State != c.state || follow.Follows(b.Jobs, run) {
				t.Fatalf("pull %+v", run.PR)
			}
			if id, _ := b.Ledger.PullRun(context.Background(), "HexPM/hexpm", 77); id != run.ID {
				t.Fatalf("the pull request names run %q", id)
			}
			var titles []string
			for _, out := range gh.Checks {
				titles = append(titles, out.Title)
			}
			if strings.Join(titles, "|") != c.check {
				t.Fatalf("check runs %q, want %q", titles, c.check)
			}
			if c.summary != "" && !strings.Contains(gh.Checks[0].Summary, c.summary) {
				t.Fatalf("check run summary %q, want %q in it", gh.Checks[0].Summary, c.summary)
			}
			if c.check != "" && (run.PR.Suites["github-actions/1"] != "success" || len(run.PR.Suites) != 1) {
				t.Fatalf("suites %v: the CI's, not pitcrew's own", run.PR.Suites)
			}
			// Read again at the same head: nothing is checked twice.
			again, err := follow.Read(context.Background(), &b, gh, run.Repo, run.ID, 77, follow.News{Reread: true})
			if err != nil || len(gh.Checks) != len(titles) || again.PR.State != c.state {
				t.Fatalf("read again: %v, %d check runs", err, len(gh.Checks))
			}
		})
	}
}

// A check run created by an attempt whose record was then lost (Redis
// timed out, the replica died) is found by the next attempt, not created
// a second time.
func TestAnEvidenceCheckRunWhoseRecordWasLostIsNotCreatedTwice(t *testing.T) {
	sleepy, _ := os.ReadFile(testenv.Path("evidence", "testdata", "flaky", "sleep_added.diff"))
	const head = "1111111111111111111111111111111111111111"
	gh := &githubtest.Fake{Installation: testenv.Installation, Diffs: map[int]string{77: string(sleepy)},
		Pulls: map[int]github.PullRequest{77: {Number: 77, State: "open", HeadSHA: head}}}
	b := worktest.Env(t, gh, &testenv.Sessions{})
	ctx := context.Background()
	run := worktest.EndedRun(t, b, runs.KindFlaky, "flaky:hexpm/hexpm:test/a_test.exs:1", 3, "ses_1", worktest.FixedIn(pull77))

	lost, cancel := context.WithCancel(ctx)
	gh.AfterWrite = func(call string) {
		if strings.HasPrefix(call, "CreateCheckRun") {
			cancel()
		}
	}
	if _, err := follow.Pull(lost, &b, gh, run); err == nil {
		t.Fatal("the attempt whose record was lost succeeded")
	}
	gh.AfterWrite = nil
	run, err := follow.Pull(ctx, &b, gh, run)
	if err != nil {
		t.Fatal(err)
	}
	if w := gh.WritesSoFar(); len(w) != 1 || !strings.HasPrefix(w[0], "CreateCheckRun") {
		t.Fatalf("writes %q, want one check run", w)
	}
	if run.PR.CheckRunID != 1 || run.PR.Checked != head || run.PR.Creating != "" || run.PR.Concerns != 1 {
		t.Fatalf("pull %+v", run.PR)
	}
}

// Two runs name the same pull request: the later one follows it, and the
// earlier one's comment says so instead of going stale.
func TestAPullRequestNamedByALaterRunIsHandedOver(t *testing.T) {
	const head = "1111111111111111111111111111111111111111"
	gh := &githubtest.Fake{Installation: testenv.Installation, Diffs: map[int]string{77: ""},
		Pulls: map[int]github.PullRequest{77: {Number: 77, State: "open", HeadSHA: head}}}
	b := worktest.Env(t, gh, &testenv.Sessions{})
	ctx := context.Background()
	ended := func(key string, issue int) runs.Run {
		run, err := follow.Pull(ctx, &b, gh, worktest.EndedRun(t, b, runs.KindFlaky, key, issue, "ses_"+key, worktest.FixedIn(pull77)))
		if err != nil {
			t.Fatal(err)
		}
		return run
	}
	first := ended("flaky:hexpm/hexpm:test/a_test.exs:1", 3)
	if err := b.Publish.Status(ctx, gh, runs.Subject{Repo: "hexpm/hexpm", Issue: 3}, func(st *runs.Status) {
		st.Replace(runs.Status{InstallationID: testenv.Installation, Entries: []runs.Entry{{About: first.About, RunID: first.ID, Relation: runs.ClaimNew}}})
	}); err != nil {
		t.Fatal(err)
	}
	writes := len(gh.WritesSoFar())
	second := ended("flaky:hexpm/hexpm:test/b_test.exs:9", 4)

	if id, _ := b.Ledger.PullRun(ctx, "hexpm/hexpm", 77); id != second.ID {
		t.Fatalf("the pull request names run %q, want the later %q", id, second.ID)
	}
	if got, _ := b.Ledger.Get(ctx, first.ID); got.PR == nil || !got.PR.TakenOver {
		t.Fatalf("the earlier run's pull request: %+v", got.PR)
	}
	if second.PR.TakenOver {
		t.Fatal("the later run is marked taken over")
	}
	var handedOver bool
	for _, c := range gh.Comments {
		handedOver = handedOver || c.Issue == 3 && strings.Contains(c.Body, "a later run named it too and follows it from here on")
	}
	if !handedOver {
		t.Fatalf("issue #3's comment does not say the pull request was taken over: %+v", gh.Comments)
	}
	// The head's evidence check run carries over: the later run makes none.
	if w := gh.WritesSoFar()[writes:]; len(w) != 1 || !strings.HasPrefix(w[0], "EditComment") {
		t.Fatalf("writes after the first run: %q, want the first run's comment edited", w)
	}
	if second.PR.CheckRunID != first.PR.CheckRunID || second.PR.Checked != head {
		t.Fatalf("the later run's pull request %+v", second.PR)
	}
	// The same run following again hands nothing over.
	if _, err := follow.Pull(ctx, &b, gh, second); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Ledger.Get(ctx, second.ID); got.PR.TakenOver {
		t.Fatal("a run took its own pull request over")
	}
}
