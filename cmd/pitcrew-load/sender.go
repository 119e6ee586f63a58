package main

import (
	"bufio"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// deliveryIDLen is the width of a delivery id: a UUID's, as GitHub sends.
const deliveryIDLen = 36

// template is one signed delivery, serialised once as an HTTP/1.1 request,
// with a slot where each send writes its own delivery id. Writing
// pre-built bytes on kept-alive connections keeps the generator's own CPU
// per delivery at a fraction of net/http's client, so on a shared machine
// more of it is left to the server under test.
type template struct {
	addr   string
	req    []byte
	idAt   int
	prefix [16]byte // random per run, so runs against one Redis never collide
	seq    atomic.Uint64
}

func newTemplate(target, secret, event string, payload []byte) (*template, error) {
	u, err := url.Parse(target)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("-url must be an http:// URL, got %q", target)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(payload)
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: GitHub-Hookshot/pitcrew-load\r\n"+
		"Content-Type: application/json\r\nX-GitHub-Event: %s\r\nX-Hub-Signature-256: sha256=%s\r\n"+
		"Content-Length: %d\r\nX-GitHub-Delivery: ", u.RequestURI(), u.Host, event, hex.EncodeToString(mac.Sum(nil)), len(payload))
	t := &template{addr: addr, idAt: len(head)}
	t.req = append([]byte(head), make([]byte, deliveryIDLen)...)
	t.req = append(append(t.req, "\r\n\r\n"...), payload...)
	var random [8]byte
	rand.Read(random[:])
	hex.Encode(t.prefix[:], random[:])
	return t, nil
}

// nextID fills id with a fresh delivery id shaped like a UUID: the run's
// random prefix, then a counter, as 8-4-4-4-12 hex digits.
func (t *template) nextID(id []byte) {
	var digits [32]byte
	copy(digits[:16], t.prefix[:])
	var counter [8]byte
	binary.BigEndian.PutUint64(counter[:], t.seq.Add(1))
	hex.Encode(digits[16:], counter[:])
	copy(id[0:8], digits[0:8])
	copy(id[9:13], digits[8:12])
	copy(id[14:18], digits[12:16])
	copy(id[19:23], digits[16:20])
	copy(id[24:36], digits[20:32])
	id[8], id[13], id[18], id[23] = '-', '-', '-', '-'
}

// sender sends deliveries one after another on one connection, dialling
// again when the server closed it.
type sender struct {
	t    *template
	req  []byte
	conn net.Conn
	r    *bufio.Reader
}

func (t *template) newSender() *sender {
	return &sender{t: t, req: append([]byte(nil), t.req...)}
}

// send delivers once and returns the answer's status code.
func (s *sender) send() (int, error) {
	s.t.nextID(s.req[s.t.idAt : s.t.idAt+deliveryIDLen])
	if s.conn != nil && peerClosed(s.conn) {
		// The server closed the connection while it sat idle (Node does
		// after 5 s): net/http's client notices with a reader goroutine
		// per connection; one non-blocking peek does here.
		s.close()
	}
	resp, err := s.roundTrip()
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.Close {
		s.close()
	}
	return resp.StatusCode, err
}

// peerClosed reports whether the other end of an idle connection has
// closed it (or sent something unasked), without waiting.
func peerClosed(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	closed := false
	raw.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = err != syscall.EAGAIN // n == 0 is EOF; n > 0 is bytes nobody asked for
		return true
	})
	return closed
}

// roundTrip writes the request, dialling first if need be, and reads the
// final answer's head; on failure the connection is closed.
func (s *sender) roundTrip() (*http.Response, error) {
	if s.conn == nil {
		conn, err := net.DialTimeout("tcp", s.t.addr, 10*time.Second)
		if err != nil {
			return nil, err
		}
		s.conn, s.r = conn, bufio.NewReader(conn)
	}
	s.conn.SetDeadline(time.Now().Add(10 * time.Second))
	_, err := s.conn.Write(s.req)
	var resp *http.Response
	for err == nil {
		if resp, err = http.ReadResponse(s.r, nil); err != nil || resp.StatusCode >= 200 {
			break
		}
		// An informational answer (100 Continue, 103 Early Hints): the
		// final one follows.
		io.Copy(io.Discard, resp.Body)
	}
	if err != nil {
		s.close()
	}
	return resp, err
}

func (s *sender) close() {
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
}

// maxConns bounds the open-loop mode's connections, as net/http's client
// did with MaxConnsPerHost: a stalled server sees deliveries queue (and
// their latency grow) rather than thousands of connections.
const maxConns = 256

// senderPool lends idle senders to the open-loop mode, which needs as many
// connections as deliveries are in flight, up to maxConns.
type senderPool struct {
	t     *template
	slots chan struct{}
	mu    sync.Mutex
	idle  []*sender
}

func newSenderPool(t *template) *senderPool {
	return &senderPool{t: t, slots: make(chan struct{}, maxConns)}
}

// get waits for a free slot, then lends an idle sender or a new one.
func (p *senderPool) get() *sender {
	p.slots <- struct{}{}
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.idle); n > 0 {
		s := p.idle[n-1]
		p.idle = p.idle[:n-1]
		return s
	}
	return p.t.newSender()
}

func (p *senderPool) put(s *sender) {
	p.mu.Lock()
	p.idle = append(p.idle, s)
	p.mu.Unlock()
	<-p.slots
}

func (p *senderPool) closeAll() {
	for _, s := range p.idle {
		s.close()
	}
}
