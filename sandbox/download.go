package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// MaxArtifact bounds an artifact download.
const MaxArtifact = 8 << 20

// ErrArtifactCut comes with the first MaxArtifact bytes of an artifact
// that is longer: a reader must say the rest was not read.
var ErrArtifactCut = fmt.Errorf("the artifact is longer than pitcrew reads (%d MiB): cut there", MaxArtifact>>20)

// Download fetches an artifact listed by a session read. The API key goes
// only to the sandbox API's own origin (scheme, host and port), and only
// what that origin serves is returned: an artifact URL elsewhere, or a
// redirect elsewhere, is refused rather than handed the key or trusted.
// An artifact over MaxArtifact comes back cut, with ErrArtifactCut.
func (c *Client) Download(ctx context.Context, artifactURL string) ([]byte, error) {
	base, err := url.Parse(c.cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(artifactURL)
	if err != nil || !sameOrigin(u, base) {
		return nil, &PermanentError{Status: 400, Detail: "artifact URL is not on the sandbox API's origin"}
	}
	var out []byte
	for attempt := 0; attempt < c.cfg.MaxAttempts; attempt++ {
		if attempt > 0 {
			if err := sleep(ctx, c.delay(attempt, err)); err != nil {
				return nil, err
			}
		}
		out, err = c.download(ctx, u.String(), base)
		if err == nil || IsPermanent(err) || errors.Is(err, ErrArtifactCut) {
			return out, err
		}
	}
	return nil, fmt.Errorf("sandbox: artifact download gave up after %d attempts: %w", c.cfg.MaxAttempts, err)
}

func (c *Client) download(ctx context.Context, u string, base *url.URL) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	// net/http keeps the Authorization header on a redirect to another port
	// of the same host, and follows redirects to other hosts.
	hc := *c.cfg.HTTPClient
	hc.CheckRedirect = func(next *http.Request, via []*http.Request) error {
		if !sameOrigin(next.URL, base) {
			return errOffOrigin
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	resp, err := hc.Do(req)
	if errors.Is(err, errOffOrigin) {
		return nil, &PermanentError{Status: 400, Detail: "artifact download redirected off the sandbox API's origin"}
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox: downloading artifact: %w", errors.Unwrap(err))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
		data, err := io.ReadAll(io.LimitReader(resp.Body, MaxArtifact+1))
		if err == nil && len(data) > MaxArtifact {
			return data[:MaxArtifact], ErrArtifactCut
		}
		return data, err
	case resp.StatusCode == 429 || resp.StatusCode >= 500:
		return nil, &retryable{status: resp.StatusCode, after: retryAfter(resp.Header)}
	default:
		return nil, &PermanentError{Status: resp.StatusCode, Detail: "artifact download refused"}
	}
}

var errOffOrigin = errors.New("redirect off the sandbox API's origin")

// sameOrigin compares scheme, host and port, a missing port being the
// scheme's default.
func sameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		return map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return a.Hostname() != "" && strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}
