package testenv

// Payloads shaped like what GitHub, Sentry and Datadog send, built from the
// real samples under testdata, for the handlers' table tests and the
// server's end-to-end tests alike.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Installation is the installation every built event is sent to.
const Installation = 42

// Path is a file of the module by its path from the module's root, so
// tests of any package read the same samples.
func Path(elem ...string) string {
	_, here, _, _ := runtime.Caller(0)
	return filepath.Join(append([]string{filepath.Dir(here), "..", ".."}, elem...)...)
}

// eventClock stamps events' updated_at.
var eventClock struct {
	sync.Mutex
	t time.Time
}

// nextEventTime is a later time at each call, as GitHub stamps objects.
func nextEventTime() string {
	eventClock.Lock()
	defer eventClock.Unlock()
	if eventClock.t.IsZero() {
		eventClock.t = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	}
	eventClock.t = eventClock.t.Add(time.Second)
	return eventClock.t.Format(time.RFC3339)
}

// Event is an @octokit/webhooks-examples payload (testdata/webhooks) as
// pitcrew would get it: sent to Installation, moved to hexpm/hexpm, then
// changed by change.
func Event(t T, name string, change func(ev map[string]any)) []byte {
	var ev map[string]any
	b, err := os.ReadFile(Path("testdata", "webhooks", name))
	if err == nil {
		err = json.Unmarshal(b, &ev)
	}
	if err != nil {
		t.Fatal(err)
	}
	if inst, ok := ev["installation"].(map[string]any); ok {
		inst["id"] = Installation // keep the real shape where the Event has one
	} else {
		ev["installation"] = map[string]any{"id": Installation, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDI="}
	}
	if repo, ok := ev["repository"].(map[string]any); ok {
		repo["name"], repo["full_name"] = "hexpm", "hexpm/hexpm"
		repo["owner"].(map[string]any)["login"] = "hexpm"
	}
	// Two events GitHub sends never have the same body (their objects'
	// updated_at differ); a body sent again under a new id is a replay.
	for _, k := range []string{"repository", "installation"} {
		if o, ok := ev[k].(map[string]any); ok {
			if _, ok := o["updated_at"]; ok {
				o["updated_at"] = nextEventTime()
			}
		}
	}
	change(ev)
	out, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// LabeledEvent is the issues.labeled Event with the given label, sender,
// issue number and text.
func LabeledEvent(t T, label, sender string, issue int, title, body string) []byte {
	return Event(t, "issues.labeled.json", func(ev map[string]any) {
		ev["label"].(map[string]any)["name"] = label
		is := ev["issue"].(map[string]any)
		is["number"], is["title"], is["body"] = issue, title, body
		s := ev["sender"].(map[string]any)
		s["login"] = sender
		if strings.HasSuffix(sender, "[bot]") {
			s["type"] = "Bot"
		}
	})
}

// DashboardEditEvent is the issues.edited Event of issue, labelled as a
// dashboard, whose body editor (a bot when it ends in [bot]) changed to body.
func DashboardEditEvent(t T, editor string, issue int, body string) []byte {
	return Event(t, "issues.edited.json", func(ev map[string]any) {
		is := ev["issue"].(map[string]any)
		is["number"], is["title"], is["body"] = issue, "Flaky tests dashboard", body
		is["labels"] = []any{map[string]any{"id": 1, "name": "pitcrew:dashboard", "color": "ededed", "default": false}}
		ev["changes"] = map[string]any{"body": map[string]any{"from": "the body before"}}
		s := ev["sender"].(map[string]any)
		s["login"] = editor
		if strings.HasSuffix(editor, "[bot]") {
			s["type"] = "Bot"
		}
	})
}

// PushEvent is the push Event: commit after pushed to the default
// branch, adding and modifying files.
func PushEvent(t T, after string, added, modified []any) []byte {
	return Event(t, "push.json", func(ev map[string]any) {
		ev["ref"], ev["after"] = "refs/heads/master", after
		ev["commits"] = []any{map[string]any{"id": after, "added": added, "modified": modified, "removed": []any{}}}
	})
}

// HeadSHA is the head commit of the events the builders make.
const HeadSHA = "5779607b49aab1200488439f02372c57b4f75444"

// RerunPassedEvent is the workflow_run.completed Event from
// @octokit/webhooks-examples, moved to hexpm/hexpm, as attempt 2 that passed.
func RerunPassedEvent(t T, runID int64, sha string) []byte {
	return WorkflowRunEvent(t, runID, 2, 0, sha)
}

// WorkflowRunEvent is a successful attempt of a workflow run of hexpm/hexpm;
// suite 0 keeps the Event's check suite id.
func WorkflowRunEvent(t T, runID int64, attempt int, suite int64, sha string) []byte {
	return Event(t, "workflow_run.completed.json", func(ev map[string]any) {
		run := ev["workflow_run"].(map[string]any)
		run["id"], run["run_attempt"], run["conclusion"], run["status"], run["head_sha"], run["name"] = runID, attempt, "success", "completed", sha, "CI"
		run["head_repository"] = map[string]any{"full_name": "hexpm/hexpm"}
		if suite != 0 {
			run["check_suite_id"] = suite
		}
	})
}

// RunFailedEvent is WorkflowRunEvent for an attempt that failed.
func RunFailedEvent(t T, runID int64, attempt int, sha string) []byte {
	return Event(t, "workflow_run.completed.json", func(ev map[string]any) {
		run := ev["workflow_run"].(map[string]any)
		run["id"], run["run_attempt"], run["conclusion"], run["status"], run["head_sha"], run["name"] = runID, attempt, "failure", "completed", sha, "CI"
		run["head_repository"] = map[string]any{"full_name": "hexpm/hexpm"}
		run["html_url"] = fmt.Sprintf("https://github.com/hexpm/hexpm/actions/runs/%d", runID)
	})
}

// VerifyRunEvent is a workflow_run event of pitcrew's verification
// workflow: the run of one side (phase before or after) of the
// verification nonce, in action (requested, in_progress or completed).
func VerifyRunEvent(t T, runID int64, nonce, phase, action, conclusion string) []byte {
	return Event(t, "workflow_run.completed.json", func(ev map[string]any) {
		ev["action"] = action
		run := ev["workflow_run"].(map[string]any)
		status := map[string]string{"requested": "queued", "in_progress": "in_progress", "completed": "completed"}[action]
		run["id"], run["run_attempt"], run["status"], run["name"], run["event"] = runID, 1, status, "pitcrew verify", "workflow_dispatch"
		run["conclusion"], run["path"], run["display_title"] = nil, ".github/workflows/pitcrew-verify.yml", "pitcrew verify "+nonce+" "+phase
		if conclusion != "" {
			run["conclusion"] = conclusion
		}
		run["html_url"] = fmt.Sprintf("https://github.com/hexpm/hexpm/actions/runs/%d", runID)
		run["head_repository"] = map[string]any{"full_name": "hexpm/hexpm"}
	})
}

// ExUnitLog is a real ExUnit log from exunit/testdata/logs.
func ExUnitLog(t T, name string) string {
	b, err := os.ReadFile(Path("exunit", "testdata", "logs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// PassedCheckEvent is the check_run.completed Event, moved to
// hexpm/hexpm, as a CircleCI check that passed.
func PassedCheckEvent(t T, id int64, sha, name string) []byte {
	return PassedCheckEventWithOutput(t, id, sha, name, ExUnitLog(t, "pass_seed_2.txt"))
}

// PassedCheckEventWithOutput is PassedCheckEvent whose check run reported
// text as its output: the passing run's log.
func PassedCheckEventWithOutput(t T, id int64, sha, name, text string) []byte {
	return Event(t, "check_run.completed.json", func(ev map[string]any) {
		c := ev["check_run"].(map[string]any)
		c["id"], c["conclusion"], c["head_sha"], c["name"] = id, "success", sha, name
		c["app"].(map[string]any)["slug"] = "circleci-checks"
		c["output"] = map[string]any{"title": "Tests passed", "summary": "Tests passed", "text": text, "annotations_count": 0, "annotations_url": "https://api.github.com/repos/hexpm/hexpm/check-runs/1/annotations"}
	})
}

// ForkCheckEvent is a CircleCI check that passed on a fork's pull request:
// GitHub names no pull request of the repository and, for a fork, no head
// branch; branch, when given, is set on the suite instead.
func ForkCheckEvent(t T, id int64, sha, name, branch string) []byte {
	return Event(t, "check_run.completed.json", func(ev map[string]any) {
		c := ev["check_run"].(map[string]any)
		c["id"], c["conclusion"], c["head_sha"], c["name"] = id, "success", sha, name
		c["app"].(map[string]any)["slug"] = "circleci-checks"
		c["output"] = map[string]any{"title": "Tests passed", "summary": "Tests passed", "text": ExUnitLog(t, "pass_seed_2.txt"), "annotations_count": 0, "annotations_url": "https://api.github.com/repos/hexpm/hexpm/check-runs/1/annotations"}
		c["pull_requests"] = []any{}
		suite := c["check_suite"].(map[string]any)
		suite["pull_requests"] = []any{}
		suite["head_branch"] = nil
		if branch != "" {
			suite["head_branch"] = branch
		}
	})
}

// MergeSHA is the merge commit of MergedPullEvent's pull requests.
const MergeSHA = "c4295bd74fb0f4fda03689c3df3f2803b658fd85"

// MergedPullEvent is the pull_request.closed Event from
// @octokit/webhooks-examples, moved to hexpm/hexpm and turned merged.
func MergedPullEvent(t T, number int, sha string) []byte {
	return Event(t, "pull_request.closed.json", func(ev map[string]any) {
		ev["number"] = number
		pr := ev["pull_request"].(map[string]any)
		pr["number"], pr["merged"], pr["merged_at"], pr["merge_commit_sha"] = number, true, "2026-12-01T10:00:00Z", sha
		pr["merged_by"] = map[string]any{"login": "alice", "id": 1, "type": "User"}
	})
}

// SentrySample is a Sentry webhook body from testdata/sentry.
func SentrySample(t T, name string) []byte {
	b, err := os.ReadFile(Path("testdata", "sentry", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sentryEvent opens the event object of a Sentry sample.
var sentryEvent = regexp.MustCompile(`"event":\s*\{`)

// SentryReceived is a Sentry sample as Sentry sends it at received: its
// event's received time, which the samples leave out, set.
func SentryReceived(t T, name string, received time.Time) []byte {
	body := SentrySample(t, name)
	at := sentryEvent.FindIndex(body)
	if at == nil {
		t.Fatalf("%s holds no event", name)
	}
	stamp := fmt.Sprintf(`"received": %.3f, `, float64(received.UnixMilli())/1000)
	return slices.Concat(body[:at[1]], []byte(stamp), body[at[1]:])
}

// HMACHex is the hex HMAC-SHA256 of body with secret: GitHub's signature
// after its "sha256=", Sentry's whole.
func HMACHex(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// DatadogAlert fills the template of docs/alert-sources.md the way Datadog does.
func DatadogAlert(alertID, cycle, transition, tags, message string) []byte {
	b, _ := json.Marshal(map[string]string{
		"alert_id": alertID, "alert_cycle_key": cycle, "transition": transition,
		"title": "[" + transition + " on {service:hexpm,env:prod}] 5xx rate above 2% on hexpm", "message": message,
		"tags": tags, "link": "https://app.datadoghq.com/monitors/" + alertID, "date": "1764680000000", "priority": "P2",
		"event_type": "query_alert_monitor", "scope": "service:hexpm,env:prod", "org_id": "11287",
	})
	return b
}

// DatadogTags are the tags of a Datadog alert that names hexpm/hexpm.
const DatadogTags = "service:hexpm,env:prod,pitcrew_repo:hexpm/hexpm"

var deliverySeq struct {
	sync.Mutex
	n int
}

// DeliveryID is a new delivery id at each call, shaped like GitHub's.
func DeliveryID() string {
	deliverySeq.Lock()
	defer deliverySeq.Unlock()
	deliverySeq.n++
	return fmt.Sprintf("72d3162e-cc78-11e3-81ab-%012d", deliverySeq.n)
}

// PullSyncEvent is the pull_request.synchronize example: a push to pull
// request number of hexpm/hexpm, now at head.
func PullSyncEvent(t T, number int, head string) []byte {
	return Event(t, "pull_request.synchronize.json", func(ev map[string]any) {
		ev["number"] = number
		pr := ev["pull_request"].(map[string]any)
		pr["number"] = number
		pr["head"].(map[string]any)["sha"] = head
	})
}

// CheckSuiteEvent is the check_suite.completed example: app's suite
// concluded on head, a commit of pull requests prs. Its id is that of the
// first suite GitHub.SetHeadSuite puts on a head.
func CheckSuiteEvent(t T, head, app, conclusion string, prs ...int) []byte {
	return Event(t, "check_suite.completed.json", func(ev map[string]any) {
		s := ev["check_suite"].(map[string]any)
		s["head_sha"], s["conclusion"], s["id"] = head, conclusion, 700
		s["app"].(map[string]any)["slug"] = app
		var list []any
		for _, n := range prs {
			list = append(list, map[string]any{"number": n, "id": 1000 + n, "url": "https://api.github.com/repos/hexpm/hexpm/pulls/" + strconv.Itoa(n),
				"head": map[string]any{"sha": head, "ref": "pitcrew/fix"}, "base": map[string]any{"sha": HeadSHA, "ref": "main"}})
		}
		s["pull_requests"] = list
	})
}

// ReviewEvent is the pull_request_review.submitted example: reviewer left
// a review in state (approved, changes_requested, commented) on number.
func ReviewEvent(t T, number int, reviewer, state string) []byte {
	return ReviewWithBody(t, number, 0, reviewer, state, "")
}

// ReviewWithBody is ReviewEvent with the review's id (0 keeps the
// example's) and text.
func ReviewWithBody(t T, number int, id int64, reviewer, state, body string) []byte {
	return Event(t, "pull_request_review.submitted.json", func(ev map[string]any) {
		r := ev["review"].(map[string]any)
		r["state"], r["body"] = state, body
		if id != 0 {
			r["id"] = id
		}
		r["user"].(map[string]any)["login"] = reviewer
		ev["pull_request"].(map[string]any)["number"] = number
	})
}

// CommentEvent is the issue_comment.created Event: sender's comment id
// with body on issue (a pull request when onPull).
func CommentEvent(t T, sender string, issue int, id int64, body string, onPull bool) []byte {
	return Event(t, "issue_comment.created.json", func(ev map[string]any) {
		is := ev["issue"].(map[string]any)
		is["number"] = issue
		if onPull {
			is["pull_request"] = map[string]any{"url": fmt.Sprintf("https://api.github.com/repos/hexpm/hexpm/pulls/%d", issue)}
		}
		c := ev["comment"].(map[string]any)
		c["id"], c["body"], c["updated_at"] = id, body, nextEventTime()
		for _, u := range []map[string]any{c["user"].(map[string]any), ev["sender"].(map[string]any)} {
			u["login"] = sender
			if strings.HasSuffix(sender, "[bot]") {
				u["type"] = "Bot"
			}
		}
	})
}
