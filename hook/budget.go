package hook

import (
	"errors"
	"io"
	"net/http"
	"sync/atomic"
)

// maxUnverifiedBytes bounds the memory that webhook bodies whose signature
// is not yet checked (GitHub's, the sandbox's callbacks) may hold together. Anyone can send them: without a
// bound, 150 concurrent 5 MiB posts held 750 MiB.
const maxUnverifiedBytes = 64 << 20

// errIntakeBusy is a delivery refused because the bodies being read
// already hold the whole budget: 503 with Retry-After.
var errIntakeBusy = errors.New("too many large deliveries are being read; retry shortly")

// Budget is a bound on bytes held across requests. Small bodies (up to
// maxPooledBuffer, nearly every delivery GitHub sends) may use all of it;
// larger ones only half, so a flood of large posts cannot starve them.
type Budget struct {
	used  atomic.Int64
	limit int64 // 0: maxUnverifiedBytes
}

// take reserves n more bytes for a body that will then hold total bytes.
func (b *Budget) take(n, total int64) bool {
	ceiling := b.limit
	if ceiling == 0 {
		ceiling = maxUnverifiedBytes
	}
	if total > maxPooledBuffer {
		ceiling /= 2
	}
	for {
		cur := b.used.Load()
		if cur+n > ceiling {
			return false
		}
		if b.used.CompareAndSwap(cur, cur+n) {
			return true
		}
	}
}

func (b *Budget) give(n int64) { b.used.Add(-n) }

// Used is how many bytes unverified bodies hold now.
func (b *Budget) Used() int64 { return b.used.Load() }

// readAll reads a body of at most limit bytes within the budget. done
// gives the bytes back; call it once the body is no longer needed.
// readOrRefuse is readAll for the routes of small outside requests: a
// body it cannot take is answered here (503 while the budget is spent,
// 413 past limit) and refused names the outcome to count.
func (b *Budget) readOrRefuse(w http.ResponseWriter, r *http.Request, limit int64) (body []byte, done func(), refused string) {
	body, done, err := b.readAll(r, limit)
	switch {
	case errors.Is(err, errIntakeBusy):
		refuseBusy(w)
		return nil, done, "busy"
	case err != nil:
		http.Error(w, "body too large or unreadable", http.StatusRequestEntityTooLarge)
		return nil, done, "rejected"
	}
	return body, done, ""
}

func (b *Budget) readAll(r *http.Request, limit int64) (body []byte, done func(), err error) {
	size := limit
	if r.ContentLength >= 0 && r.ContentLength <= limit {
		size = r.ContentLength
	}
	if r.ContentLength > limit {
		return nil, func() {}, &http.MaxBytesError{Limit: limit}
	}
	if !b.take(size+1, size+1) {
		return nil, func() {}, errIntakeBusy
	}
	done = func() { b.give(size + 1) }
	buf := make([]byte, 0, size+1)
	for {
		n, err := r.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, done, nil
		}
		if err != nil {
			return nil, done, err
		}
		if len(buf) == cap(buf) {
			return nil, done, &http.MaxBytesError{Limit: limit}
		}
	}
}

// refuseBusy answers a request the budget could not take.
func refuseBusy(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	w.Header().Set("Connection", "close") // the unread body is not drained
	http.Error(w, errIntakeBusy.Error(), http.StatusServiceUnavailable)
}
