package queue

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hibiken/asynq"
	"github.com/klauspost/compress/s2"
)

// A task stored before compression (the body as JSON) still decodes, so a
// replica rolled over to this version runs what older ones queued.
func TestDecodeDeliveryReadsTasksStoredAsJSON(t *testing.T) {
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

// During a rolling deploy or a rollback, a replica older than the
// compression (it handles only TaskGitHubDeliveryJSON) must not take a
// compressed delivery: it would read it as JSON and give it up for good.
// asynq's mux matches task types by their longest registered prefix.
func TestAReplicaBeforeTheCompressionLeavesCompressedDeliveries(t *testing.T) {
	old := asynq.NewServeMux()
	old.HandleFunc(TaskGitHubDeliveryJSON, func(context.Context, *asynq.Task) error { return nil })
	old.HandleFunc(TaskDashboard, func(context.Context, *asynq.Task) error { return nil })
	if _, pattern := old.Handler(DeliveryTask("id", nil)); pattern != "" {
		t.Fatalf("an old replica handles %s as %s", TaskGitHubDelivery, pattern)
	}
}

// Every webhook sample, and bodies at the edges (empty, newlines, not
// compressible, at the intake's bound), come back as they went in.
func TestADeliveryComesBackAsItWasStored(t *testing.T) {
	samples, err := filepath.Glob("../testdata/webhooks/*.json")
	if err != nil || len(samples) < 10 {
		t.Fatalf("webhook samples: %v, %d", err, len(samples))
	}
	bodies := map[string][]byte{
		"empty":         {},
		"newlines":      []byte("{\n\"a\":\n1}\n"),
		"random":        randomBytes(64 << 10),
		"at the bound":  append(append([]byte(`{"pad":"`), bytes.Repeat([]byte("x"), MaxDeliveryBody-10)...), '"', '}'),
		"mark in front": {compressedMark, '{', '}'},
	}
	for _, f := range samples {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		bodies[filepath.Base(f)] = b
	}
	for name, body := range bodies {
		p := AppendDelivery([]byte("left as it was"), "issues", "72d3162e-1", body)
		event, id, got, err := DecodeDelivery(bytes.TrimPrefix(p, []byte("left as it was")))
		if err != nil || event != "issues" || id != "72d3162e-1" || !bytes.Equal(got, body) {
			t.Errorf("%s: %q %q, %d bytes back of %d, %v", name, event, id, len(got), len(body), err)
		}
		if !bytes.HasPrefix(p, []byte("left as it was")) {
			t.Errorf("%s: what dst held was overwritten", name)
		}
	}
}

// What the compression is for: Redis is handed a fraction of the body.
func TestAStoredDeliveryIsAFractionOfItsBody(t *testing.T) {
	body, err := os.ReadFile("../testdata/webhooks/issues.labeled.json")
	if err != nil {
		t.Fatal(err)
	}
	if p := AppendDelivery(nil, "issues", "72d3162e", body); len(p) > len(body)/3 {
		t.Fatalf("a %d-byte delivery is stored in %d bytes", len(body), len(p))
	}
}

// A damaged task is an error, and one that declares a body over the bound
// is refused before a body that size is allocated.
func TestADamagedDeliveryIsAnError(t *testing.T) {
	good := AppendDelivery(nil, "issues", "id", []byte(`{"action":"labeled","number":1}`))
	huge := append([]byte("issues\nid\n\x00"), 0xff, 0xff, 0xff, 0xff, 0x0f) // uvarint length 4 GiB
	for name, p := range map[string][]byte{
		"truncated":  good[:len(good)-3],
		"garbage":    []byte("issues\nid\n\x00\x05garbage"),
		"only marks": []byte("issues\nid\n\x00"),
		"too large":  huge,
		"over bound": append([]byte("issues\nid\n\x00"), s2.Encode(nil, make([]byte, MaxDeliveryBody+1))...),
	} {
		if _, _, body, err := DecodeDelivery(p); err == nil {
			t.Errorf("%s: decoded %d bytes", name, len(body))
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	DecodeDelivery(huge)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Errorf("refusing a declared 4 GiB allocated %d bytes", n)
	}
}

func randomBytes(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// FuzzDecodeDelivery: any payload decodes or is an error, never a panic or
// a body over the bound; any delivery stored comes back whole.
func FuzzDecodeDelivery(f *testing.F) {
	body, _ := os.ReadFile("../testdata/webhooks/issue_comment.created.json")
	f.Add(AppendDelivery(nil, "issue_comment", "72d3162e", body))
	f.Add([]byte("issues\n72d3162e\n{\"a\":1}"))
	f.Add([]byte("issues\nid\n\x00\xff\xff\xff\xff\x0f"))
	f.Fuzz(func(t *testing.T, p []byte) {
		event, id, got, err := DecodeDelivery(p)
		if err != nil {
			return
		}
		if len(got) > MaxDeliveryBody && p[len(event)+len(id)+2] == compressedMark {
			t.Fatalf("decoded %d bytes", len(got))
		}
		if strings.ContainsRune(event, '\n') || strings.ContainsRune(id, '\n') {
			t.Fatalf("%q %q", event, id)
		}
		if len(got) > 0 && got[0] == compressedMark {
			return // not a JSON body; the intake stores none such
		}
		again := AppendDelivery(nil, event, id, got)
		e2, i2, b2, err := DecodeDelivery(again)
		if err != nil || e2 != event || i2 != id || !bytes.Equal(b2, got) {
			t.Fatalf("stored again: %q %q %d bytes of %d, %v", e2, i2, len(b2), len(got), err)
		}
	})
}
