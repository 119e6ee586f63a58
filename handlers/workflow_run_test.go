package handlers

import (
	"os"
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew/internal/github"
	"github.com/pitcrew/pitcrew/internal/testenv"
	"github.com/pitcrew/pitcrew/publish"
)

func TestParseRerunPassed(t *testing.T) {
	real, _ := os.ReadFile(testenv.Path("testdata", "webhooks", "workflow_run.completed.json"))
	if _, ok, err := ParseRerunPassed(real); ok || err != nil {
		t.Fatalf("the first attempt, no installation: ok=%v err=%v", ok, err)
	}
	ev, ok, err := ParseRerunPassed(testenv.RerunPassedEvent(t, 7, testenv.HeadSHA))
	if err != nil || !ok || ev.RunID != 7 || ev.Attempt != 2 || ev.HeadSHA != testenv.HeadSHA || ev.Repo != (github.Repo{Owner: "hexpm", Name: "hexpm"}) {
		t.Fatalf("%+v %v %v", ev, ok, err)
	}
	if _, ok, _ := ParseRerunPassed(testenv.RerunPassedEvent(t, 7, "not-a-sha")); ok {
		t.Fatal("accepted a bad head_sha")
	}
	fork := strings.Replace(string(testenv.RerunPassedEvent(t, 7, testenv.HeadSHA)), `"head_repository":{"full_name":"hexpm/hexpm"}`, `"head_repository":{"full_name":"mallory/hexpm"}`, 1)
	if _, ok, _ := ParseRerunPassed([]byte(fork)); ok {
		t.Fatal("accepted a rerun of a fork's pull request")
	}
}

func FuzzParseRerunPassed(f *testing.F) {
	f.Add(testenv.RerunPassedEvent(f, 7, testenv.HeadSHA))
	f.Fuzz(func(t *testing.T, payload []byte) {
		ev, ok, _ := ParseRerunPassed(payload)
		if ok && (ev.Attempt < 1 || ev.RunID <= 0 || !github.ValidSHA(ev.HeadSHA) || ev.InstallationID <= 0) {
			t.Fatalf("accepted %+v", ev)
		}
	})
}

func FuzzParsePassedCheck(f *testing.F) {
	f.Add(testenv.PassedCheckEvent(f, 9001, testenv.HeadSHA, "ci/test"))
	f.Add([]byte(`{"action":"completed","installation":{"id":1},"repository":{"id":1,"full_name":"hexpm/hexpm"},"check_run":{"id":1,"name":"ci","conclusion":"success","head_sha":"` + testenv.HeadSHA + `","app":{"slug":"circleci-checks"}}}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		ev, ok, _ := ParsePassedCheck(payload, "pitcrew")
		if ok && (ev.ID <= 0 && ev.Name == "" || !github.ValidSHA(ev.HeadSHA) || ev.InstallationID <= 0 || ev.Name == publish.CheckRunName) {
			t.Fatalf("accepted %+v", ev)
		}
	})
}

// A check run event without its suite is read, not a panic.
func TestAPassedCheckWithoutItsSuite(t *testing.T) {
	payload := []byte(`{"action":"completed","installation":{"id":1},"repository":{"id":1,"full_name":"hexpm/hexpm"},"check_run":{"id":1,"name":"ci","conclusion":"success","head_sha":"` + testenv.HeadSHA + `","app":{"slug":"circleci-checks"}}}`)
	if _, _, err := ParsePassedCheck(payload, "pitcrew"); err != nil {
		t.Fatal(err)
	}
}
