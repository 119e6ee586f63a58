package github

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gogithub "github.com/google/go-github/v66/github"
)

// GitHub's documentation URLs for its limits: go-github makes an
// AbuseRateLimitError of a 403 that points to the second.
const (
	docsLimits    = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
	docsSecondary = docsLimits + "#about-secondary-rate-limits"
	secondaryMsg  = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
)

// answer is one reply of the fake GitHub.
type answer struct {
	status  int
	headers map[string]string
	body    string
}

// clientOn is a go-github client whose requests get the answers in turn
// (the last one again once they run out), through rt when not nil; it
// counts the requests.
func clientOn(t *testing.T, rt http.RoundTripper, answers ...answer) (*gogithub.Client, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := answers[min(int(n.Add(1)), len(answers))-1]
		for k, v := range a.headers {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		w.Write([]byte(a.body))
	}))
	t.Cleanup(srv.Close)
	c := gogithub.NewClient(&http.Client{Transport: rt})
	c.BaseURL, _ = url.Parse(srv.URL + "/")
	return c, &n
}

func message(msg, docs string) string {
	return fmt.Sprintf(`{"message":%q,"documentation_url":%q}`, msg, docs)
}

// RateLimited reads every way GitHub says "rate limited", as go-github
// returns it, wrapped or not, and how long GitHub asks to wait; a 403
// that is not a limit is permanent (WillNotChange), one that is is not.
func TestRateLimitedSaysHowLongGitHubAsksToWait(t *testing.T) {
	in := func(d time.Duration) string { return strconv.FormatInt(time.Now().Add(d).Unix(), 10) }
	for _, c := range []struct {
		name     string
		answer   answer
		limited  bool
		from, to time.Duration
	}{
		{"secondary, retry-after 90", answer{403, map[string]string{"Retry-After": "90"}, message(secondaryMsg, docsSecondary)}, true, 90 * time.Second, 90 * time.Second},
		{"429, retry-after 90", answer{429, map[string]string{"Retry-After": "90"}, ""}, true, 90 * time.Second, 90 * time.Second},
		{"retry-after as a date", answer{429, map[string]string{"Retry-After": time.Now().Add(3 * time.Minute).UTC().Format(http.TimeFormat)}, ""}, true, 170 * time.Second, 3 * time.Minute},
		{"primary, reset in 2 minutes", answer{403, map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": in(2 * time.Minute)}, message("API rate limit exceeded", docsLimits)}, true, 118 * time.Second, 2 * time.Minute},
		{"primary 429, reset in 2 minutes", answer{429, map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": in(2 * time.Minute)}, ""}, true, 118 * time.Second, 2 * time.Minute},
		{"primary, reset past", answer{403, map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": in(-time.Minute)}, ""}, true, time.Second, time.Second},
		{"secondary by its documentation, no header", answer{403, nil, message(secondaryMsg, docsSecondary)}, true, time.Minute, time.Minute},
		{"secondary by its message alone", answer{403, nil, message(secondaryMsg, docsLimits)}, true, time.Minute, time.Minute},
		{"secondary 429 by its message", answer{429, nil, message(secondaryMsg, "")}, true, time.Minute, time.Minute},
		{"secondary, requests left, a reset far away", answer{403, map[string]string{"X-Ratelimit-Remaining": "4000", "X-Ratelimit-Reset": in(40 * time.Minute)}, message(secondaryMsg, docsSecondary)}, true, time.Minute, time.Minute},
		{"old abuse detection", answer{403, nil, message("You have triggered an abuse detection mechanism.", "https://docs.github.com/rest#abuse-rate-limits")}, true, time.Minute, time.Minute},
		{"429 without anything", answer{429, nil, ""}, true, time.Minute, time.Minute},
		{"403 not a limit", answer{403, map[string]string{"X-Ratelimit-Remaining": "4000"}, message("Resource not accessible by integration", "")}, false, 0, 0},
		{"404", answer{404, nil, message("Not Found", "")}, false, 0, 0},
		{"500", answer{500, map[string]string{"Retry-After": "5"}, ""}, false, 0, 0},
	} {
		c := c
		t.Run(c.name, func(t *testing.T) {
			client, _ := clientOn(t, nil, c.answer)
			_, _, err := client.Issues.Get(context.Background(), "a", "b", 1)
			if err == nil {
				t.Fatal("no error")
			}
			err = fmt.Errorf("step: %w", err)
			wait, limited := RateLimited(err)
			if limited != c.limited || wait < c.from-time.Second || wait > c.to {
				t.Fatalf("RateLimited(%v) = %s, %v; want %v, %s to %s", err, wait, limited, c.limited, c.from, c.to)
			}
			if permanent := c.answer.status == 403 && !c.limited || c.answer.status == 404; WillNotChange(err) != permanent {
				t.Fatalf("WillNotChange = %v, want %v", !permanent, permanent)
			}
		})
	}
	for _, err := range []error{nil, errors.New("boom"), context.DeadlineExceeded} {
		if wait, limited := RateLimited(err); limited {
			t.Errorf("RateLimited(%v) = %s, true", err, wait)
		}
	}
}

// After a secondary limit with retry-after, go-github refuses the next
// requests itself, with the time left: that is a rate limit too.
func TestRateLimitedReadsGoGitHubsOwnRefusal(t *testing.T) {
	client, n := clientOn(t, nil, answer{403, map[string]string{"Retry-After": "90"}, message(secondaryMsg, docsSecondary)})
	client.Issues.Get(context.Background(), "a", "b", 1)
	_, _, err := client.Issues.Get(context.Background(), "a", "b", 1)
	if wait, limited := RateLimited(err); n.Load() != 1 || !limited || wait < 85*time.Second || wait > 90*time.Second {
		t.Fatalf("%d requests; RateLimited(%v) = %s, %v", n.Load(), err, wait, limited)
	}
}

// The transport waits out short rate limits, a secondary one named only by
// its message too, but no more than MaxWait in all for one request: past
// it, the answer goes back whole for go-github to read, the body of a
// 403 it read included, however long.
func TestTransportWaitsOutRateLimitsUpToMaxWait(t *testing.T) {
	rt := &RetryTransport{BaseDelay: time.Millisecond, MaxWait: 1500 * time.Millisecond}
	ok := answer{200, nil, `{"number":1}`}
	retryAfter := func(s string) answer { return answer{429, map[string]string{"Retry-After": s}, ""} }

	client, n := clientOn(t, rt, retryAfter("0"), retryAfter("1"), ok)
	if _, _, err := client.Issues.Get(context.Background(), "a", "b", 1); err != nil || n.Load() != 3 {
		t.Fatalf("short limits: %v after %d requests", err, n.Load())
	}

	client, n = clientOn(t, rt, retryAfter("1"), retryAfter("1"), ok)
	_, _, err := client.Issues.Get(context.Background(), "a", "b", 1)
	if _, limited := RateLimited(err); !limited || n.Load() != 2 {
		t.Fatalf("limits past MaxWait in all: %v after %d requests", err, n.Load())
	}

	padding := strings.Repeat("x", 3*maxLimitBody)
	client, n = clientOn(t, rt, answer{403, nil, fmt.Sprintf(`{"message":%q,"padding":%q}`, secondaryMsg, padding)}, ok)
	_, _, err = client.Issues.Get(context.Background(), "a", "b", 1)
	var e *gogithub.ErrorResponse
	if !errors.As(err, &e) || e.Message != secondaryMsg || n.Load() != 1 {
		t.Fatalf("a secondary limit of a minute: %v after %d requests", err, n.Load())
	}
	if wait, limited := RateLimited(err); !limited || wait != time.Minute || WillNotChange(err) {
		t.Fatalf("RateLimited = %s, %v; WillNotChange %v", wait, limited, WillNotChange(err))
	}

	client, n = clientOn(t, rt, answer{403, nil, message("Resource not accessible by integration", "")}, ok)
	if _, _, err := client.Issues.Get(context.Background(), "a", "b", 1); !WillNotChange(err) || n.Load() != 1 {
		t.Fatalf("a 403 that is no limit: %v after %d requests", err, n.Load())
	}
}

// rateLimitWait recognises a secondary limit by its message, in the
// first 64 KiB of the body, and puts the body back as it was.
func TestRateLimitWaitPutsTheBodyBack(t *testing.T) {
	for _, c := range []struct {
		body    string
		limited bool
	}{
		{message(secondaryMsg, ""), true},
		{`{"message":"Must have admin rights to Repository."}`, false},
		{strings.Repeat(" ", maxLimitBody) + message(secondaryMsg, ""), false},
		{"", false},
	} {
		resp := &http.Response{StatusCode: 403, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(c.body))}
		wait, limited := rateLimitWait(resp)
		if rest, err := io.ReadAll(resp.Body); err != nil || string(rest) != c.body {
			t.Fatalf("body after the read: %d bytes, want %d", len(rest), len(c.body))
		}
		if limited != c.limited || limited && wait != time.Minute {
			t.Errorf("%.60q: %s, %v; want limited %v", c.body, wait, limited, c.limited)
		}
	}
}
