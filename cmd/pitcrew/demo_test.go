package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pitcrew demo plays every story through the real pipeline against the
// built-in fakes, and shows each one's outcome as GitHub would, in under
// a minute: a promise to whoever tries it first.
var defaultDemoSource = demoSource

func TestDemoPlaysEveryStoryInUnderAMinute(t *testing.T) {
	start := time.Now()
	var out, errs bytes.Buffer
	code, serve := dispatch([]string{"demo"}, strings.NewReader(""), &out, &errs)
	took := time.Since(start)
	if code != 0 || serve {
		t.Fatalf("pitcrew demo: exit %d (serve %v)\nstdout:\n%s\nstderr:\n%s", code, serve, out.String(), errs.String())
	}
	if took > time.Minute {
		t.Errorf("pitcrew demo took %v, promised under a minute", took)
	}
	t.Logf("pitcrew demo took %v", took.Round(10*time.Millisecond))
	text := out.String()
	// Each story's heading, then a line only that story's outcome writes.
	stories := []struct{ heading, outcome string }{
		{"## 1. A `flaky` label on an issue", "`test/hexpm/web/controllers/package_controller_test.exs:42`: ✅ fixed in https://github.com/hexpm/hexpm/pull/1234"},
		{"## 2. A CI re-run that passed", "(neutral): 2 flaky tests, 2 new fix runs"},
		{"## 3. An in-job retry", "(neutral): 1 flaky test, 0 new fix runs"},
		{"## 4. A merged migration (slow-query report)", "## 1. Package list sorted by downloads (412 ms)"},
		{"## 5. A Datadog alert", "Datadog alert: [Triggered on {service:hexpm,env:prod}] 5xx rate above 2% on hexpm"},
		{"## 6. A Sentry issue alert", "Sentry issue: FunctionClauseError: no function clause matching in Hexpm.Repository.Releases.validate_metadata/2"},
		{"## 7. `/pitcrew open-pr` on the migration's pull request", "[PR #1400](https://github.com/hexpm/hexpm/pull/1400)"},
		{"## 8. A dashboard tick", ": Flaky tests dashboard\n"},
	}
	for i, s := range stories {
		at := strings.Index(text, "\n"+s.heading+"\n")
		if at < 0 {
			t.Errorf("no heading %q:\n%s", s.heading, text)
			continue
		}
		story := text[at:]
		if i+1 < len(stories) {
			if end := strings.Index(story, "\n"+stories[i+1].heading+"\n"); end >= 0 {
				story = story[:end]
			}
		}
		if !strings.Contains(story, s.outcome) {
			t.Errorf("story %q lacks %q:\n%s", s.heading, s.outcome, story)
		}
	}
	if !strings.Contains(text, "Fixed in https://github.com/hexpm/hexpm/pull/77") || !strings.Contains(text, "Fixed in https://github.com/hexpm/hexpm/pull/81") {
		t.Errorf("an alert's fix is missing:\n%s", text)
	}
}

// A binary run outside pitcrew's source tree has no samples for its fakes:
// it says so and exits 1, before starting anything.
func TestDemoOutsideTheSourceTreeSaysSo(t *testing.T) {
	dir := t.TempDir()
	demoSource = func(elem ...string) string { return filepath.Join(append([]string{dir}, elem...)...) }
	t.Cleanup(func() { demoSource = defaultDemoSource })
	var out, errs bytes.Buffer
	code, _ := dispatch([]string{"demo"}, strings.NewReader(""), &out, &errs)
	if code != 1 || out.Len() != 0 || !strings.Contains(errs.String(), "is not there.\nRun it from a checkout of pitcrew: go run ./cmd/pitcrew demo") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out.String(), errs.String())
	}
}
