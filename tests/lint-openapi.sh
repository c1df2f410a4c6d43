#!/usr/bin/env bash
# Lints docs/openapi.yaml with Redocly's CLI (make lint): the version pinned by
# tests/openapi/package.json and its lockfile, installed by `npm ci` into
# tests/openapi/node_modules (ignored by git) when it is not there yet or is another
# version, as tests/mcp's SDK is. The rules: tests/openapi/redocly.yaml (recommended,
# every warning an error). Needs Node.js and npm (deploy/install-deps.sh); npm ci needs
# the npm registry the first time only.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/openapi"
command -v npm >/dev/null || { echo "lint-openapi: npm is missing (deploy/install-deps.sh)" >&2; exit 1; }
want=$(jq -r '.dependencies["@redocly/cli"]' package.json)
have=$(jq -r .version node_modules/@redocly/cli/package.json 2>/dev/null || true)
if [ "$have" != "$want" ]; then
	echo "lint-openapi: npm ci of @redocly/cli $want into tests/openapi/node_modules"
	log=$(mktemp)
	if ! npm ci --no-audit --no-fund --loglevel=error >"$log" 2>&1; then
		tail -n 20 "$log" >&2
		rm -f "$log"
		echo "lint-openapi: npm ci failed" >&2
		exit 1
	fi
	rm -f "$log"
fi
# No telemetry, no update check: a lint is a local act.
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true NO_UPDATE_NOTIFIER=1
out=$(./node_modules/.bin/redocly lint --config redocly.yaml --format stylish ../../docs/openapi.yaml 2>&1) || {
	# Node.js 20's end-of-life banner is noise here; the problems are not.
	grep -v '[║╔╚]' <<<"$out" >&2
	echo "lint-openapi: docs/openapi.yaml has problems (above)" >&2
	exit 1
}
echo "lint-openapi: docs/openapi.yaml clean (@redocly/cli $want, tests/openapi/redocly.yaml)"
