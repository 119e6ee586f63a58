// Package hostrule decides whether a request was addressed to pitcrew
// itself. A page on another site whose name is rebound to 127.0.0.1 reaches
// pitcrew from a loopback address, but the browser still sends that site's
// name in Host: the pages that trust loopback connections (setup, the
// token-less status page) check Host with this rule before anything else.
package hostrule

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Rule is the set of Host values pitcrew answers to: localhost, 127.0.0.1
// and [::1] on its listening port, and the host and port of its public URL
// when it has one. The zero Rule has no public host and takes the port the
// request arrived on as the listening port.
type Rule struct {
	public     string // lower case, no trailing dot, IPs in canonical form
	publicPort int    // explicit, or the scheme's default
	implicit   bool   // publicPort is the scheme's default: Host may omit it
	port       int    // 0: the connection's local port
}

// New is the rule for PITCREW_PUBLIC_URL and PITCREW_ADDR. A listen address
// without a usable port (":0") defers to the connection's local port. It
// fails on a public URL that is not http(s) with a host; the rule it then
// returns allows the loopback names only.
func New(publicURL, listenAddr string) (Rule, error) {
	var r Rule
	if _, p, err := net.SplitHostPort(listenAddr); err == nil {
		r.port, _ = net.LookupPort("tcp", p)
	}
	u, err := url.Parse(publicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return r, errors.New("PITCREW_PUBLIC_URL is not an http(s) URL with a host")
	}
	r.public = canonical(u.Hostname())
	r.publicPort = defaultPort(u.Scheme)
	if u.Port() != "" {
		if r.publicPort, err = strconv.Atoi(u.Port()); err != nil {
			return Rule{port: r.port}, errors.New("PITCREW_PUBLIC_URL has a bad port")
		}
	}
	r.implicit = r.publicPort == defaultPort(u.Scheme)
	return r, nil
}

// Allows reports whether r's Host is one of the rule's.
func (h Rule) Allows(r *http.Request) bool {
	return h.allows(r.Host, localPort(r))
}

// Check answers 421 Misdirected Request, and returns false, when r's Host
// is not one of the rule's.
func (h Rule) Check(w http.ResponseWriter, r *http.Request) bool {
	if h.Allows(r) {
		return true
	}
	port := "its port"
	if p := h.listenPort(localPort(r)); p != 0 {
		port = "port " + strconv.Itoa(p)
	}
	msg := fmt.Sprintf("pitcrew answers only requests addressed to it: PITCREW_PUBLIC_URL's host, or localhost, 127.0.0.1 or [::1] on %s (this one was for %q)", port, r.Host)
	if h.public == "" {
		msg = fmt.Sprintf("this page answers only requests addressed to localhost, 127.0.0.1 or [::1] on %s (this one was for %q)", port, r.Host)
	}
	http.Error(w, msg, http.StatusMisdirectedRequest)
	return false
}

// FromLoopback reports whether r came from a loopback address.
func FromLoopback(r *http.Request) bool {
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (h Rule) allows(hostport string, connPort int) bool {
	name, port, ok := split(hostport)
	if !ok || name == "" {
		return false
	}
	name = canonical(name)
	if h.public != "" && name == h.public && (port == h.publicPort || port == 0 && h.implicit) {
		return true
	}
	if port == 0 {
		port = defaultPort("http") // pitcrew itself serves plain HTTP
	}
	listen := h.listenPort(connPort)
	return listen != 0 && port == listen && (name == "localhost" || name == "127.0.0.1" || name == "::1")
}

func (h Rule) listenPort(connPort int) int {
	if h.port != 0 {
		return h.port
	}
	return connPort
}

// split parses a Host header: name, port (0 when absent) and whether it is
// well formed. An IPv6 address must be bracketed.
func split(hostport string) (name string, port int, ok bool) {
	rest := ""
	if strings.HasPrefix(hostport, "[") {
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return "", 0, false
		}
		name, rest = hostport[1:end], hostport[end+1:]
		if net.ParseIP(name) == nil {
			return "", 0, false
		}
	} else {
		name = hostport
		if i := strings.IndexByte(hostport, ':'); i >= 0 {
			name, rest = hostport[:i], hostport[i:]
		}
	}
	if rest == "" {
		return name, 0, true
	}
	if !strings.HasPrefix(rest, ":") {
		return "", 0, false
	}
	port, err := strconv.Atoi(rest[1:])
	if err != nil || port <= 0 || port > 65535 || rest[1] == '+' || rest[1] == '-' {
		return "", 0, false
	}
	return name, port, true
}

func canonical(name string) string {
	if ip := net.ParseIP(name); ip != nil {
		return ip.String()
	}
	return strings.TrimSuffix(strings.ToLower(name), ".")
}

func defaultPort(scheme string) int {
	if scheme == "https" {
		return 443
	}
	return 80
}

func localPort(r *http.Request) int {
	addr, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if addr == nil {
		return 0
	}
	_, p, _ := net.SplitHostPort(addr.String())
	port, _ := strconv.Atoi(p)
	return port
}
