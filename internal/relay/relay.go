// Package relay reads a webhook relay channel (a smee.io URL, set as
// PITCREW_WEBHOOK_PROXY_URL) and hands each delivery to pitcrew's own
// GitHub intake, as if GitHub had posted it, so a laptop gets its webhooks
// without anyone running npx smee-client.
//
// The intake checks the signature as always, on the bytes the channel
// carries: a smee channel sends each delivery's body as JSON the relay
// parsed and wrote again, which is what smee-client forwards too. A relay
// that wrote it otherwise than GitHub signed it gets a 401, said in the
// log, and nothing is stored.
package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	sse "github.com/tmaxmax/go-sse"
)

// MaxEvent bounds one event of the channel: a delivery over the intake's
// own bound (5 MiB) would be refused there anyway.
const MaxEvent = 6 << 20

// forwarded are the headers of a delivery the channel carries and the
// intake reads.
var forwarded = []string{"X-GitHub-Event", "X-GitHub-Delivery", "X-Hub-Signature-256", "X-GitHub-Hook-ID", "X-GitHub-Hook-Installation-Target-ID", "User-Agent"}

// Relay reads one channel.
type Relay struct {
	URL    string       // the channel (PITCREW_WEBHOOK_PROXY_URL)
	Intake http.Handler // pitcrew's routes; each delivery is posted to Path
	Path   string       // the GitHub route: /api/github/hook
	Client *http.Client // nil: a client without a timeout (the stream stays open)
	Log    zerolog.Logger
	// Idle is how long the channel may say nothing (smee sends a ping
	// every half minute) before the connection is taken for dead and made
	// again; 0 means two minutes.
	Idle time.Duration
}

// Run reads the channel until ctx is done, whatever it answers: a drop, an
// error page or a silent connection is followed by a new connection, after
// a wait growing from half a second to a minute.
func (r *Relay) Run(ctx context.Context) error {
	u, err := url.Parse(r.URL)
	if err != nil {
		return err
	}
	host := u.Host // the path is the channel: whoever knows it reads the deliveries
	r.Log.Info().Str("relay", host).Msg("reading webhooks from the relay channel")
	wait := 500 * time.Millisecond
	for ctx.Err() == nil {
		heard, err := r.connect(ctx)
		if ctx.Err() != nil {
			break
		}
		if heard {
			wait = 500 * time.Millisecond
		}
		r.Log.Warn().Err(err).Str("relay", host).Dur("retry_in", wait).Msg("the webhook relay channel dropped; reconnecting")
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Minute)
	}
	return nil
}

// connect reads the channel on one connection until it ends, or says
// nothing for Idle; heard is whether any event came.
func (r *Relay) connect(ctx context.Context) (heard bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL, http.NoBody)
	if err != nil {
		return false, err
	}
	client := &sse.Client{HTTPClient: r.Client, Backoff: sse.Backoff{MaxRetries: -1}} // Run does the retrying
	if client.HTTPClient == nil {
		client.HTTPClient = &http.Client{}
	}
	idle := r.Idle
	if idle <= 0 {
		idle = 2 * time.Minute
	}
	var got atomic.Bool
	alive := make(chan struct{}, 1)
	conn := client.NewConnection(req)
	conn.Buffer(make([]byte, 0, 64<<10), MaxEvent)
	conn.SubscribeToAll(func(ev sse.Event) {
		select {
		case alive <- struct{}{}:
		default:
		}
		if ev.Type == "" || ev.Type == "message" {
			r.deliver(ctx, ev.Data)
		}
	})
	go func() {
		t := time.NewTimer(idle)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-alive:
				got.Store(true)
				t.Reset(idle)
			case <-t.C:
				cancel() // silent: take the connection for dead
				return
			}
		}
	}()
	err = conn.Connect()
	if err == nil || errors.Is(err, context.Canceled) {
		err = errors.New("the channel closed or went silent")
	}
	return got.Load(), err
}

// deliver posts one event's delivery to the intake and logs its answer.
func (r *Relay) deliver(ctx context.Context, data string) {
	req, err := Request(ctx, r.Path, []byte(data))
	if err != nil {
		r.Log.Warn().Err(err).Msg("skipping a relay event that is not a delivery")
		return
	}
	rec := httptest.NewRecorder()
	r.Intake.ServeHTTP(rec, req)
	log := r.Log.With().Str("delivery", req.Header.Get("X-GitHub-Delivery")).Str("event", req.Header.Get("X-GitHub-Event")).Int("status", rec.Code).Logger()
	switch {
	case rec.Code == http.StatusUnauthorized:
		log.Warn().Msg("the relayed delivery's signature does not match its body: the relay wrote the JSON otherwise than GitHub signed it, or the webhook secret differs")
	case rec.Code >= 300:
		log.Warn().Str("answer", rec.Body.String()).Msg("the intake refused a relayed delivery")
	default:
		log.Debug().Msg("relayed a delivery")
	}
}

// Request makes the intake's request of one channel event: its body's
// bytes as the event carries them, its GitHub headers.
func Request(ctx context.Context, path string, data []byte) (*http.Request, error) {
	var ev map[string]json.RawMessage
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, err
	}
	body := ev["body"]
	if len(body) == 0 || body[0] != '{' {
		return nil, errors.New("relay: the event carries no JSON body")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.RemoteAddr = "127.0.0.1:0" // the relay, on this machine
	req.Host = "localhost"
	for _, h := range forwarded {
		var v string
		if raw, ok := ev[http.CanonicalHeaderKey(h)]; ok {
			_ = json.Unmarshal(raw, &v)
		}
		if raw, ok := ev[strings.ToLower(h)]; ok && v == "" {
			_ = json.Unmarshal(raw, &v)
		}
		if v != "" {
			req.Header.Set(h, v)
		}
	}
	if req.Header.Get("X-GitHub-Event") == "" {
		return nil, errors.New("relay: the event names no X-GitHub-Event")
	}
	return req, nil
}
