package hook

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"slices"
	"sync"

	gogithub "github.com/google/go-github/v66/github"
)

// delivery is one webhook delivery's body, read off the wire into a
// pooled buffer held against the intake's budget until release.
type delivery struct {
	buf    *[]byte
	data   []byte
	budget *Budget
	held   int64 // bytes taken from budget
}

var deliveryBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 32<<10); return &b }}

// maxPooledBuffer keeps one unusually large delivery from pinning its
// buffer in the pool.
const maxPooledBuffer = 256 << 10

// readDelivery reads r's body, which MaxBytesHandler bounds, in as few
// reads as its Content-Length allows, holding at most what budget grants
// (errIntakeBusy past it).
func readDelivery(r *http.Request, budget *Budget) (delivery, error) {
	if r.ContentLength > MaxGitHubBody {
		return delivery{}, &http.MaxBytesError{Limit: MaxGitHubBody}
	}
	bp := deliveryBuffers.Get().(*[]byte)
	b := (*bp)[:0]
	d := delivery{buf: bp, budget: budget}
	// Content-Length is the sender's word, given before any signature is
	// checked: a larger buffer is allocated only as the budget allows.
	want := max(int64(cap(b)), int64(len(b))+r.ContentLength+1) // +1: room for the read that sees EOF
	if !d.hold(want) {
		return d, errIntakeBusy
	}
	b = slices.Grow(b, int(want)-len(b))
	for {
		if len(b) == cap(b) {
			if !d.hold(int64(2 * cap(b))) {
				*bp = b
				return d, errIntakeBusy
			}
			b = slices.Grow(b, cap(b))
		}
		n, err := r.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			*bp = b
			return d, err
		}
	}
	*bp, d.data = b, b
	return d, nil
}

// hold makes sure the delivery holds size bytes of the budget.
func (d *delivery) hold(size int64) bool {
	if size <= d.held {
		return true
	}
	if !d.budget.take(size-d.held, size) {
		return false
	}
	d.held = size
	return true
}

// body is the delivery's payload.
func (d *delivery) body() []byte { return d.data }

// verify checks the body's signature by go-github's rules. A form-encoded
// delivery (a webhook set up by hand with that content type) carries its
// JSON in the payload field, which then replaces the body.
func (d *delivery) verify(contentType, signature string, secret []byte) error {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return err
	}
	if mediaType == "application/json" {
		return gogithub.ValidateSignature(signature, d.body(), secret)
	}
	payload, err := gogithub.ValidatePayloadFromBody(mediaType, bytes.NewReader(d.body()), signature, secret)
	if err != nil {
		return err
	}
	d.data = append(d.data[:0], payload...)
	*d.buf = d.data
	return nil
}

func (d *delivery) release() {
	if d.buf != nil && cap(*d.buf) <= maxPooledBuffer {
		deliveryBuffers.Put(d.buf)
	}
	if d.budget != nil {
		d.budget.give(d.held)
	}
	d.buf, d.data, d.budget, d.held = nil, nil, nil, 0
}
