#!/usr/bin/env bash
# Regenerates testdata/openapi/github-subset.json and testdata/webhooks/*
# from pinned npm packages. Needs node and npm (registry access).
set -euo pipefail

OPENAPI_VERSION=23.0.2
WEBHOOKS_EXAMPLES_VERSION=7.6.1

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

cd "$tmp"
npm pack --silent "@octokit/openapi@${OPENAPI_VERSION}" >/dev/null
npm pack --silent "@octokit/webhooks-examples@${WEBHOOKS_EXAMPLES_VERSION}" >/dev/null

mkdir openapi webhooks
tar -xzf "octokit-openapi-${OPENAPI_VERSION}.tgz" -C openapi
tar -xzf "octokit-webhooks-examples-${WEBHOOKS_EXAMPLES_VERSION}.tgz" -C webhooks

node "$here/extract.mjs" "$tmp/openapi/package" "$tmp/webhooks/package" "$here"
