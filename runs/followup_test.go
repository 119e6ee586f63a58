package runs

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pitcrew/pitcrew/internal/metrics"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/sandbox"
)

type messages struct{ keys []string }

func (m *messages) Message(_ context.Context, _, key, _ string) (sandbox.Session, error) {
	m.keys = append(m.keys, key)
	return sandbox.Session{Status: sandbox.StatusRunning}, nil
}

func TestAFollowUpStartsItsRunAgainOnce(t *testing.T) {
	ctx := context.Background()
	l := NewLedger(testenv.Redis(t))
	run, _, err := l.Claim(ctx, newRun("flaky:hexpm/hexpm:test/a_test.exs:1"), time.Hour, 100, Subject{})
	if err == nil {
		run, err = l.Move(ctx, run, Started, func(r *Run) { r.SessionID = "ses_1" })
	}
	if err != nil {
		t.Fatal(err)
	}
	m := &messages{}
	if _, err := l.Resume(ctx, m, run, FollowUp{Source: "review:1"}, "more"); err == nil {
		t.Fatal("a live run took a follow-up")
	}
	ended, err := l.Move(ctx, run, Completed, nil)
	if err != nil {
		t.Fatal(err)
	}
	// No stale copy starts an ended run again: only a follow-up does.
	if _, err := l.Move(ctx, run, Started, nil); !errors.As(err, new(ErrTransition)) {
		t.Fatalf("a stale copy moved an ended run back to started: %v", err)
	}
	resumed, err := l.Resume(ctx, m, ended, FollowUp{Reason: "the review by alice", Source: "review:1", Max: 3}, "more")
	if err != nil {
		t.Fatal(err)
	}
	if resumed.State != Started || len(resumed.FollowUps) != 1 || resumed.FollowUps[0].N != 1 || !resumed.EndedAt.IsZero() {
		t.Fatalf("resumed %s %+v ended %v", resumed.State, resumed.FollowUps, resumed.EndedAt)
	}
	if ids, _ := l.StartedBefore(ctx, time.Now().Add(time.Hour), 10); len(ids) != 1 || ids[0] != "ses_1" {
		t.Fatalf("the resumed run is not where the reconciler looks: %v", ids)
	}
	if got, err := l.BySession(ctx, "ses_1"); err != nil || got.ID != run.ID {
		t.Fatalf("BySession = %+v %v", got, err)
	}
	done, err := l.Move(ctx, resumed, Completed, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The same review delivered again is not sent again; the next is 2.
	if again, err := l.Resume(ctx, m, done, FollowUp{Source: "review:1"}, "more"); err != nil || again.State != Completed {
		t.Fatalf("the same source again: %s %v", again.State, err)
	}
	second, err := l.Resume(ctx, m, done, FollowUp{Source: "review:2"}, "more")
	if err != nil || len(second.FollowUps) != 2 || second.FollowUps[1].N != 2 {
		t.Fatalf("second follow-up: %+v %v", second.FollowUps, err)
	}
	if len(m.keys) != 2 || m.keys[0] != FollowUpKey(run.ID, "review:1") || m.keys[1] != FollowUpKey(run.ID, "review:2") {
		t.Fatalf("messages sent with keys %q", m.keys)
	}
}

// session is a sandbox whose one session says what a test sets.
type session struct{ s sandbox.Session }

// newFinisher is a Finisher of l that reads ses, for jobs without artifacts.
func newFinisher(l *Ledger, ses *session) *Finisher {
	return &Finisher{Ledger: l, Sandbox: ses, Jobs: func(Kind) Job { return Job{} }, Metrics: metrics.New(prometheus.NewRegistry()),
		Text: func(s string, _ int) string { return s }, SafeURL: func(string) string { return "" }}
}

func (s *session) Get(context.Context, string) (sandbox.Session, error) { return s.s, nil }
func (s *session) Download(context.Context, string) ([]byte, error)     { return nil, nil }

// The outcome of a follow-up's turn: a session read for an earlier turn
// does not end the new one, and a failed turn leaves the run as it had
// ended, the failure on the follow-up.
func TestAFollowUpsTurnEndsOnlyWithItsOwnOutcome(t *testing.T) {
	ctx := context.Background()
	l := NewLedger(testenv.Redis(t))
	ses := &session{}
	f := newFinisher(l, ses)
	run, _, err := l.Claim(ctx, newRun("flaky:hexpm/hexpm:test/a_test.exs:1"), time.Hour, 100, Subject{})
	if err == nil {
		run, err = l.Move(ctx, run, Started, func(r *Run) { r.SessionID = "ses_1" })
	}
	if err != nil {
		t.Fatal(err)
	}
	ses.s = sandbox.Session{ID: "ses_1", Status: sandbox.StatusCompleted, Result: "first answer"}
	first, _, err := f.Record(ctx, run, "")
	if err != nil || first.State != Completed {
		t.Fatalf("first turn: %s %v", first.State, err)
	}
	resumed, err := l.Resume(ctx, &messages{}, first, FollowUp{Source: "review:1"}, "more")
	if err != nil {
		t.Fatal(err)
	}
	// A refresh that read the run before the follow-up, and the session's
	// first answer, must not end the second turn.
	if got, _, err := f.Record(ctx, run, ""); err != nil || got.State != Started {
		t.Fatalf("an earlier turn's read ended the follow-up: %s %v", got.State, err)
	}
	ses.s = sandbox.Session{ID: "ses_1", Status: sandbox.StatusFailed, Result: "out of memory"}
	failed, _, err := f.Record(ctx, resumed, "")
	if err != nil || failed.State != Completed || failed.Answer != "first answer" || failed.FollowUps[0].Error != "out of memory" {
		t.Fatalf("a failed follow-up: %s answer %q follow-up %+v error %q, %v", failed.State, failed.Answer, failed.FollowUps, failed.Error, err)
	}
}

func TestTheOpenedPullRequestIsTheLastLinkNotTheProfiledOne(t *testing.T) {
	r := Run{Repo: "hexpm/hexpm", Origin: 12}
	for answer, want := range map[string]string{
		"As asked on https://github.com/hexpm/hexpm/pull/12, I opened https://github.com/hexpm/hexpm/pull/90.": "https://github.com/hexpm/hexpm/pull/90",
		"Opened https://github.com/hexpm/hexpm/pull/90 (see https://github.com/hexpm/hexpm/pull/12)":           "https://github.com/hexpm/hexpm/pull/90",
		"I could not: https://github.com/hexpm/hexpm/pull/12 is what I profiled.":                              "",
		"Opened https://github.com/elixir-ecto/ecto/pull/90":                                                   "",
	} {
		got := openedPull(answer, r)
		if want == "" && len(got) != 0 || want != "" && (len(got) != 1 || got[0] != want) {
			t.Errorf("%q: %q, want %q", answer, got, want)
		}
	}
}
