package handlers

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/testenv"
)

var hexpm = github.Repo{Owner: "hexpm", Name: "hexpm"}

func TestParsePullChange(t *testing.T) {
	head := "2222222222222222222222222222222222222222"
	if ev, ok, err := ParsePullChange(testenv.PullSyncEvent(t, 77, head)); err != nil || !ok || ev != (PullChange{InstallationID: testenv.Installation, Repo: hexpm, Number: 77}) {
		t.Fatalf("synchronize: %+v %v %v", ev, ok, err)
	}
	if _, ok, err := ParsePullChange(testenv.MergedPullEvent(t, 78, testenv.MergeSHA)); !ok || err != nil {
		t.Fatalf("closed: %v %v", ok, err)
	}
	opened := strings.Replace(string(testenv.PullSyncEvent(t, 79, head)), `"action":"synchronize"`, `"action":"labeled"`, 1)
	if _, ok, _ := ParsePullChange([]byte(opened)); ok {
		t.Fatal("a label is not a change of the code")
	}
	real, _ := os.ReadFile(testenv.Path("testdata", "webhooks", "pull_request.synchronize.json"))
	if ev, ok, err := ParsePullChange(real); err != nil || !ok || ev.Number != 2 || ev.InstallationID != 1 {
		t.Fatalf("the example as GitHub sends it: %+v %v %v", ev, ok, err)
	}
}

func TestParseFinishedSuite(t *testing.T) {
	head := "1111111111111111111111111111111111111111"
	ev, ok, err := ParseFinishedSuite(testenv.CheckSuiteEvent(t, head, "github-actions", "failure", 77, 78))
	want := FinishedSuite{InstallationID: testenv.Installation, Repo: hexpm, HeadSHA: head, App: "github-actions", Suite: "github-actions/700", Conclusion: "failure", Pulls: []int{77, 78}}
	if err != nil || !ok || !reflect.DeepEqual(ev, want) {
		t.Fatalf("%+v %v %v", ev, ok, err)
	}
	if _, ok, _ := ParseFinishedSuite(testenv.CheckSuiteEvent(t, head, "github-actions", "success")); ok {
		t.Fatal("a suite of no pull request")
	}
	if _, ok, _ := ParseFinishedSuite(testenv.CheckSuiteEvent(t, "not-a-sha", "github-actions", "success", 77)); ok {
		t.Fatal("a bad head")
	}
	empty := strings.Replace(string(testenv.CheckSuiteEvent(t, head, "dependabot", "", 77)), `"latest_check_runs_count":1`, `"latest_check_runs_count":0`, 1)
	if _, ok, _ := ParseFinishedSuite([]byte(empty)); ok {
		t.Fatal("a suite GitHub made for an app that ran nothing")
	}
	real, _ := os.ReadFile(testenv.Path("testdata", "webhooks", "check_suite.completed.json"))
	if _, ok, err := ParseFinishedSuite(real); ok || err != nil {
		t.Fatalf("the example has no installation: %v %v", ok, err)
	}
}

func TestParseReview(t *testing.T) {
	ev, ok, err := ParseReview(testenv.ReviewEvent(t, 77, "alice", "APPROVED"))
	if err != nil || !ok || ev != (Review{InstallationID: testenv.Installation, Repo: hexpm, Number: 77, ID: 237895671, Reviewer: "alice", State: "approved", At: time.Date(2019, 5, 15, 15, 20, 38, 0, time.UTC)}) {
		t.Fatalf("%+v %v %v", ev, ok, err)
	}
	bot := testenv.Event(t, "pull_request_review.submitted.json", func(ev map[string]any) {
		r := ev["review"].(map[string]any)
		r["state"], r["user"].(map[string]any)["login"], r["user"].(map[string]any)["type"] = "approved", "renovate[bot]", "Bot"
	})
	if _, ok, _ := ParseReview(bot); ok {
		t.Fatal("a bot's review")
	}
	passerBy := testenv.Event(t, "pull_request_review.submitted.json", func(ev map[string]any) {
		r := ev["review"].(map[string]any)
		r["state"], r["author_association"] = "approved", "NONE"
	})
	if _, ok, _ := ParseReview(passerBy); ok {
		t.Fatal("the approval of someone with no say in the repository")
	}
	dismissed := strings.Replace(string(testenv.ReviewEvent(t, 77, "alice", "approved")), `"action":"submitted"`, `"action":"dismissed"`, 1)
	if ev, ok, _ := ParseReview([]byte(dismissed)); !ok || ev.State != "dismissed" {
		t.Fatalf("dismissed: %+v", ev)
	}
}

func FuzzParsePullEvents(f *testing.F) {
	f.Add(testenv.PullSyncEvent(f, 77, "2222222222222222222222222222222222222222"))
	f.Add(testenv.CheckSuiteEvent(f, "1111111111111111111111111111111111111111", "github-actions", "success", 77))
	f.Add(testenv.ReviewEvent(f, 77, "alice", "approved"))
	f.Fuzz(func(t *testing.T, payload []byte) {
		if ev, ok, _ := ParsePullChange(payload); ok && (ev.Number <= 0 || ev.InstallationID <= 0 || ev.Repo.Name == "") {
			t.Fatalf("pull change %+v", ev)
		}
		if ev, ok, _ := ParseFinishedSuite(payload); ok && (len(ev.Pulls) == 0 || len(ev.Pulls) > 10 || !github.ValidSHA(ev.HeadSHA) || ev.App == "") {
			t.Fatalf("suite %+v", ev)
		}
		if ev, ok, _ := ParseReview(payload); ok && (ev.Reviewer == "" || ev.Number <= 0 || ev.InstallationID <= 0) {
			t.Fatalf("review %+v", ev)
		}
	})
}
