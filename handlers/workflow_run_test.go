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

// A run of pitcrew's verification workflow is read for its verification,
// and never as a re-run that passed: its failures are measured.
func TestParseVerifyRun(t *testing.T) {
	const nonce = "0123456789abcdef0123456789abcdef"
	ev, ok, err := ParseVerifyRun(testenv.VerifyRunEvent(t, 77, nonce, "before", "completed", "success"))
	if err != nil || !ok || ev.News.Nonce != nonce || ev.News.Phase != "before" || ev.News.Run.ID != 77 || ev.News.Run.Status != "completed" || ev.News.Run.Conclusion != "success" || ev.InstallationID <= 0 {
		t.Fatalf("%+v %v %v", ev, ok, err)
	}
	if _, ok, _ := ParseRerunPassed(testenv.VerifyRunEvent(t, 77, nonce, "before", "completed", "success")); ok {
		t.Fatal("a verification's run read as a re-run that passed")
	}
	for name, payload := range map[string]string{
		"another workflow":               strings.Replace(string(testenv.VerifyRunEvent(t, 77, nonce, "after", "completed", "success")), "pitcrew-verify.yml", "ci.yml", 1),
		"a title naming no verification": strings.Replace(string(testenv.VerifyRunEvent(t, 77, nonce, "after", "completed", "success")), nonce, "ZZZ", 1),
		"a copy on another branch":       strings.Replace(string(testenv.VerifyRunEvent(t, 77, nonce, "after", "completed", "success")), `"head_branch":"main"`, `"head_branch":"mallory-patch"`, 1),
		"started by a push":              strings.Replace(string(testenv.VerifyRunEvent(t, 77, nonce, "after", "completed", "success")), `"event":"workflow_dispatch"`, `"event":"push"`, 1),
		"the real sample":                "",
	} {
		if payload == "" {
			b, _ := os.ReadFile(testenv.Path("testdata", "webhooks", "workflow_run.completed.json"))
			payload = string(b)
		}
		if _, ok, err := ParseVerifyRun([]byte(payload)); ok || err != nil {
			t.Errorf("%s: ok=%v err=%v", name, ok, err)
		}
	}
}

func FuzzParseVerifyRun(f *testing.F) {
	f.Add(testenv.VerifyRunEvent(f, 77, "0123456789abcdef0123456789abcdef", "after", "completed", "success"))
	f.Fuzz(func(t *testing.T, payload []byte) {
		ev, ok, _ := ParseVerifyRun(payload)
		if ok && (ev.News.Run.ID <= 0 || ev.InstallationID <= 0 || len(ev.News.Nonce) != 32 || ev.News.Phase != "before" && ev.News.Phase != "after") {
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

func TestParseRunFailed(t *testing.T) {
	ev, _, ok, err := ParseRunFailed(testenv.RunFailedEvent(t, 201, 1, testenv.HeadSHA))
	if err != nil || !ok || ev.RunID != 201 || ev.Attempt != 1 || ev.HeadSHA != testenv.HeadSHA || ev.InstallationID <= 0 {
		t.Fatalf("%+v %v %v", ev, ok, err)
	}
	for name, payload := range map[string][]byte{
		"a run that passed":  testenv.RerunPassedEvent(t, 7, testenv.HeadSHA),
		"a verification run": testenv.VerifyRunEvent(t, 77, "0123456789abcdef0123456789abcdef", "before", "completed", "failure"),
		"a fork's commit":    []byte(strings.Replace(string(testenv.RunFailedEvent(t, 201, 1, testenv.HeadSHA)), `"head_repository":{"full_name":"hexpm/hexpm"}`, `"head_repository":{"full_name":"mallory/hexpm"}`, 1)),
		"a bad head_sha":     testenv.RunFailedEvent(t, 201, 1, "not-a-sha"),
	} {
		if _, _, ok, _ := ParseRunFailed(payload); ok {
			t.Errorf("%s read as a failed run to look at", name)
		}
	}
}

func FuzzParseRunFailed(f *testing.F) {
	f.Add(testenv.RunFailedEvent(f, 201, 1, testenv.HeadSHA))
	f.Fuzz(func(t *testing.T, payload []byte) {
		ev, _, ok, _ := ParseRunFailed(payload)
		if ok && (ev.Attempt < 1 || ev.RunID <= 0 || !github.ValidSHA(ev.HeadSHA) || ev.InstallationID <= 0) {
			t.Fatalf("accepted %+v", ev)
		}
	})
}
