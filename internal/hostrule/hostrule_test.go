package hostrule

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestRuleAllows(t *testing.T) {
	mustNew := func(public, addr string) Rule {
		r, err := New(public, addr)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	local := mustNew("http://localhost:8080", ":8080")
	proxied := mustNew("https://Pitcrew.Example.com/", ":8080")
	odd := mustNew("http://pitcrew.example.com:9000", "127.0.0.1:8080")
	v6 := mustNew("http://[::1]:8080", "[::1]:8080")
	for _, c := range []struct {
		name string
		rule Rule
		host string
		conn int // the connection's local port, 0: unknown
		want bool
	}{
		{"localhost", local, "localhost:8080", 0, true},
		{"127.0.0.1", local, "127.0.0.1:8080", 0, true},
		{"[::1]", local, "[::1]:8080", 0, true},
		{"expanded ::1", local, "[0:0:0:0:0:0:0:1]:8080", 0, true},
		{"uppercase", local, "LOCALHOST:8080", 0, true},
		{"trailing dot", local, "localhost.:8080", 0, true},
		{"rebound name", local, "attacker.example:8080", 0, false},
		{"rebound name, no port", local, "attacker.example", 0, false},
		{"loopback, other port", local, "localhost:9090", 0, false},
		{"loopback, no port", local, "localhost", 0, false},
		{"other loopback address", local, "127.0.0.2:8080", 0, false},
		{"unbracketed ::1", local, "::1:8080", 0, false},
		{"bracketed name", local, "[localhost]:8080", 0, false},
		{"missing Host", local, "", 0, false},
		{"empty name", local, ":8080", 0, false},
		{"empty port", local, "localhost:", 0, false},
		{"signed port", local, "localhost:+8080", 0, false},
		{"port out of range", local, "localhost:108080", 0, false},
		{"junk after port", local, "localhost:8080/x", 0, false},
		{"subdomain of localhost", local, "evil.localhost:8080", 0, false},
		{"public host, implicit https port", proxied, "pitcrew.example.com", 0, true},
		{"public host, explicit 443", proxied, "pitcrew.example.com:443", 0, true},
		{"public host, uppercase, trailing dot", proxied, "PITCREW.example.COM.", 0, true},
		{"public host, wrong port", proxied, "pitcrew.example.com:8080", 0, false},
		{"public host's sibling", proxied, "pitcrew.example.com.attacker.example", 0, false},
		{"loopback beside a public host", proxied, "127.0.0.1:8080", 0, true},
		{"public host, explicit port", odd, "pitcrew.example.com:9000", 0, true},
		{"public host, port omitted", odd, "pitcrew.example.com", 0, false},
		{"listening port from PITCREW_ADDR", odd, "localhost:8080", 0, true},
		{"public port is not the listening port", odd, "localhost:9000", 0, false},
		{"IPv6 public URL", v6, "[::1]:8080", 0, true},
		{"zero rule takes the connection's port", Rule{}, "127.0.0.1:41234", 41234, true},
		{"zero rule, other port", Rule{}, "127.0.0.1:41235", 41234, false},
		{"zero rule, no port known", Rule{}, "127.0.0.1:41234", 0, false},
		{"zero rule, rebound name", Rule{}, "attacker.example:41234", 41234, false},
		{"port 0 takes the connection's port", mustNew("http://localhost:8080", ":0"), "localhost:5555", 5555, true},
	} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Host = c.host
		if c.conn != 0 {
			req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: c.conn}))
		}
		if got := c.rule.Allows(req); got != c.want {
			t.Errorf("%s: Host %q allowed = %v, want %v", c.name, c.host, got, c.want)
		}
	}
}

func TestNewRefusesAURLWithoutHost(t *testing.T) {
	for _, u := range []string{"", "localhost:8080", "ftp://pitcrew.example.com", "http://", "http://x:port"} {
		r, err := New(u, ":8080")
		if err == nil {
			t.Errorf("New(%q) accepted", u)
		}
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Host = "localhost:8080"
		if !r.Allows(req) {
			t.Errorf("New(%q): the loopback names are refused too", u)
		}
	}
}

func TestCheckAnswersMisdirected(t *testing.T) {
	r, _ := New("http://localhost:8080", ":8080")
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Host = "attacker.example:8080"
	rec := httptest.NewRecorder()
	if r.Check(rec, req) || rec.Code != http.StatusMisdirectedRequest {
		t.Fatalf("Check let it through or answered %d", rec.Code)
	}
}
