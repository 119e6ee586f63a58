package handlers

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/internal/github/githubtest"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/work"
	"github.com/pitcrew/pitcrew/work/incidents"
)

// When an alert starts work, decided by each source's Handle alone: no
// HTTP, a struct fake of GitHub, the source's own settings.
func TestWhenAnAlertStartsWork(t *testing.T) {
	phoenix := testenv.SentrySample(t, "event_alert_phoenix.json")
	cases := []struct {
		name, config string
		installed    bool
		source       *work.Source
		repos        map[string]string
		body         []byte
		sessions     int
		issueTitle   string // of the one tracking issue opened; "" for none
	}{
		{name: "Datadog: triggered", installed: true, source: datadogJob.Source, body: testenv.DatadogAlert("1", "c1", "Triggered", testenv.DatadogTags, "boom"), sessions: 1, issueTitle: "Datadog alert: "},
		{name: "Datadog: re-triggered", installed: true, source: datadogJob.Source, body: testenv.DatadogAlert("1", "c1", "Re-Triggered", testenv.DatadogTags, "boom"), sessions: 1, issueTitle: "Datadog alert: "},
		{name: "Datadog: warn, by default", installed: true, source: datadogJob.Source, body: testenv.DatadogAlert("1", "c1", "Warn", testenv.DatadogTags, "slow")},
		{name: "Datadog: warn, when start_on lists it", config: "alerts:\n  start_on: [Warn]\n", installed: true, source: datadogJob.Source, body: testenv.DatadogAlert("1", "c1", "Warn", testenv.DatadogTags, "slow"), sessions: 1, issueTitle: "Datadog alert: "},
		{name: "Datadog: recovered, with no incident", installed: true, source: datadogJob.Source, body: testenv.DatadogAlert("1", "c1", "Recovered", testenv.DatadogTags, "ok")},
		{name: "Datadog: tagged infrastructure", installed: true, source: datadogJob.Source, body: testenv.DatadogAlert("1", "c1", "Triggered", testenv.DatadogTags+",team:infra", "disk")},
		{name: "Datadog: no repository", installed: true, source: datadogJob.Source, body: testenv.DatadogAlert("1", "c1", "Triggered", "service:unknown", "x")},
		{name: "Datadog: a mapped service", installed: true, source: datadogJob.Source, repos: map[string]string{"hexdocs": "hexpm/hexdocs"}, body: testenv.DatadogAlert("1", "c1", "Triggered", "service:hexdocs", "x"), sessions: 1, issueTitle: "Datadog alert: "},
		{name: "Datadog: switched off", config: "alerts:\n  enabled: false\n", installed: true, source: datadogJob.Source, body: testenv.DatadogAlert("1", "c1", "Triggered", testenv.DatadogTags, "boom")},
		{name: "Datadog: not installed", source: datadogJob.Source, body: testenv.DatadogAlert("1", "c1", "Triggered", testenv.DatadogTags, "boom")},
		{name: "Datadog: no issues left today", config: "daily_issue_limit: 0\n", installed: true, source: datadogJob.Source, body: testenv.DatadogAlert("1", "c1", "Triggered", testenv.DatadogTags, "boom")},
		{name: "Sentry: a mapped project", installed: true, source: sentryJob.Source, repos: map[string]string{"hexpm-web": "hexpm/hexpm"}, body: phoenix, sessions: 1, issueTitle: "Sentry issue: FunctionClauseError"},
		{name: "Sentry: an unmapped project", installed: true, source: sentryJob.Source, body: phoenix},
		{name: "Sentry: a pitcrew_repo tag wins", installed: true, source: sentryJob.Source, repos: map[string]string{"hexpm-web": "hexpm/hexpm"},
			body: bytes.Replace(phoenix, []byte(`["environment", "prod"]`), []byte(`["environment", "prod"], ["pitcrew_repo", "hexpm/hexdocs"]`), 1), sessions: 1, issueTitle: "Sentry issue: "},
		{name: "Sentry: a pitcrew_repo tag of another owner is ignored for the project's map", installed: true, source: sentryJob.Source, repos: map[string]string{"hexpm-web": "hexpm/hexpm"},
			body: bytes.Replace(phoenix, []byte(`["environment", "prod"]`), []byte(`["environment", "prod"], ["pitcrew_repo", "victim/private"]`), 1), sessions: 1, issueTitle: "Sentry issue: "},
		{name: "Sentry: a pitcrew_repo tag of another owner, project unmapped", installed: true, source: sentryJob.Source, repos: map[string]string{"docs": "hexpm/hexdocs"},
			body: bytes.Replace(phoenix, []byte(`["environment", "prod"]`), []byte(`["environment", "prod"], ["pitcrew_repo", "victim/private"]`), 1)},
		{name: "Sentry: switched off", config: "sentry:\n  enabled: false\n", installed: true, source: sentryJob.Source, repos: map[string]string{"hexpm-web": "hexpm/hexpm"}, body: phoenix},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gh := &githubtest.Fake{Config: c.config}
			if c.installed {
				gh.Installation = testenv.Installation
			}
			sb := &testenv.Sessions{}
			b := ruleBase(t, gh, sb)
			if err := c.source.Handle(context.Background(), &b, work.SourceSettings{Repos: c.repos}, c.body); err != nil {
				t.Fatal(err)
			}
			if len(sb.Prompts) != c.sessions {
				t.Errorf("%d sessions, want %d", len(sb.Prompts), c.sessions)
			}
			switch {
			case c.issueTitle == "" && len(gh.WritesSoFar()) != 0:
				t.Errorf("wrote %v, want nothing", gh.WritesSoFar())
			case c.issueTitle != "" && (len(gh.Issues) != 1 || !strings.HasPrefix(gh.Issues[0].Title, c.issueTitle) || len(gh.Comments) != 1):
				t.Errorf("issues %+v, comments %d: want one issue titled %q... with its status comment", gh.Issues, len(gh.Comments), c.issueTitle)
			}
		})
	}
}

func TestARepeatedAlertWritesNothingForAWhileThenRestoresItsComment(t *testing.T) {
	gh := &githubtest.Fake{Installation: testenv.Installation}
	b := ruleBase(t, gh, &testenv.Sessions{})
	set := work.SourceSettings{Repos: map[string]string{"hexpm-web": "hexpm/hexpm"}}
	body := testenv.SentrySample(t, "event_alert_phoenix.json")
	alert := func() {
		t.Helper()
		if err := sentryJob.Source.Handle(context.Background(), &b, set, body); err != nil {
			t.Fatal(err)
		}
	}
	alert()
	writes := len(gh.WritesSoFar()) // the issue, the status comment
	alert()
	alert()
	if got := gh.WritesSoFar(); len(got) != writes {
		t.Fatalf("repeats wrote %v", got[writes:])
	}
	gh.Comments = nil // someone deleted the status comment
	later := time.Now().Add(incidents.RewriteAfter + time.Minute)
	b.Now = func() time.Time { return later }
	alert()
	if len(gh.Comments) != 1 || !strings.Contains(gh.Comments[0].Body, "The agent is reading") {
		t.Fatalf("the comment was not restored: %+v", gh.Comments)
	}
}
