package alerts

import (
	"strings"
	"testing"
)

// template is the payload docs/alert-sources.md gives with Datadog's variables filled in the
// way Datadog fills them.
const template = `{"alert_id": "1234567", "alert_cycle_key": "7289641812718906497", "transition": "Triggered",
 "title": "[Triggered on {service:hexpm,env:prod}] Error rate above 5% on hexpm", "message": "Error rate is 7.2%\n@webhook-pitcrew",
 "tags": "service:hexpm,env:prod,pitcrew_repo:hexpm/hexpm", "link": "https://app.datadoghq.com/monitors/1234567?group=service%3Ahexpm",
 "date": "1764680000000", "priority": "P2", "event_type": "query_alert_monitor",
 "scope": "service:hexpm,env:prod", "org_id": "11287"}`

func TestParseTemplate(t *testing.T) {
	a, err := Parse([]byte(template))
	if err != nil {
		t.Fatal(err)
	}
	if a.ID != "1234567" || a.CycleKey != "7289641812718906497" || a.Transition != Triggered || a.Priority != "P2" || a.Tag("pitcrew_repo") != "hexpm/hexpm" || a.Tag("service") != "hexpm" || len(a.Tags) != 3 {
		t.Fatalf("%+v", a)
	}
	if a.IncidentKey() != "1234567:7289641812718906497" {
		t.Fatalf("key %s", a.IncidentKey())
	}
}

func TestParseDefaultBody(t *testing.T) {
	body := `{"id": "8131254345689327234", "title": "[Re-Triggered] Error rate above 5% on hexpm", "body": "%%%\nError rate is 7.2%\n%%%", "event_type": "query_alert_monitor", "date": "1764680000000", "last_updated": "1764680000000", "org": {"id": "11287", "name": "Hex"}}`
	a, err := Parse([]byte(body))
	if err != nil || !a.DefaultBody || a.Transition != ReTriggered || a.OrgID != "11287" || !strings.Contains(a.Message, "7.2%") {
		t.Fatalf("%+v %v", a, err)
	}
	b, _ := Parse([]byte(strings.Replace(body, "[Re-Triggered]", "[Triggered]", 1)))
	if a.IncidentKey() != b.IncidentKey() {
		t.Fatal("the same monitor's notifications must share an incident")
	}
}

func TestParseRejects(t *testing.T) {
	for _, body := range []string{`{`, `[]`, `{"title": "x"}`, `{"alert_id": "1"}`, `"string"`} {
		if _, err := Parse([]byte(body)); err == nil {
			t.Errorf("accepted %s", body)
		}
	}
}

func TestCleanRemovesInvisibleAndControl(t *testing.T) {
	got := Clean("a\x00b\u200bc\u202ed\x1b[31me\nf\tg\u2028h", 100)
	if got != "abcd[31me\nf\tgh" {
		t.Fatalf("%q", got)
	}
	if len([]rune(Clean(strings.Repeat("é", 500), 10))) != 10 {
		t.Fatal("not capped")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(template))
	f.Add([]byte(`{"id": "1", "title": "[Recovered] x", "org": {"id": 3}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		a, err := Parse(body)
		if err != nil {
			return
		}
		if a.ID == "" || a.Transition == "" || len([]rune(a.Message)) > maxMessage || len(a.Tags) > maxTags {
			t.Fatalf("accepted %+v", a)
		}
		for _, s := range append([]string{a.Title, a.Message, a.Scope}, a.Tags...) {
			for _, r := range s {
				if r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || (r >= 0x200b && r <= 0x200f) || (r >= 0x202a && r <= 0x202e)) {
					t.Fatalf("kept %U in %q", r, s)
				}
			}
		}
		if strings.ContainsAny(a.IncidentKey(), " \n/") {
			t.Fatalf("key %q", a.IncidentKey())
		}
	})
}

func TestTheDateIsReadAsEpochMillisecondsOrLeftOut(t *testing.T) {
	for _, c := range []struct {
		date string // the JSON value
		want string
	}{
		{`"1764680000000"`, "2025-12-02T12:53:20Z"},
		{`1764680000000`, "2025-12-02T12:53:20Z"},
		{`1764680000123`, "2025-12-02T12:53:20.123Z"},
		{`"1764680000"`, ""},     // seconds: 1970
		{`"99999999999999"`, ""}, // year 5138
		{`"2025-12-02 12:53"`, ""},
		{`"<b>@octocat</b> 1764680000000"`, ""},
		{`"17646800000000000000000"`, ""},
		{`-1764680000000`, ""},
		{`1.5e12`, "2017-07-14T02:40:00Z"},
		{`1.5`, ""},
		{`{"ms": 1764680000000}`, ""},
		{`null`, ""},
	} {
		a, err := Parse([]byte(`{"alert_id": "1", "transition": "Triggered", "date": ` + c.date + `}`))
		if err != nil {
			t.Fatal(err)
		}
		if a.Date != c.want {
			t.Errorf("date %s: got %q, want %q", c.date, a.Date, c.want)
		}
		if got := a.FiredAt(); (c.want == "") != got.IsZero() {
			t.Errorf("date %s: FiredAt %v", c.date, got)
		}
	}
}
