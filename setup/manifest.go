// Package setup registers pitcrew as a GitHub App through GitHub's
// app-manifest flow, from a local page, when pitcrew starts without
// credentials: the page posts the manifest built from app.yml, GitHub sends
// the user back with a code, and the code is exchanged for the app's id,
// key and secrets, which are written to a file only its owner can read.
package setup

import (
	"encoding/json"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// BuildManifest turns app.yml into the manifest GitHub expects, with the
// URLs of this pitcrew: webhooks to webhookURL (a proxy URL when
// developing locally), the user back to publicURL/setup/callback.
func BuildManifest(appYAML []byte, publicURL, webhookURL string) ([]byte, error) {
	var m map[string]any
	if err := yaml.Unmarshal(appYAML, &m); err != nil {
		return nil, fmt.Errorf("app.yml: %w", err)
	}
	base := strings.TrimRight(publicURL, "/")
	if webhookURL == "" {
		webhookURL = base + "/api/github/hook"
	}
	m["hook_attributes"] = map[string]any{"url": webhookURL, "active": true}
	m["redirect_url"] = base + "/setup/callback"
	if _, ok := m["url"]; !ok {
		m["url"] = base
	}
	return json.Marshal(m)
}
