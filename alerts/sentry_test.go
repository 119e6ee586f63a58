package alerts

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

func TestParseSentry(t *testing.T) {
	for _, c := range []struct {
		file                           string
		issue, project, title, repoTag string
		frames                         []SentryFrame // of the last exception
	}{
		{file: "event_alert_phoenix.json", issue: "4561237890", project: "hexpm-web",
			title: "FunctionClauseError: no function clause matching in Hexpm.Repository.Releases.validate_metadata/2",
			frames: []SentryFrame{
				{File: "lib/hexpm_web/controllers/api/release_controller.ex", Function: "HexpmWeb.API.ReleaseController.publish/2", Module: "HexpmWeb.API.ReleaseController", Line: 58},
				{File: "lib/hexpm/repository/releases.ex", Function: "Hexpm.Repository.Releases.publish/6", Module: "Hexpm.Repository.Releases", Line: 71},
				{File: "lib/hexpm/repository/releases.ex", Function: "Hexpm.Repository.Releases.validate_metadata/2", Module: "Hexpm.Repository.Releases", Line: 402},
			}},
		{file: "event_alert_docs.json", issue: "1170820242", project: "front-end", title: "ReferenceError: heck is not defined",
			frames: []SentryFrame{{File: "/static/app.js", Function: "render", Line: 1}}},
		{file: "event_alert_tagged.json", issue: "99001", title: "Ecto.NoResultsError: expected at least one result but got none in query", repoTag: "hexpm/hexdocs",
			frames: []SentryFrame{{File: "lib/hexdocs/plug.ex", Function: "Hexdocs.Plug.serve/2", Line: 88}}},
	} {
		a, err := ParseSentry(testenv.SentrySample(t, c.file))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if a.IssueID != c.issue || a.Project != c.project || a.Title != c.title || a.Tag("pitcrew_repo") != c.repoTag {
			t.Errorf("%s: issue %q project %q title %q repo tag %q", c.file, a.IssueID, a.Project, a.Title, a.Tag("pitcrew_repo"))
		}
		if a.Fired.IsZero() {
			t.Errorf("%s: no time", c.file)
		}
		got := a.Exceptions[len(a.Exceptions)-1].Frames
		if len(got) != len(c.frames) {
			t.Fatalf("%s: frames %+v, want the in-app ones %+v", c.file, got, c.frames)
		}
		for i := range got {
			if got[i] != c.frames[i] {
				t.Errorf("%s: frame %d = %+v, want %+v", c.file, i, got[i], c.frames[i])
			}
		}
	}
}

func TestParseSentryRefusesOrIgnores(t *testing.T) {
	for _, c := range []struct {
		name, body string
		ignored    bool
	}{
		{"an issue resolved", string(testenv.SentrySample(t, "issue_resolved.json")), true},
		{"a metric alert", string(testenv.SentrySample(t, "metric_alert_critical.json")), true},
		{"no event", `{"action":"triggered","data":{}}`, false},
		{"no issue id", `{"action":"triggered","data":{"event":{"title":"x"}}}`, false},
		{"an issue id that is not one", `{"action":"triggered","data":{"event":{"issue_id":"../../x"}}}`, false},
		{"an array", `[{"action":"triggered"}]`, false},
		{"not JSON", `{"action":`, false},
		{"empty", ``, false},
	} {
		_, err := ParseSentry([]byte(c.body))
		if err == nil || errors.Is(err, ErrNotTriggered) != c.ignored {
			t.Errorf("%s: err = %v, ignored should be %v", c.name, err, c.ignored)
		}
	}
}

func TestSentryKeepsTheInnermostFramesAndCapsText(t *testing.T) {
	var frames strings.Builder
	for i := 0; i < 200; i++ {
		if i > 0 {
			frames.WriteString(",")
		}
		// Every third frame is a dependency's; the last is the innermost.
		fmt.Fprintf(&frames, `{"filename":"lib/a.ex","function":"A.f%d/1","lineno":%d,"in_app":%v}`, i, i+1, i%3 != 0)
	}
	var exceptions []string
	for i := 0; i < 8; i++ {
		exceptions = append(exceptions, fmt.Sprintf(`{"type":"E%d","stacktrace":{"frames":[%s]}}`, i, frames.String()))
	}
	body := `{"action":"triggered","data":{"event":{"issue_id":"1","title":"` + strings.Repeat("x\u202e", 2000) + `","exception":{"values":[` + strings.Join(exceptions, ",") + `]}}}}`
	a, err := ParseSentry([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Exceptions) != maxSentryExceptions || a.Exceptions[0].Type != "E3" || a.Exceptions[len(a.Exceptions)-1].Type != "E7" {
		t.Errorf("kept %d exceptions from %s to %s, want the last %d", len(a.Exceptions), a.Exceptions[0].Type, a.Exceptions[len(a.Exceptions)-1].Type, maxSentryExceptions)
	}
	got := a.Exceptions[0].Frames
	if len(got) != maxSentryFrames || got[len(got)-1].Function != "A.f199/1" || got[len(got)-1].Line != 200 {
		t.Fatalf("kept %d frames ending %+v, want the innermost %d", len(got), got[len(got)-1], maxSentryFrames)
	}
	for _, f := range got {
		var i int
		fmt.Sscanf(f.Function, "A.f%d/1", &i)
		if i%3 == 0 {
			t.Errorf("a frame outside the app was kept: %+v", f)
		}
	}
	if strings.ContainsRune(a.Title, '\u202e') || len(a.Title) > 300 {
		t.Errorf("title not cleaned and capped: %d bytes", len(a.Title))
	}
}

func FuzzParseSentry(f *testing.F) {
	for _, name := range []string{"event_alert_phoenix.json", "event_alert_docs.json", "event_alert_tagged.json", "issue_resolved.json"} {
		f.Add(testenv.SentrySample(f, name))
	}
	f.Add([]byte(`{"action":"triggered","data":{"event":{"issue_id":1e400,"tags":[[1,2],{"key":""}],"exception":{"values":null}}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		a, err := ParseSentry(body)
		if err != nil {
			return
		}
		if !sentryIssueID.MatchString(a.IssueID) || len(a.Exceptions) > maxSentryExceptions || len(a.Tags) > maxSentryTags {
			t.Fatalf("unchecked alert %+v", a)
		}
		for _, s := range []string{a.Title, a.Culprit, a.Rule, a.WebURL, a.Project} {
			if !utf8.ValidString(s) || strings.ContainsAny(s, "\x00\u202e\u200b") {
				t.Fatalf("uncleaned text %q", s)
			}
		}
		for _, x := range a.Exceptions {
			if len(x.Frames) > maxSentryFrames {
				t.Fatalf("%d frames", len(x.Frames))
			}
		}
		for _, at := range []time.Time{a.Received, a.Happened} {
			if !at.IsZero() && (at.Year() < 2000 || at.Year() >= 2200) {
				t.Fatalf("implausible time %v", at)
			}
		}
		_ = a.Fresh(string(body[:min(len(body), 12)]), time.Now())
	})
}
