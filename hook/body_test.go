package hook

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	gogithub "github.com/google/go-github/v66/github"
)

// sample has a field of every kind a Shape models, and the struct rules
// encoding/json applies.
type sample struct {
	Action   string              `json:"action"`
	Ptr      *string             `json:"ptr,omitempty"`
	N8       int8                `json:"n8"`
	U16      *uint16             `json:"u16"`
	F32      float32             `json:"f32"`
	B        *bool               `json:"b"`
	Any      any                 `json:"any"`
	M        map[string]*int     `json:"m"`
	L        []*inner            `json:"l"`
	T        *gogithub.Timestamp `json:"t"`
	TV       gogithub.Timestamp  `json:"tv"`
	In       *inner              `json:"in"`
	InV      inner               `json:"inv"`
	Self     *sample             `json:"self"`
	Won      int                 `json:"Untagged"` // tagged: wins over the untagged field of its name
	Untagged int
	K        int       `json:"k"` // the Kelvin sign folds to it
	Skip     int       `json:"-"`
	Dash     int       `json:"-,"`
	Bad      int       `json:"a\"b"` // not a valid tag name: the Go name
	Strs     *[]string `json:"strs"`
	unexp    int
}

type inner struct {
	X    *int64 `json:"x"`
	Deep *struct {
		Y *string `json:"y"`
	} `json:"deep"`
	Name string `json:"name"`
}

var samplePaths = []string{"action", "ptr", "in", "in.x", "in.deep.y", "inv.x", "inv.name", "l", "self.action", "self.in.x", "t", "m", "k", "strs"}

var shapes = []struct {
	typ   reflect.Type
	paths []string
}{
	{reflect.TypeFor[sample](), samplePaths},
	// Two fields tagged alike (built here, as vet refuses them in source):
	// neither decodes.
	{reflect.StructOf([]reflect.StructField{{Name: "A", Type: reflect.TypeFor[int](), Tag: `json:"dup"`},
		{Name: "B", Type: reflect.TypeFor[int](), Tag: `json:"dup"`}, {Name: "C", Type: reflect.TypeFor[*string](), Tag: `json:"c"`}}), []string{"c"}},
	{reflect.TypeFor[gogithub.IssueCommentEvent](), []string{"action", "installation.id", "issue.number", "issue.pull_request", "comment", "comment.id", "comment.user.login", "comment.body", "repository.full_name"}},
	{reflect.TypeFor[gogithub.IssuesEvent](), []string{"action", "changes.body", "changes.body.from", "issue", "issue.labels", "sender.login", "sender.type"}},
}

var builtShapes = sync.OnceValue(func() (out []*Shape) {
	for _, sh := range shapes {
		out = append(out, MustShape(sh.typ, sh.paths...))
	}
	return out
})

// leaf is the value at path (JSON names) in v, decoded whole; the zero
// value past a nil pointer.
func leaf(v reflect.Value, path string) reflect.Value {
	for name := range strings.SplitSeq(path, ".") {
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v = reflect.New(v.Type().Elem()).Elem()
			} else {
				v = v.Elem()
			}
		}
		for i := range v.NumField() {
			if tag, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ","); tag == name {
				v = v.Field(i)
				break
			}
		}
	}
	return v
}

// checkScan holds one body's reading to encoding/json's.
func checkScan(t *testing.T, b []byte) {
	for i, sh := range shapes {
		s := builtShapes()[i]
		v := NewBody(b).Scan(s)
		if v.Valid() != json.Valid(b) || v.Object() != isJSONObject(b) {
			t.Fatalf("%v %q: valid %v object %v", sh.typ, b, v.Valid(), v.Object())
		}
		whole := reflect.New(sh.typ)
		err := json.Unmarshal(b, whole.Interface())
		if v.Valid() && v.Fits() != (err == nil) {
			t.Fatalf("%v %q: fits %v, json.Unmarshal says %v", sh.typ, b, v.Fits(), err)
		}
		if !v.Fits() {
			continue
		}
		for _, p := range sh.paths {
			want := leaf(whole.Elem(), p)
			got := reflect.New(want.Type())
			for raw := range v.All(p) {
				if err := json.Unmarshal(raw, got.Interface()); err != nil {
					t.Fatalf("%v %q: %s: %q: %v", sh.typ, b, p, raw, err)
				}
			}
			if !reflect.DeepEqual(got.Elem().Interface(), want.Interface()) {
				t.Fatalf("%v %q: %s is %#v from %q, json.Unmarshal says %#v", sh.typ, b, p, got.Elem().Interface(), v.Last(p), want.Interface())
			}
		}
	}
}

var scanSeeds = []string{
	`{"action":"a","action":null,"ptr":"p","ptr":null,"n8":127,"u16":65535,"f32":1.5,"b":true,"any":[1,{"x":null}],"m":{"a":1,"b":null}}`,
	`{"n8":128}`, `{"n8":-129}`, `{"u16":-1}`, `{"f32":1e39}`, `{"any":1e400}`, `{"any":{"a":[1e400]}}`, `{"m":{"a":"x"}}`, `{"m":[]}`,
	`{"in":{"x":1},"in":{"deep":{"y":"a"}},"in":null,"in":{"x":2}}`, `{"inv":{"x":1},"inv":null,"inv":{"name":"n"}}`,
	`{"l":[{"x":1},{"x":2}],"l":[{"name":"a"}],"l":[{},{}]}`, `{"l":[null,{}],"l":null,"l":[{"x":3}]}`, `{"l":{}}`,
	`{"t":"2026-01-02T03:04:05Z","tv":1700000000}`, `{"t":"soon"}`, `{"tv":null}`, `{"t":null}`, `{"t":{}}`,
	`{"self":{"action":"x","self":{"in":{"x":1}}},"self":{"in":{"x":2}}}`, `{"self":null}`,
	`{"dup":"x"}`, `{"Untagged":"x"}`, `{"untagged":1}`, `{"\u212a":1}`, `{"K":"x"}`, `{"-":"x"}`, `{"Skip":"x"}`, `{"Bad":"x"}`, `{"unexp":"x"}`,
	`{"\u0061ction":"x"}`, `{"ACTION":1}`, `{"strs":["a",null]}`, `{"strs":[1]}`, `{"strs":null}`,
	`null`, `[]`, `"x"`, `1`, ` {"action":"x"} `, `{"action":"x"`, `{"action":"\ud83d\ude00\u00e9\n"}`, "{\"action\":\"\xff\"}", "{\"act\xffion\":1}",
	`{"action":"created","comment":{"id":1,"user":{"login":"a","type":"User"},"created_at":"2026-01-02T03:04:05Z"},"issue":{"number":2,"pull_request":{}},"installation":{"id":3},"repository":{"full_name":"a/b"}}`,
	`{"comment":{"id":1},"comment":{"body":"b"},"comment":{"user":null}}`, `{"issue":{"pull_request":{}},"issue":{"pull_request":null}}`,
	`{"changes":{"body":{"from":"x"}},"changes":{"body":{}}}`, `{"issue":{"labels":[{"name":"a"},{"name":"b"}]},"issue":{"labels":[{}]},"issue":{"labels":[{},{}]}}`,
}

func TestScanAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range scanSeeds {
		checkScan(t, []byte(s))
	}
	for _, depth := range []int{maxJSONDepth - 1, maxJSONDepth} { // the object is one level, the member's value the next
		for _, member := range []string{"any", "m", "in", "nope"} {
			checkScan(t, []byte(`{"`+member+`":`+strings.Repeat("[", depth)+strings.Repeat("]", depth)+`}`))
			checkScan(t, []byte(`{"`+member+`":`+strings.Repeat(`{"a":`, depth)+"1"+strings.Repeat("}", depth)+`}`))
		}
	}
	for _, b := range webhookExamples(t) {
		checkScan(t, b)
	}
}

// FuzzScan holds a Body's one reading to encoding/json: its validity, its
// verdict on decoding into each type, and each path's values.
func FuzzScan(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkScan(t, b) })
}

func TestNewShapeRefusesWhatItDoesNotModel(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[struct{ gogithub.Label }](),
		reflect.TypeFor[struct {
			N int `json:"n,string"`
		}](),
		reflect.TypeFor[struct{ B []byte }](),
		reflect.TypeFor[struct{ A [2]int }](),
		reflect.TypeFor[struct{ N json.Number }](),
		reflect.TypeFor[struct{ M map[int]string }](),
		reflect.TypeFor[struct{ E error }](),
		reflect.TypeFor[struct{ P **int }](),
		reflect.TypeFor[struct{ C chan int }](),
		reflect.TypeFor[struct{ I interface{ M() } }](),
	} {
		if _, err := NewShape(typ); err == nil {
			t.Errorf("%v: no error", typ)
		}
	}
	for _, path := range []string{"nope", "action.x", "l.x", "in.nope", "action,action"} {
		if _, err := NewShape(reflect.TypeFor[sample](), strings.Split(path, ",")...); err == nil {
			t.Errorf("path %q: no error", path)
		}
	}
	if _, err := NewShape(reflect.TypeFor[sample](), make([]string, MaxPaths+1)...); err == nil {
		t.Error("too many paths: no error")
	}
}

func TestABodyIsReadForOneShape(t *testing.T) {
	raw := []byte(`{"action":"x"}`)
	b := NewBody(raw)
	a := MustShape(reflect.TypeFor[sample](), "action")
	if v := b.Scan(a); string(Text(v.Last("action"))) != "x" {
		t.Fatalf("action %q", v.Last("action"))
	}
	raw[0] = ' ' // no longer JSON: only a second reading would say so
	if !b.Scan(nil).Valid() || !b.Scan(a).Valid() {
		t.Fatal("a second Scan read the body again")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a Scan for another shape did not panic")
		}
	}()
	b.Scan(MustShape(reflect.TypeFor[sample](), "action"))
}

// BenchmarkScan compares the reading of a real issues.labeled delivery
// for IssuesEvent with the syntax check alone, with encoding/json.Valid,
// and with what it replaced.
func BenchmarkScan(b *testing.B) {
	payload, err := os.ReadFile("../testdata/webhooks/issues.labeled.json")
	if err != nil {
		b.Fatal(err)
	}
	shape := MustShape(reflect.TypeFor[gogithub.IssuesEvent](), "action", "changes.body", "issue", "issue.labels", "sender.login")
	var body Body
	for _, c := range []struct {
		name string
		run  func()
	}{
		{"shape", func() { body.reset(payload); body.Scan(shape) }},
		{"syntax", func() { body.reset(payload); body.Scan(nil) }},
		{"encoding-json-valid", func() { json.Valid(payload) }},
		{"unmarshal-action", func() {
			var ev struct{ Action string }
			json.Unmarshal(payload, &ev)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			for b.Loop() {
				c.run()
			}
		})
	}
}

func TestTimestampTakesWhatUnmarshalJSONTakes(t *testing.T) {
	inputs := []string{`0`, `-1`, `1700000000`, `1.5`, `1e3`, `-0`, `99999999999999999999`, `null`, `{}`, `[]`, `true`, `"x"`, `""`,
		`"2019-05-15T15:20:18.123Z"`, `"2019-05-15T15:20:18+02:00"`, `"2019-05-15 15:20:18Z"`, `"2019-05-15T15:20:18z"`, `"1700000000"`}
	for _, y := range []string{"0000", "1900", "2000", "2019", "2024", "2100", "9999", "-001", "20a9", "+019"} {
		for _, mo := range []string{"00", "01", "02", "04", "12", "13", "1a", "-1"} {
			for _, d := range []string{"00", "01", "28", "29", "30", "31", "32", " 1"} {
				for _, hms := range []string{"00:00:00", "23:59:59", "24:00:00", "12:60:00", "12:00:60", "1:00:000", "-1:00:00", "12:0a:00"} {
					inputs = append(inputs, `"`+y+"-"+mo+"-"+d+"T"+hms+`Z"`)
				}
			}
		}
	}
	for _, in := range inputs {
		var ts gogithub.Timestamp
		if got, want := timestampTakes([]byte(in)), ts.UnmarshalJSON([]byte(in)) == nil; got != want {
			t.Errorf("%s: takes %v, UnmarshalJSON says %v", in, got, want)
		}
	}
}
