#!/usr/bin/env bash
# Makes tests/openapi/node_modules hold exactly the versions package.json pins (npm ci from
# the committed lockfile) unless it does already: Redocly's CLI for make lint
# (tests/lint-openapi.sh) and Ajv for the suites' expect_schema (tests/integration/lib.sh).
# Needs Node.js and npm (deploy/install-deps.sh); npm ci needs the npm registry once.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
command -v npm >/dev/null || { echo "tests/openapi: npm is missing (deploy/install-deps.sh)" >&2; exit 1; }
stale=
while IFS=$'\t' read -r pkg want; do
	have=$(jq -r .version "node_modules/$pkg/package.json" 2>/dev/null || true)
	[ "$have" = "$want" ] || stale="$stale $pkg@$want"
done < <(jq -r '.dependencies | to_entries[] | "\(.key)\t\(.value)"' package.json)
[ -n "$stale" ] || exit 0
echo "tests/openapi: npm ci of$stale into tests/openapi/node_modules" >&2
log=$(mktemp)
if ! npm ci --no-audit --no-fund --loglevel=error >"$log" 2>&1; then
	tail -n 20 "$log" >&2
	rm -f "$log"
	echo "tests/openapi: npm ci failed" >&2
	exit 1
fi
rm -f "$log"
