package sandbox

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"
)

func TestVerify(t *testing.T) {
	v, err := NewVerifier("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	v.Now = func() time.Time { return now }
	body := []byte(`{"event":"run.completed","session_id":"ses_1"}`)
	headers := func(id string, ts time.Time, sig string) http.Header {
		h := http.Header{}
		h.Set("webhook-id", id)
		h.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
		h.Set("webhook-signature", sig)
		return h
	}
	good := v.Sign("msg_1", now.Unix(), body)
	cases := []struct {
		name string
		h    http.Header
		body []byte
		ok   bool
	}{
		{"valid", headers("msg_1", now, good), body, true},
		{"rotation: second signature valid", headers("msg_1", now, "v1,AAAA "+good), body, true},
		{"tampered body", headers("msg_1", now, good), []byte(`{"event":"run.failed","session_id":"ses_1"}`), false},
		{"other id", headers("msg_2", now, good), body, false},
		{"old timestamp", headers("msg_1", now.Add(-6*time.Minute), v.Sign("msg_1", now.Add(-6*time.Minute).Unix(), body)), body, false},
		{"future timestamp", headers("msg_1", now.Add(6*time.Minute), v.Sign("msg_1", now.Add(6*time.Minute).Unix(), body)), body, false},
		{"missing headers", http.Header{}, body, false},
	}
	for _, c := range cases {
		err := v.Verify(c.h, c.body)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrSignature)) {
			t.Errorf("%s: err = %v", c.name, err)
		}
	}
	if _, err := NewVerifier("whsec_!!!"); err == nil {
		t.Error("bad whsec secret accepted")
	}
}

func TestParseCallback(t *testing.T) {
	good := `{"event":"run.completed","session_id":"ses_01HX","execution_id":"exe_1","session_url":"https://app.prix.dev/s/ses_01HX","result":"done"}`
	cb, err := ParseCallback([]byte(good))
	if err != nil || cb.SessionID != "ses_01HX" || cb.Event != EventRunCompleted {
		t.Fatalf("%+v %v", cb, err)
	}
	for _, bad := range []string{`{`, `{"event":"run.started","session_id":"s"}`, `{"event":"run.failed","session_id":"../../admin"}`, `{"event":"run.failed"}`} {
		if _, err := ParseCallback([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func FuzzParseCallback(f *testing.F) {
	f.Add([]byte(`{"event":"run.completed","session_id":"ses_1","result":"x"}`))
	f.Add([]byte(`{"event":"run.failed","session_id":"a/b"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		cb, err := ParseCallback(body)
		if err == nil && !ValidSessionID(cb.SessionID) {
			t.Fatalf("invalid session id accepted: %q", cb.SessionID)
		}
	})
}
