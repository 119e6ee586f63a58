package follow_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/github/githubtest"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/prompts"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/sandbox"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/follow"
	"github.com/pitcrew/pitcrew/work/worktest"
)

// When a fix's pull request is verified independently, and with which
// seed and runs, decided by the verify step alone: no HTTP, struct fakes.
func TestWhenAFixIsVerified(t *testing.T) {
	const head, base = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	seed := func(s int64) *int64 { return &s }
	measured := &evidence.Measured{Phases: map[evidence.Phase]*evidence.PhaseCount{evidence.PhaseBefore: {Runs: 10, FailedRuns: 1, FailingSeeds: []int64{4242}}}}
	for _, c := range []struct {
		name, config string
		kind         runs.Kind
		about        string
		state        string // of the pull request
		claimed      *int64
		measured     *evidence.Measured
		prompt       string // in the verification's prompt; "" for no session
		note         string // on the pull request's verification; "-" for none decided, "" for none to make
		refused      bool   // the sandbox refuses to start sessions
	}{
		{name: "a fix with a measured seed", kind: runs.KindFlaky, about: "test/a_test.exs:7", state: runs.PullOpen, claimed: seed(4242), measured: measured,
			prompt: "mix test test/a_test.exs:7 --seed 4242`\n   once (expected to pass), then `mix test test/a_test.exs:7` with random seeds until\n   the test has run 50 times"},
		{name: "the claimed seed the log does not show: the log's", kind: runs.KindFlaky, about: "test/a_test.exs:7", state: runs.PullOpen, claimed: seed(1), measured: measured,
			prompt: "--seed 4242"},
		{name: "runs for the measured rate above the floor", config: "flaky:\n  verify_runs: 5\n", kind: runs.KindFlaky, about: "test/a_test.exs:7", state: runs.PullOpen, measured: measured,
			prompt: "has run 29 times on the head"},
		{name: "the sandbox refuses the session", kind: runs.KindFlaky, about: "test/a_test.exs:7", state: runs.PullOpen, claimed: seed(4242), refused: true,
			note: "not verified independently: the sandbox refused to start it (HTTP 422)"},
		{name: "no seed anywhere", kind: runs.KindFlaky, about: "test/a_test.exs:7", state: runs.PullOpen, note: "not verified independently: the fix names no failing seed"},
		{name: "turned off", config: "flaky:\n  verify: \"off\"\n", kind: runs.KindFlaky, about: "test/a_test.exs:7", state: runs.PullOpen, claimed: seed(1)},
		{name: "the flaky job turned off", config: "flaky:\n  enabled: false\n", kind: runs.KindFlaky, about: "test/a_test.exs:7", state: runs.PullOpen, claimed: seed(1)},
		{name: "a merged pull request", kind: runs.KindFlaky, about: "test/a_test.exs:7", state: runs.PullMerged, claimed: seed(1), note: "-"},
		{name: "an alert fix", kind: runs.KindAlert, about: "alert-1", state: runs.PullOpen, claimed: seed(1), note: "-"},
	} {
		t.Run(c.name, func(t *testing.T) {
			gh := &githubtest.Fake{Installation: testenv.Installation, Config: c.config, Pulls: map[int]github.PullRequest{}}
			sessions := &testenv.Sessions{}
			var sb work.Sandbox = sessions
			if c.refused {
				sb = refusingSandbox{sessions}
			}
			b := worktest.Env(t, gh, sb)
			ctx := context.Background()
			fix, _, err := b.Ledger.Claim(ctx, runs.Run{Key: "flaky:hexpm/hexpm:" + c.about, Kind: c.kind, InstallationID: testenv.Installation, Repo: "hexpm/hexpm", Origin: 3, About: c.about}, time.Hour, 100, runs.Subject{Repo: "hexpm/hexpm", Issue: 3})
			if err == nil {
				fix, err = b.Ledger.Move(ctx, fix, runs.Started, func(r *runs.Run) { r.SessionID = "ses_fix" })
			}
			if err == nil {
				fix, err = b.Ledger.Move(ctx, fix, runs.Completed, func(r *runs.Run) {
					r.Measured = c.measured
					r.Result = &prompts.Result{Outcome: prompts.OutcomeFixed, PRURL: "https://github.com/hexpm/hexpm/pull/77", Seed: c.claimed}
					r.PR = &runs.Pull{Number: 77, State: c.state, Head: head, Base: base, Checked: head, CheckRunID: 900}
				})
			}
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // a second event of the same head decides nothing again
				if fix, err = follow.Verify(ctx, &b, gh, fix); err != nil {
					t.Fatal(err)
				}
			}
			if len(sessions.Prompts) > 1 || (len(sessions.Prompts) == 1) != (c.prompt != "") {
				t.Fatalf("%d sessions", len(sessions.Prompts))
			}
			for key, p := range sessions.Prompts {
				if !strings.HasPrefix(key, "verify:hexpm/hexpm:77:"+head+"#") || !strings.Contains(p, c.prompt) || !strings.Contains(p, "git checkout "+base) {
					t.Fatalf("session %s:\n%s", key, p)
				}
			}
			v := fix.PR.Verify
			switch {
			case c.note == "-" && v != nil:
				t.Fatalf("verification %+v, want none", v)
			case c.note == "-":
			case v == nil || v.Head != head || v.Note != c.note || (v.RunID != "") != (c.prompt != "" || c.refused):
				t.Fatalf("verification %+v", v)
			}
		})
	}
}

// refusingSandbox refuses every session, as a sandbox that will not take
// the request does.
type refusingSandbox struct{ *testenv.Sessions }

func (refusingSandbox) Start(context.Context, string, string, string, []string) (sandbox.Session, error) {
	return sandbox.Session{}, &sandbox.PermanentError{Status: 422}
}

// A head verified before (pushed away, then back) shows that verification's
// result, and starts no second session.
func TestAHeadVerifiedBeforeShowsItsResult(t *testing.T) {
	const head, base = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	gh := &githubtest.Fake{Installation: testenv.Installation, Pulls: map[int]github.PullRequest{}}
	sessions := &testenv.Sessions{}
	b := worktest.Env(t, gh, sessions)
	ctx := context.Background()
	repo, _ := github.ParseRepo("hexpm/hexpm")
	agrees := &evidence.Measured{Phases: map[evidence.Phase]*evidence.PhaseCount{
		evidence.PhaseBefore: {Runs: 1, FailedRuns: 1, Seeds: []int64{8}, FailingSeeds: []int64{8}}, evidence.PhaseAfter: {Runs: 50, Seeds: []int64{8}}}}
	old, _, err := b.Ledger.Claim(ctx, runs.Run{Key: follow.VerifyKey(repo, 77, head), Kind: follow.VerifyJob.Kind, InstallationID: testenv.Installation, Repo: "hexpm/hexpm", Delivery: "earlier"}, runs.Retention, 100, runs.Subject{})
	if err == nil {
		old, err = b.Ledger.Move(ctx, old, runs.Started, func(r *runs.Run) { r.SessionID = "ses_old" })
	}
	if err == nil {
		_, err = b.Ledger.Move(ctx, old, runs.Completed, func(r *runs.Run) { r.Measured = agrees })
	}
	fix, _, err2 := b.Ledger.Claim(ctx, runs.Run{Key: "flaky:hexpm/hexpm:test/a_test.exs:7", Kind: runs.KindFlaky, InstallationID: testenv.Installation, Repo: "hexpm/hexpm", About: "test/a_test.exs:7"}, time.Hour, 100, runs.Subject{Repo: "hexpm/hexpm", Issue: 3})
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	if fix, err = b.Ledger.Move(ctx, fix, runs.Started, func(r *runs.Run) { r.SessionID = "ses_fix" }); err == nil {
		fix, err = b.Ledger.Move(ctx, fix, runs.Completed, func(r *runs.Run) {
			r.Result = &prompts.Result{Outcome: prompts.OutcomeFixed, PRURL: "https://github.com/hexpm/hexpm/pull/77", Seed: func(s int64) *int64 { return &s }(8)}
			r.PR = &runs.Pull{Number: 77, State: runs.PullOpen, Head: head, Base: base, Checked: head, CheckRunID: 901}
		})
	}
	if err == nil {
		fix, err = follow.Verify(ctx, &b, gh, fix)
	}
	if err != nil {
		t.Fatal(err)
	}
	if v := fix.PR.Verify; v == nil || v.RunID != old.ID || v.Result == nil || v.Result.Verdict != evidence.VerdictClean || len(sessions.Prompts) != 0 {
		t.Fatalf("verification %+v, %d sessions", v, len(sessions.Prompts))
	}
}
