package hook

import (
	"net/http"
	"strings"

	"github.com/rs/zerolog"
)

// RequireSHA256 refuses deliveries signed only with the legacy SHA-1
// header, which go-github would otherwise accept.
func RequireSHA256(next http.Handler, log zerolog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// go-github takes the hash from the value's prefix, so "sha1=..."
		// here would be checked as SHA-1.
		if !strings.HasPrefix(r.Header.Get("X-Hub-Signature-256"), "sha256=") {
			log.Warn().Str("delivery", r.Header.Get("X-GitHub-Delivery")).Msg("rejected a delivery without a SHA-256 signature")
			http.Error(w, "missing X-Hub-Signature-256 (sha256=...)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
