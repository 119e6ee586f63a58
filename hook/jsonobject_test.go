package hook

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// isJSONObject is the intake's check of a body it stores.
func isJSONObject(b []byte) bool {
	var v View
	v.scan(b, nil)
	return v.Object()
}

// webhookExamples are the bodies of testdata/webhooks, by file name.
func webhookExamples(t *testing.T) map[string][]byte {
	t.Helper()
	files, _ := filepath.Glob("../testdata/webhooks/*.json")
	if len(files) == 0 {
		t.Fatal("no webhook examples under testdata/webhooks")
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = b
	}
	return out
}

func TestIsJSONObjectAcceptsEveryWebhookExample(t *testing.T) {
	for f, b := range webhookExamples(t) {
		if !isJSONObject(b) {
			t.Errorf("%s: rejected a real delivery", f)
		}
	}
}

func TestIsJSONObject(t *testing.T) {
	nested := func(n int) string { return `{"a":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}` }
	for _, c := range []struct {
		body string
		want bool
	}{
		{`{}`, true},
		{`{"a":[1,-2.5e3,{"b":null}],"c":"\u00e9\n\"}{["}`, true},
		{`{"a":1} `, true},
		{"", false},
		{` {}`, false}, // the first byte must open the object
		{`[]`, false},
		{`"text"`, false},
		{`{"a":1`, false},
		{`{"a":1}}`, false},
		{`{"a":1} {}`, false},
		{`{"a":01}`, false},
		{`{"a":"` + "\x01" + `"}`, false},
		{`{"a":"\u12"}`, false},
		{`{'a':1}`, false},
		{`payload=%7B%7D`, false}, // a form-encoded delivery
		{nested(maxJSONDepth), true},
		{nested(maxJSONDepth + 1), false},
	} {
		if got := isJSONObject([]byte(c.body)); got != c.want {
			t.Errorf("isJSONObject(%.40q) = %v, want %v", c.body, got, c.want)
		}
		if std := json.Valid([]byte(c.body)) && strings.HasPrefix(c.body, "{"); std != c.want {
			t.Errorf("the table disagrees with encoding/json on %.40q", c.body)
		}
	}
}

func TestPlainWordAgreesWithPlainStringByte(t *testing.T) {
	check := func(word []byte) {
		want := true
		for _, c := range word {
			want = want && plainStringByte[c]
		}
		if got := plainWord(binary.LittleEndian.Uint64(word)); got != want {
			t.Fatalf("plainWord(%q) = %v, want %v", word, got, want)
		}
	}
	for c := range 256 {
		for pos := range 8 {
			word := []byte("abcdefgh")
			word[pos] = byte(c)
			check(word)
		}
		check(bytes.Repeat([]byte{byte(c)}, 8))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	word := make([]byte, 8)
	for range 1_000_000 {
		binary.LittleEndian.PutUint64(word, rng.Uint64())
		check(word)
	}
}

// FuzzIsJSONObject checks the fast check against encoding/json, which the
// worker decodes with: the two must agree on every input.
func FuzzIsJSONObject(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,{"b":"\\\""}]}`, `{"a":"\ud83d\ude00"}`, `{"a":1e}`, "{\"a\":\"\xff\"}", `{"a":[}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want := len(b) > 0 && b[0] == '{' && json.Valid(b)
		if got := isJSONObject(b); got != want {
			t.Fatalf("isJSONObject(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}
