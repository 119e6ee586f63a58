package github

import (
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"time"

	gogithub "github.com/google/go-github/v66/github"
)

// RetryTransport is the base transport of pitcrew's GitHub clients. It
// retries what fails for passing reasons (5xx, timeouts, connection
// errors) with backoff and jitter, and waits out GitHub's primary and
// secondary rate limits (x-ratelimit-remaining / x-ratelimit-reset,
// retry-after) instead of hammering. A POST is repeated only when GitHub
// cannot have acted on it (the connection was refused, or a rate limit
// turned it away), so a retry never posts a comment twice. A wait longer
// than MaxWait is not waited here: the answer goes back, the step fails,
// and the queue retries it later.
type RetryTransport struct {
	Base        http.RoundTripper // default http.DefaultTransport
	MaxAttempts int               // default 4
	BaseDelay   time.Duration     // default 500 ms
	MaxWait     time.Duration     // default 60 s
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
	for attempt := 1; ; attempt++ {
		resp, err := base.RoundTrip(req)
		wait, retry := t.decide(req, resp, err, attempt, delay)
		if !retry || attempt >= attempts || wait > maxWait || (req.Body != nil && req.GetBody == nil) {
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

// decide says whether to try again, and after how long.
func (t *RetryTransport) decide(req *http.Request, resp *http.Response, err error, attempt int, delay time.Duration) (time.Duration, bool) {
	backoff := delay << (attempt - 1)
	backoff = backoff/2 + rand.N(backoff/2+1)
	if err != nil {
		var op *net.OpError
		refused := errors.As(err, &op) && op.Op == "dial"
		return backoff, req.Context().Err() == nil && (req.Method != http.MethodPost || refused)
	}
	if wait, limited := rateLimitWait(resp); limited {
		return wait, true
	}
	if resp.StatusCode >= 500 && req.Method != http.MethodPost {
		return backoff, true
	}
	return 0, false
}

// rateLimitWait reads GitHub's rate-limit answers: 403 or 429 with
// retry-after (secondary limit), or with x-ratelimit-remaining 0 (primary
// limit, reset at x-ratelimit-reset).
func rateLimitWait(resp *http.Response) (time.Duration, bool) {
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests {
		return 0, false
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if resp.Header.Get("X-Ratelimit-Remaining") == "0" {
		if reset, err := strconv.ParseInt(resp.Header.Get("X-Ratelimit-Reset"), 10, 64); err == nil {
			return max(time.Until(time.Unix(reset, 0)), time.Second), true
		}
		return time.Minute, true
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		return time.Minute, true
	}
	return 0, false
}

// WillNotChange reports a GitHub answer that retrying cannot change:
// 401, 404, 410, 422, or 403 that is not a rate limit (those are waited
// out).
func WillNotChange(err error) bool {
	var e *gogithub.ErrorResponse
	if !errors.As(err, &e) || e.Response == nil {
		return false
	}
	switch e.Response.StatusCode {
	case http.StatusUnauthorized, http.StatusNotFound, http.StatusGone, http.StatusUnprocessableEntity:
		return true
	case http.StatusForbidden:
		_, limited := rateLimitWait(e.Response)
		return !limited
	}
	return false
}
