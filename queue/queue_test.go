package queue

import (
	"testing"
	"time"
)

func TestDecodeDelivery(t *testing.T) {
	for _, c := range []struct {
		payload, event, id, body string
		ok                       bool
	}{
		{"issues\n72d3162e\n{\"a\":1}", "issues", "72d3162e", `{"a":1}`, true},
		{"issues\n72d3162e\n{\"a\":\n1}", "issues", "72d3162e", "{\"a\":\n1}", true}, // newlines in the body stay in it
		{"issues\n72d3162e\n", "issues", "72d3162e", "", true},
		{"issues\n72d3162e", "", "", "", false},
		{"\nid\n{}", "", "", "", false},
		{"issues\n\n{}", "", "", "", false},
		{"", "", "", "", false},
	} {
		event, id, body, err := DecodeDelivery([]byte(c.payload))
		if (err == nil) != c.ok || event != c.event || id != c.id || string(body) != c.body {
			t.Errorf("%q: %q %q %q %v", c.payload, event, id, body, err)
		}
	}
}

func TestRetryDelayBacksOffFromTwoSeconds(t *testing.T) {
	prev := time.Duration(0)
	for n := 0; n < 8; n++ {
		d := RetryDelay(n, nil, nil)
		if d <= prev || d > 10*time.Minute {
			t.Fatalf("retry %d waits %s after %s", n, d, prev)
		}
		prev = d
	}
	if RetryDelay(0, nil, nil) != 2*time.Second {
		t.Fatal("the first retry waits 2 s")
	}
}
