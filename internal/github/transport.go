package github

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	gogithub "github.com/google/go-github/v66/github"
)

// RetryTransport is the base transport of pitcrew's GitHub clients. It
// retries what fails for passing reasons (5xx, timeouts, connection
// errors) with backoff and jitter, and waits out GitHub's primary and
// secondary rate limits (retry-after, x-ratelimit-remaining /
// x-ratelimit-reset, or a minute for a secondary limit that names no time)
// instead of hammering. A POST is repeated only when GitHub cannot have
// acted on it (the connection was refused, or a rate limit turned it
// away), so a retry never posts a comment twice. Rate limits hold the
// caller at most MaxWait in all: a longer wait is not waited here, the
// answer goes back, the step fails, and the queue reschedules the task for
// when GitHub asked (RateLimited, queue.RetryDelay) without holding a
// worker.
type RetryTransport struct {
	Base        http.RoundTripper // default http.DefaultTransport
	MaxAttempts int               // default 4
	BaseDelay   time.Duration     // default 500 ms
	MaxWait     time.Duration     // default 60 s: the rate-limit waits of one request, in all
}

// RoundTrip implements http.RoundTripper.
func (t *RetryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base, attempts, delay, maxWait := t.Base, t.MaxAttempts, t.BaseDelay, t.MaxWait
	if base == nil {
		base = http.DefaultTransport
	}
	if attempts <= 0 {
		attempts = 4
	}
	if delay <= 0 {
		delay = 500 * time.Millisecond
	}
	if maxWait <= 0 {
		maxWait = time.Minute
	}
	var waited time.Duration // on rate limits
	for attempt := 1; ; attempt++ {
		resp, err := base.RoundTrip(req)
		wait, retry, limited := t.decide(req, resp, err, attempt, delay)
		if limited {
			waited += wait
		}
		if !retry || attempt >= attempts || waited > maxWait || (req.Body != nil && req.GetBody == nil) {
			return resp, err
		}
		if resp != nil {
			resp.Body.Close()
		}
		if req.GetBody != nil {
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, gerr
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
		select {
		case <-req.Context().Done():
			return nil, req.Context().Err()
		case <-time.After(wait):
		}
	}
}

// decide says whether to try again, after how long, and whether the wait
// is a rate limit's.
func (t *RetryTransport) decide(req *http.Request, resp *http.Response, err error, attempt int, delay time.Duration) (wait time.Duration, retry, limited bool) {
	backoff := delay << (attempt - 1)
	backoff = backoff/2 + rand.N(backoff/2+1)
	if err != nil {
		var op *net.OpError
		refused := errors.As(err, &op) && op.Op == "dial"
		return backoff, req.Context().Err() == nil && (req.Method != http.MethodPost || refused), false
	}
	if wait, limited := rateLimitWait(resp); limited {
		return wait, true, true
	}
	if resp.StatusCode >= 500 && req.Method != http.MethodPost {
		return backoff, true, false
	}
	return 0, false, false
}

// maxLimitBody bounds how much of a 403's body rateLimitWait reads to find
// a secondary limit's message.
const maxLimitBody = 64 << 10

// rateLimitWait reads GitHub's rate-limit answers (limitWait). A 403 that
// carries no header saying so is a secondary limit only by its message:
// its body is read (up to maxLimitBody) and put back, so go-github still
// parses all of it.
func rateLimitWait(resp *http.Response) (time.Duration, bool) {
	if wait, ok := limitWait(resp.StatusCode, resp.Header, false); ok || resp.StatusCode != http.StatusForbidden || resp.Body == nil {
		return wait, ok
	}
	head, _ := io.ReadAll(io.LimitReader(resp.Body, maxLimitBody))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	return limitWait(resp.StatusCode, resp.Header, secondaryLimit(string(head)))
}

// limitWait says whether an answer is a rate limit, and how long GitHub
// asks to wait before the next request. GitHub answers 403 or 429 and,
// from the most precise: retry-after (seconds, however long);
// x-ratelimit-remaining 0, until x-ratelimit-reset (a second at least); a
// secondary limit without either (secondary: its message says so), or a
// 429 without either, a minute.
func limitWait(status int, h http.Header, secondary bool) (time.Duration, bool) {
	if status != http.StatusForbidden && status != http.StatusTooManyRequests {
		return 0, false
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.ParseInt(v, 10, 64); err == nil && s >= 0 {
			return time.Duration(min(s, math.MaxInt32)) * time.Second, true
		}
		if at, err := http.ParseTime(v); err == nil {
			return max(time.Until(at), 0), true
		}
	}
	if h.Get("X-Ratelimit-Remaining") == "0" {
		if reset, err := strconv.ParseInt(h.Get("X-Ratelimit-Reset"), 10, 64); err == nil {
			return max(time.Until(time.Unix(reset, 0)), time.Second), true
		}
		return time.Minute, true
	}
	if secondary || status == http.StatusTooManyRequests {
		return time.Minute, true
	}
	return 0, false
}

// secondaryLimit reports whether an error message (or its body, or its
// documentation_url) names a secondary rate limit, or the abuse detection
// it was called before.
func secondaryLimit(text string) bool {
	text = strings.ToLower(text)
	for _, s := range []string{"secondary rate limit", "secondary-rate-limit", "abuse detection", "abuse-rate-limit"} {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

// RateLimited reads an error of a go-github call (an ErrorResponse,
// RateLimitError or AbuseRateLimitError, wrapped or not) and reports
// whether GitHub turned the request away for a rate limit, and how long it
// asks to wait: retry-after however long; until x-ratelimit-reset when
// x-ratelimit-remaining is 0; a minute for a secondary limit, or a 429,
// that names no time. go-github's own refusals before a request (a limit
// it remembers) count too, with the time left.
func RateLimited(err error) (wait time.Duration, ok bool) {
	var primary *gogithub.RateLimitError
	if errors.As(err, &primary) {
		if primary.Response != nil {
			if wait, ok := limitWait(primary.Response.StatusCode, primary.Response.Header, false); ok {
				return wait, true
			}
		}
		if reset := primary.Rate.Reset.Time; !reset.IsZero() {
			return max(time.Until(reset), time.Second), true
		}
		return time.Minute, true
	}
	var secondary *gogithub.AbuseRateLimitError
	if errors.As(err, &secondary) {
		if r := secondary.Response; r != nil && (r.Header.Get("Retry-After") != "" || r.Header.Get("X-Ratelimit-Remaining") == "0") {
			return limitWait(http.StatusForbidden, r.Header, true)
		}
		// go-github reads x-ratelimit-reset as the time to wait even when
		// requests remain; GitHub asks for a minute then. Without a reset,
		// RetryAfter is the time go-github itself still refuses requests.
		if d := secondary.RetryAfter; d != nil && (secondary.Response == nil || secondary.Response.Header.Get("X-Ratelimit-Reset") == "") {
			return max(*d, time.Second), true
		}
		return time.Minute, true
	}
	var e *gogithub.ErrorResponse
	if errors.As(err, &e) && e.Response != nil {
		return limitWait(e.Response.StatusCode, e.Response.Header, secondaryLimit(e.Message+" "+e.DocumentationURL))
	}
	return 0, false
}

// WillNotChange reports a GitHub answer that retrying cannot change:
// 401, 404, 410, 422, or 403 that is not a rate limit (those are waited
// out, or rescheduled: RateLimited).
func WillNotChange(err error) bool {
	var e *gogithub.ErrorResponse
	if !errors.As(err, &e) || e.Response == nil {
		return false
	}
	switch e.Response.StatusCode {
	case http.StatusUnauthorized, http.StatusNotFound, http.StatusGone, http.StatusUnprocessableEntity:
		return true
	case http.StatusForbidden:
		_, limited := RateLimited(err)
		return !limited
	}
	return false
}
