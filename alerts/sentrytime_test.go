package alerts

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/pitcrew/pitcrew/internal/testenv"
)

func TestSentryFreshRefusesOldOrUndatedAlerts(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	unix := func(d time.Duration) string {
		return strconv.FormatFloat(float64(now.Add(d).UnixMilli())/1000, 'f', 3, 64)
	}
	rfc := func(d time.Duration) string { return strconv.Quote(now.Add(d).Format(time.RFC3339Nano)) }
	for _, c := range []struct {
		name, fields, header string
		fresh                bool
	}{
		{"received a minute ago", `"received":` + unix(-time.Minute), "", true},
		{"received a day and an hour ago", `"received":` + unix(-25*time.Hour), "", false},
		{"received ten minutes ahead", `"received":` + unix(10*time.Minute), "", false},
		{"received a minute ahead", `"received":` + unix(time.Minute), "", true},
		{"received as a string", `"received":"` + unix(-time.Minute) + `"`, "", true},
		{"received as RFC 3339", `"received":` + rfc(-time.Minute), "", true},
		// An event cached offline by its SDK: Sentry received it now.
		{"an old event received now", `"received":` + unix(-time.Second) + `,"timestamp":` + unix(-72*time.Hour) + `,"datetime":` + rfc(-72*time.Hour), "", true},
		{"received long ago, its time forged fresh", `"received":` + unix(-48*time.Hour) + `,"timestamp":` + unix(0), "", false},
		{"only a timestamp, an hour old", `"timestamp":` + unix(-time.Hour), "", true},
		{"only a timestamp, two days old", `"timestamp":` + unix(-48*time.Hour), "", false},
		{"only a datetime, an hour old", `"datetime":` + rfc(-time.Hour), "", true},
		{"only a datetime, a year old", `"datetime":` + rfc(-365*24*time.Hour), "", false},
		{"no time at all", `"title":"x"`, "", false},
		{"times that are not ones", `"received":"soon","timestamp":1e300,"datetime":"yesterday"`, "", false},
		{"a header a few seconds old", `"received":` + unix(-time.Minute), strconv.FormatInt(now.Unix()-3, 10), true},
		{"a header two hours old", `"received":` + unix(-time.Minute), strconv.FormatInt(now.Add(-2*time.Hour).Unix(), 10), false},
		{"a header ten minutes ahead", `"received":` + unix(-time.Minute), strconv.FormatInt(now.Add(10*time.Minute).Unix(), 10), false},
		{"a header that is not a time", `"received":` + unix(-time.Minute), "yesterday", false},
		// The header is not signed: a fresh one does not make an old body fresh.
		{"a fresh header on a year-old body", `"received":` + unix(-365*24*time.Hour), strconv.FormatInt(now.Unix(), 10), false},
	} {
		body := fmt.Sprintf(`{"action":"triggered","data":{"event":{"issue_id":"42",%s}}}`, c.fields)
		a, err := ParseSentry([]byte(body))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := a.Fresh(c.header, now); (err == nil) != c.fresh {
			t.Errorf("%s: Fresh = %v, want fresh %v", c.name, err, c.fresh)
		}
	}
}

func TestParseSentryReadsTheEventsTimes(t *testing.T) {
	a, err := ParseSentry(testenv.SentrySample(t, "event_alert_phoenix.json"))
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Unix(1764495672, 228451000).UTC(); !a.Happened.Round(time.Millisecond).Equal(want.Round(time.Millisecond)) || !a.Received.IsZero() {
		t.Fatalf("happened %v, received %v; want %v from its timestamp, and no received time", a.Happened, a.Received, want)
	}
	tagged, _ := ParseSentry(testenv.SentrySample(t, "event_alert_tagged.json")) // a datetime only
	if !tagged.Happened.Equal(time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)) {
		t.Fatalf("happened %v, want its datetime", tagged.Happened)
	}
}
