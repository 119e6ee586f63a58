// Package pitcrew holds what belongs to the whole project rather than to
// one package: the GitHub App manifest, app.yml, embedded so that the
// setup pages register the app with exactly what the file says.
package pitcrew

import _ "embed"

// AppManifest is app.yml.
//
//go:embed app.yml
var AppManifest []byte
