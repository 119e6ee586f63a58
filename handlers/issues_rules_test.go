package handlers

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pitcrew/pitcrew/internal/github/githubtest"
	"github.com/pitcrew/pitcrew/internal/metrics"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/runs"
	"github.com/pitcrew/pitcrew/work"
)

// startedSessions is a struct fake of the sandbox: it records the
// sessions asked for, keyed by idempotency key, as the real one dedupes.
// ruleBase is a work.Env on the struct fakes and a private Redis database.
func ruleBase(t *testing.T, gh *githubtest.Fake, sb work.Sandbox) work.Env {
	return NewEnv(work.Env{Clients: gh.Clients(), Ledger: runs.NewLedger(testenv.Redis(t)), Sandbox: sb,
		Metrics: metrics.New(prometheus.NewRegistry()), AppSlug: "pitcrew"})
}

// Who may start a flaky-test fix with a label, and what each refusal
// says, decided by IssueLabeled alone: no HTTP, a struct fake of GitHub.
func TestWhoMayStartAFixWithALabel(t *testing.T) {
	const test = "test/hexpm/web/controllers/package_controller_test.exs:42"
	for _, c := range []struct {
		name, config, label, sender, text string
		sessions                          int
		comment                           string // in the status comment; "" means no write at all
	}{
		{name: "a writer", label: "flaky", sender: "alice", text: test, sessions: 1, comment: "`" + test + "`"},
		{name: "an admin, label in another case", label: "Flaky", sender: "eric", text: test, sessions: 1, comment: "`" + test + "`"},
		{name: "a reader", label: "flaky", sender: "mallory", text: test, comment: "only people with write access to this repository can start a flaky-test fix, and `mallory` has read access"},
		{name: "another bot", label: "flaky", sender: "dependabot[bot]", text: test},
		{name: "pitcrew's own bot, which opened the tracking issue", label: "flaky", sender: "pitcrew[bot]", text: test, sessions: 1, comment: "`" + test + "`"},
		{name: "another label", label: "bug", sender: "alice", text: test},
		{name: "the configured label", config: "flaky:\n  label: flaky-test\n", label: "flaky-test", sender: "alice", text: test, sessions: 1, comment: "`" + test + "`"},
		{name: "the default label when another is configured", config: "flaky:\n  label: flaky-test\n", label: "flaky", sender: "alice", text: test},
		{name: "the job switched off", config: "flaky:\n  enabled: false\n", label: "flaky", sender: "alice", text: test},
		{name: "a broken configuration, default label", config: "flaky:\n  lable: x\n", label: "flaky", sender: "alice", text: test, comment: "pitcrew could not use `.github/pitcrew.yml`"},
		{name: "a broken configuration, another label", config: "flaky:\n  lable: x\n", label: "flaky-test", sender: "alice", text: test},
		{name: "no test named", label: "flaky", sender: "alice", text: "the package page is flaky sometimes", comment: "this issue names no test pitcrew can run"},
		{name: "the daily limit reached", config: "daily_limit: 0\n", label: "flaky", sender: "alice", text: test, comment: "not started: the daily limit of 0 runs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			gh := &githubtest.Fake{Config: c.config, Permissions: map[string]string{"alice": "write", "eric": "admin"}}
			sb := &testenv.Sessions{}
			h := &IssueLabeled{Env: ruleBase(t, gh, sb)}
			if err := h.Handle(context.Background(), "issues", testenv.DeliveryID(), testenv.LabeledEvent(t, c.label, c.sender, 12, "Flaky test", c.text)); err != nil {
				t.Fatal(err)
			}
			if len(sb.Prompts) != c.sessions {
				t.Errorf("%d sessions, want %d", len(sb.Prompts), c.sessions)
			}
			switch {
			case c.comment == "" && len(gh.WritesSoFar()) != 0:
				t.Errorf("wrote %v, want nothing", gh.WritesSoFar())
			case c.comment != "" && (len(gh.Comments) != 1 || gh.Comments[0].Issue != 12 || !strings.Contains(gh.Comments[0].Body, c.comment)):
				t.Errorf("comments %+v, want one on #12 containing %q", gh.Comments, c.comment)
			}
		})
	}
}

func TestASourceReadsItsVariables(t *testing.T) {
	s := sentryJob.Source
	set, err := s.Settings(map[string]string{"SENTRY_CLIENT_SECRET": "x", "SENTRY_PROJECT_REPOS": " hexpm-web=hexpm/hexpm, docs=hexpm/hexdocs ,"})
	if err != nil || set.Secret != "x" || set.Repos["hexpm-web"] != "hexpm/hexpm" || set.Repos["docs"] != "hexpm/hexdocs" || len(set.Repos) != 2 {
		t.Fatalf("%+v %v", set, err)
	}
	for _, bad := range []string{"hexpm-web", "=hexpm/hexpm", "web=hexpm", "web=hexpm/", "web=/hexpm", "web=a/b/c"} {
		if _, err := s.Settings(map[string]string{"SENTRY_PROJECT_REPOS": bad}); err == nil || !strings.Contains(err.Error(), "SENTRY_PROJECT_REPOS") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if got := strings.Join(SourceEnvKeys(), ","); got != "DATADOG_WEBHOOK_TOKEN,DATADOG_SERVICE_REPOS,SENTRY_CLIENT_SECRET,SENTRY_PROJECT_REPOS" {
		t.Errorf("SourceEnvKeys = %s", got)
	}
}
