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
	"strings"
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
}

// Run reads the channel until ctx is done, reconnecting after a drop
// (from half a second, growing to a minute between attempts).
func (r *Relay) Run(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL, http.NoBody)
	if err != nil {
		return err
	}
	client := &sse.Client{HTTPClient: r.Client, Backoff: sse.Backoff{InitialInterval: 500 * time.Millisecond, Multiplier: 2, Jitter: 0.2, MaxInterval: time.Minute},
		OnRetry: func(err error, wait time.Duration) {
			r.Log.Warn().Err(err).Dur("retry_in", wait).Msg("the webhook relay channel dropped; reconnecting")
		}}
	if client.HTTPClient == nil {
		client.HTTPClient = &http.Client{}
	}
	conn := client.NewConnection(req)
	conn.Buffer(make([]byte, 0, 64<<10), MaxEvent)
	conn.SubscribeMessages(func(ev sse.Event) { r.deliver(ctx, ev.Data) })
	r.Log.Info().Str("channel", r.URL).Msg("reading webhooks from the relay channel")
	err = conn.Connect()
	if ctx.Err() != nil {
		return nil
	}
	return err
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
