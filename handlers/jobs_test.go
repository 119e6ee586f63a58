package handlers

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pitcrew/pitcrew/hook"
	"github.com/pitcrew/pitcrew/internal/testenv"
)

// oldIgnored is Ignored as it was when it decoded the whole body (dc11997),
// kept as the oracle: the intake's reading must decide exactly as the
// handlers' own parsers, which the worker still runs, do.
func oldIgnored(event string, body []byte) bool {
	switch event {
	case "issue_comment":
		_, _, act, err := commentCommand(body)
		return err == nil && !act
	case "issues":
		var ev struct {
			Action string `json:"action"`
		}
		if json.Unmarshal(body, &ev) != nil {
			return false
		}
		switch ev.Action {
		case "labeled":
			return false
		case "edited":
			_, ok, err := ParseDashboardEdit(body)
			return err == nil && !ok
		}
		return true
	}
	return false
}

// withMembers is the object body with members (JSON text, comma-separated)
// written first, or last when last.
func withMembers(t testing.TB, body []byte, members string, last bool) []byte {
	t.Helper()
	s := strings.TrimSpace(string(body))
	if !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
		t.Fatalf("not an object: %.40q", s)
	}
	if last {
		return []byte(s[:len(s)-1] + "," + members + "}")
	}
	return []byte("{" + members + "," + s[1:])
}

// ignoredCorpus is every sample payload, as built for the tests, and each
// with hand-made changes around what the decision reads.
func ignoredCorpus(t testing.TB) [][]byte {
	files, err := filepath.Glob(testenv.Path("testdata", "webhooks", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatal("no webhook samples", err)
	}
	var bodies [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, b, testenv.Event(t, filepath.Base(f), func(map[string]any) {}))
	}
	command := testenv.CommentEvent(t, "alice", 12, 901, "/pitcrew retry", true)
	dashboard := testenv.DashboardEditEvent(t, "alice", 500, "- [x] `a` <!-- pitcrew:tick:0123456789ab -->")
	labeled := testenv.LabeledEvent(t, "flaky", "alice", 6, "test/a_test.exs:1", "")
	bodies = append(bodies, command, dashboard, labeled,
		testenv.CommentEvent(t, "alice", 12, 2, "shall we /pitcrew retry?", false),
		testenv.CommentEvent(t, "pitcrew[bot]", 12, 3, "/pitcrew retry", false),
		testenv.CommentEvent(t, "alice", 12, 4, "```\n/pitcrew retry\n```\n/pitcrew help\r\n", false),
		testenv.CommentEvent(t, "alice", 0, 5, "/pitcrew retry", false),
		testenv.CommentEvent(t, "alice", 12, 0, "/pitcrew retry", false),
		testenv.CommentEvent(t, "élodie", 12, 6, "/pitcrew profile \u00e9\u2028", true),
		testenv.DashboardEditEvent(t, "pitcrew[bot]", 500, "- [ ] a"),
		testenv.DashboardEditEvent(t, "alice", 0, "- [x] a"),
		testenv.LabeledEvent(t, "bug", "dependabot[bot]", 9, "x", "y"),
		testenv.PushEvent(t, testenv.HeadSHA, []any{"a.ex"}, nil),
		testenv.WorkflowRunEvent(t, 30433642, 1, 0, testenv.HeadSHA),
		testenv.PassedCheckEvent(t, 4, testenv.HeadSHA, "test"),
		testenv.MergedPullEvent(t, 7, testenv.MergeSHA),
		testenv.PullSyncEvent(t, 7, testenv.HeadSHA),
		testenv.CheckSuiteEvent(t, testenv.HeadSHA, "circleci-checks", "success", 7),
		testenv.ReviewEvent(t, 7, "alice", "commented"),
	)
	replace := func(b []byte, old, new string) []byte {
		if !strings.Contains(string(b), old) {
			t.Fatalf("no %q in the sample", old)
		}
		return []byte(strings.ReplaceAll(string(b), old, new))
	}
	for _, b := range [][]byte{command, dashboard, labeled} {
		for _, action := range []string{`"created"`, `"edited"`, `"labeled"`, `"opened"`, `null`, `1`, `true`, `{}`, `[]`, `"cre\u0061ted"`, `"edit\u0065d"`, `"l\u0061beled"`, `"\ud800"`} {
			for _, last := range []bool{false, true} {
				bodies = append(bodies, withMembers(t, b, `"action":`+action, last), withMembers(t, b, `"ACTION":`+action, last))
			}
		}
		for _, members := range []string{
			`"\u0061ction":"opened"`, `"Action":"opened"`, `"actioN":null`, `"action ":"opened"`,
			`"sender":1`, `"ſender":{"login":"pitcrew[bot]","type":"Bot"}`, `"sender":null`, `"sender":{"login":"\u0061lice[bot]"}`,
			`"sender":{"created_at":"yesterday"}`, `"sender":{"created_at":1700000000}`, `"sender":{"id":1.5}`, `"sender":{"id":1e2}`,
			`"sender":{"id":99999999999999999999}`, `"sender":{"permissions":{"admin":"yes"}}`, `"sender":{"login":"\xff\xfe"}`,
			`"installation":null`, `"installation":{"id":0}`, `"installation":{"id":-1}`, `"installation":{"ID":7}`, `"installation":{"id":"42"}`,
			`"installation":{"id":42},"installation":{"node_id":"x"}`, `"installation":{"id":42},"installation":null`,
			`"issue":null`, `"issue":{}`, `"issue":{"number":3}`, `"issue":{"pull_request":{}}`, `"issue":{"pull_request":null}`,
			`"issue":{"labels":null}`, `"issue":{"labels":[]}`, `"issue":{"labels":[null]}`, `"issue":{"labels":[{"color":"x"}]}`,
			`"issue":{"labels":[{"name":"pitcrew:dashboard"}]}`, `"issue":{"labels":[{"name":"pitcrew:dashboard"},{"name":"b"}]},"issue":{"labels":[{"color":"x"}]}`,
			`"issue":{"labels":[{"name":"a"},{"name":"pitcrew:dashboard"}]},"issue":{"labels":[{}]},"issue":{"labels":[{},{}]}`,
			`"issue":{"repository":{"custom_properties":{"n":1e400}}}`, `"issue":{"repository":{"custom_properties":{"n":[1,{"m":2}]}}}`,
			`"issue":{"repository":{"license":{"permissions":["a",null]}}}`, `"issue":{"repository":{"topics":[1]}}`,
			`"comment":null`, `"comment":{"body":"/pitcrew retry"}`, `"comment":{"body":"\/pitcrew retry"}`, `"comment":{"user":null}`,
			`"comment":{"user":{"type":"Bot"}}`, `"comment":{"author_association":"NONE"}`, `"comment":{"id":"1"}`,
			`"comment":{"created_at":"2026-01-02T03:04:05Z"}`, `"comment":{"created_at":"2026-01-02"}`, `"comment":{"reactions":{"+1":true}}`,
			`"comment":{"id":0},"comment":{"body":"x"}`, `"comment":null,"comment":{"body":"/pitcrew help"}`,
			`"changes":null`, `"changes":{"body":null}`, `"changes":{"body":{}}`, `"changes":{"title":{"from":"x"}}`, `"changes":{"body":{"from":1}}`,
			`"repository":{"full_name":"nobody"}`, `"repository":{"full_name":null}`, `"repository":null`, `"repository":{"parent":{"full_name":1}}`,
			`"label":{"name":"flaky","name":null}`, `"extra":{"action":"labeled","deep":[{"action":"created"}]}`,
		} {
			for _, last := range []bool{false, true} {
				bodies = append(bodies, withMembers(t, b, members, last))
			}
		}
	}
	bodies = append(bodies,
		replace(command, `"author_association":"OWNER"`, `"author_association":"NONE"`),
		replace(dashboard, `"name":"pitcrew:dashboard"`, `"name":"pitcrew:dashboar\u0064"`),
		replace(labeled, `"action":"labeled"`, `"action" : "labeled"`),
		[]byte(" \n"+string(labeled)+"\t"),
	)
	for _, s := range append(smallEvents,
		``, ` `, `null`, ` null `, `[]`, `[{"action":"opened"}]`, `"labeled"`, `1`, `true`, `{}`, `{"action":"opened"}`, `{"action":"labeled"}`,
		`{"action":"edited"}`, `{"action":"created"}`, `{"action":"opened"} x`, `{"action":"labeled"`, `{"action":"opened",}`, `{"action":1}`,
		`{"issue":{"action":"labeled"}}`, `{"action":"opened","action":"labeled"}`, `{"action":"labeled","action":"opened"}`,
		`{"action":"labeled","action":null}`, `{"action":"edited","action":null}`, `{"action":null,"action":"labeled"}`,
		`{"action":"labeled","sender":1}`, `{"action":"opened","sender":1}`, `{"action":"opened","Action":1}`, "{\"action\":\"open\xffed\"}",
	) {
		bodies = append(bodies, []byte(s))
	}
	return bodies
}

func TestIgnoredDecidesAsTheParsersDo(t *testing.T) {
	decided := map[string]map[bool]int{}
	for _, b := range ignoredCorpus(t) {
		for _, event := range []string{"issues", "issue_comment", "push"} {
			want := oldIgnored(event, b)
			if got := Ignored(event, hook.NewBody(b)); got != want {
				t.Errorf("%s %s: ignored %v, the parsers say %v", event, excerpt(b), got, want)
			}
			if decided[event] == nil {
				decided[event] = map[bool]int{}
			}
			decided[event][want]++
		}
	}
	for _, event := range []string{"issues", "issue_comment"} {
		if decided[event][true] < 20 || decided[event][false] < 20 {
			t.Errorf("%s: the corpus has %d ignored and %d stored bodies: too few of one to test the decision", event, decided[event][true], decided[event][false])
		}
	}
}

// smallEvents are bodies with every member the decisions read and a few
// of the others, the fuzzer's seeds: a 14 KB sample would spend its time
// on text nothing reads (the table test has them all).
var smallEvents = []string{
	`{"action":"created","comment":{"id":1,"body":"/pitcrew retry","user":{"login":"a","type":"User"},"author_association":"OWNER",` +
		`"created_at":"2026-01-02T03:04:05Z"},"issue":{"number":2,"pull_request":{}},"installation":{"id":3},"repository":{"full_name":"a/b"}}`,
	`{"action":"edited","changes":{"body":{"from":"x"}},"issue":{"number":2,"labels":[{"name":"pitcrew:dashboard"}],"body":"- [x] a"},` +
		`"installation":{"id":3},"repository":{"full_name":"a/b","custom_properties":{"n":1}},"sender":{"login":"a","type":"User"}}`,
	`{"action":"labeled","label":{"name":"flaky"},"issue":{"number":2,"created_at":1700000000},"sender":{"login":"a[bot]","type":"Bot"}}`,
	`{"ACTION":"opened","\u0061ction":null,"action":"edited","sender":{"ſite_admin":true}}`,
	`{"action":"created","comment":{"id":1,"body":"/pitcrew help","user":{"login":"b"},"author_association":"MEMBER"},"issue":{"number":2},` +
		`"installation":{"id":3},"repository":{"full_name":"a/b","owner":{"login":"a","site_admin":false},"license":{"permissions":["x"]},` +
		`"topics":["t"],"created_at":1700000000,"pushed_at":"2026-01-02T03:04:05Z","permissions":{"admin":true}}}`,
}

// excerpt is a body's ends, where the corpus's changes are.
func excerpt(b []byte) string {
	if len(b) <= 400 {
		return strconv.Quote(string(b))
	}
	return strconv.Quote(string(b[:200])) + "..." + strconv.Quote(string(b[len(b)-200:]))
}

// FuzzIgnored holds Ignored to the parsers' decision on any body.
func FuzzIgnored(f *testing.F) {
	for _, s := range smallEvents {
		f.Add(false, []byte(s))
		f.Add(true, []byte(s))
	}
	f.Fuzz(func(t *testing.T, comment bool, body []byte) {
		event := "issues"
		if comment {
			event = "issue_comment"
		}
		if got, want := Ignored(event, hook.NewBody(body)), oldIgnored(event, body); got != want {
			t.Fatalf("%s %q: ignored %v, the parsers say %v", event, body, got, want)
		}
	})
}
