package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Calling the API: each request is retried with backoff on a transient
// answer, and an error answer is reduced to a short, redacted detail.

func (c *Client) do(ctx context.Context, method, url string, body []byte, idempotencyKey string, out any) error {
	var last error
	for attempt := 0; attempt < c.cfg.MaxAttempts; attempt++ {
		if attempt > 0 {
			if err := sleep(ctx, c.delay(attempt, last)); err != nil {
				return err
			}
		}
		req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
		req.Header.Set("Accept", "application/json")
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if idempotencyKey != "" {
			req.Header.Set("Idempotency-Key", idempotencyKey)
		}
		resp, err := c.cfg.HTTPClient.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			last = fmt.Errorf("sandbox: %s %s: %w", method, req.URL.Path, errors.Unwrap(err))
			continue
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		resp.Body.Close()
		switch {
		case err != nil:
			last = fmt.Errorf("sandbox: reading answer: %w", err)
		case resp.StatusCode >= 200 && resp.StatusCode < 300:
			if err := json.Unmarshal(data, out); err != nil {
				return fmt.Errorf("sandbox: %s %s: undecodable answer: %w", method, req.URL.Path, err)
			}
			return nil
		case resp.StatusCode == 429 || resp.StatusCode == 408 || resp.StatusCode >= 500:
			last = &retryable{status: resp.StatusCode, after: retryAfter(resp.Header)}
		default:
			// The answer may quote the request; keep the key out of errors.
			return &PermanentError{Status: resp.StatusCode, Detail: strings.ReplaceAll(detail(data), c.cfg.APIKey, "[redacted]")}
		}
	}
	return fmt.Errorf("sandbox: %s gave up after %d attempts: %w", method, c.cfg.MaxAttempts, last)
}

type retryable struct {
	status int
	after  time.Duration
}

func (r *retryable) Error() string { return "answered " + strconv.Itoa(r.status) }

// Describe says what went wrong in err for a person reading an issue: the
// sandbox's HTTP status, or that it could not be reached.
func Describe(err error) string {
	var r *retryable
	var p *PermanentError
	switch {
	case errors.As(err, &r):
		return fmt.Sprintf("the sandbox answered HTTP %d", r.status)
	case errors.As(err, &p):
		return fmt.Sprintf("the sandbox refused it (HTTP %d)", p.Status)
	}
	return "the sandbox could not be reached"
}

// delay is exponential backoff with full jitter, or the server's
// Retry-After when it gave one.
func (c *Client) delay(attempt int, last error) time.Duration {
	var r *retryable
	if errors.As(last, &r) && r.after > 0 {
		return min(r.after, 2*time.Minute)
	}
	d := c.cfg.BaseDelay << (attempt - 1)
	return d/2 + rand.N(d/2+1)
}

func retryAfter(h http.Header) time.Duration {
	if s, err := strconv.Atoi(h.Get("Retry-After")); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	return 0
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// detail extracts a short message from an error answer, never echoing
// more than a line of it.
func detail(data []byte) string {
	var e struct {
		Error   any    `json:"error"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(data, &e)
	msg := e.Message
	if msg == "" {
		if s, ok := e.Error.(string); ok {
			msg = s
		}
	}
	if msg == "" {
		msg = "no detail given"
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > 200 {
		msg = msg[:200]
	}
	return msg
}
