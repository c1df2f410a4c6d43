#!/usr/bin/env bash
# Lints docs/openapi.yaml with Redocly's CLI (make lint): the version pinned by
# tests/openapi/package.json and its lockfile, installed by tests/openapi/ensure.sh (npm ci
# into tests/openapi/node_modules, ignored by git) when it is not there yet or is another
# version, as tests/mcp's SDK is. The rules: tests/openapi/redocly.yaml (recommended,
# every warning an error). Needs Node.js and npm (deploy/install-deps.sh); npm ci needs
# the npm registry the first time only.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/openapi"
bash ensure.sh
want=$(jq -r '.dependencies["@redocly/cli"]' package.json)
# No telemetry, no update check: a lint is a local act.
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true NO_UPDATE_NOTIFIER=1
out=$(./node_modules/.bin/redocly lint --config redocly.yaml --format stylish ../../docs/openapi.yaml 2>&1) || {
	# Node.js 20's end-of-life banner is noise here; the problems are not.
	grep -v '[║╔╚]' <<<"$out" >&2
	echo "lint-openapi: docs/openapi.yaml has problems (above)" >&2
	exit 1
}
echo "lint-openapi: docs/openapi.yaml clean (@redocly/cli $want, tests/openapi/redocly.yaml)"
