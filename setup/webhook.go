package setup

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// cgnat is 100.64.0.0/10, the shared address space of carrier-grade NAT
// and of overlay networks such as Tailscale: private, though net.IP's
// IsPrivate does not say so.
var cgnat = &net.IPNet{IP: net.IPv4(100, 64, 0, 0), Mask: net.CIDRMask(10, 32)}

// Unreachable says why the internet cannot reach webhookURL, "" when it
// may: an address on a loopback, private, shared or link-local network,
// or a name only this machine or its network resolves (localhost, .local,
// .internal, .lan, .home.arpa, a name without a dot). It resolves nothing,
// so a public name that points at a private address passes.
func Unreachable(webhookURL string) string {
	u, err := url.Parse(webhookURL)
	if err != nil || u.Hostname() == "" {
		return fmt.Sprintf("%q is not a URL with a host", webhookURL)
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if ip := net.ParseIP(host); ip != nil {
		switch {
		case ip.IsLoopback():
			return host + " is a loopback address: only this machine reaches it"
		case ip.IsUnspecified():
			return host + " is no address anyone can connect to"
		case ip.IsLinkLocalUnicast():
			return host + " is a link-local address: only its own network segment reaches it"
		case ip.IsPrivate() || cgnat.Contains(ip):
			return host + " is a private address: only its own network reaches it"
		}
		return ""
	}
	switch {
	case host == "localhost" || strings.HasSuffix(host, ".localhost"):
		return host + " is this machine's own name"
	case !strings.Contains(host, "."):
		return host + " is a name without a domain: only this machine or its network resolves it"
	}
	for _, local := range []string{".local", ".internal", ".lan", ".home.arpa", ".intranet", ".corp"} {
		if strings.HasSuffix(host, local) {
			return fmt.Sprintf("%s is a %s name: only its own network resolves it", host, local)
		}
	}
	return ""
}

// hook is the webhook URL of a manifest BuildManifest made.
func hook(manifest []byte) string {
	var m struct {
		Hook struct {
			URL string `json:"url"`
		} `json:"hook_attributes"`
	}
	_ = json.Unmarshal(manifest, &m)
	return m.Hook.URL
}

// WebhookWarning is what to tell the person registering, in a terminal,
// when the internet cannot reach the webhook URL of manifest; "" when it
// may.
func WebhookWarning(manifest []byte) string {
	hookURL := hook(manifest)
	why := Unreachable(hookURL)
	if why == "" {
		return ""
	}
	return fmt.Sprintf("the app would send its webhooks to %s, which GitHub.com cannot reach (%s), so no event would arrive. "+
		"On a laptop, create a channel on https://smee.io, set PITCREW_WEBHOOK_PROXY_URL to its URL and restart pitcrew: "+
		"GitHub then posts to the channel and pitcrew reads it itself. On a server, set PITCREW_PUBLIC_URL to the address "+
		"GitHub reaches it at. (A GitHub Enterprise Server on the same network may reach it as it is.)", hookURL, why)
}

// startData is what the start page shows besides fields: the warning of
// an unreachable webhook URL.
func (s *Server) startData(fields map[string]string) map[string]string {
	if hookURL := hook(s.Manifest); Unreachable(hookURL) != "" {
		fields["HookURL"], fields["HookWhy"] = hookURL, Unreachable(hookURL)
	}
	return fields
}
