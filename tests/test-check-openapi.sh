#!/usr/bin/env bash
# The drift check's own test (make lint): tests/check-openapi.py passes on the tree, and
# fails, naming the difference, on scratch copies that drift one way or the other: a route
# added to a copy of the table, an operation added to a copy of the document, an
# operationId that is not the route's action. And the suites' validator (expect_schema) on
# bodies that do and do not match. Nothing of the tree is changed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY=/usr/bin/python3
CHECK=tests/check-openapi.py
T=$(mktemp -d)
trap 'rm -rf -- "$T"' EXIT
failed=0
pass() { echo "ok - $1"; }
fail() { echo "FAIL - $1"; [ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/    /'; failed=$((failed + 1)); }

# Positive: the tree agrees.
if out=$($PY $CHECK 2>&1); then pass "the tree: $out"; else fail 'the tree passes' "$out"; fi

# A route in a copy of the table, without its operation.
sed 's|^\t{ "GET", "/api/v3/user", api_user_get, "user.get", 0, NULL },|&\n\t{ "GET", "/api/v3/user/gadgets", api_user_get, "gadget.list", 0, NULL },|' \
	app/api/routes.c >"$T/routes.c"
grep -q 'gadget.list' "$T/routes.c" || fail 'the scratch table has the added route'
if out=$($PY $CHECK --routes "$T/routes.c" 2>&1); then
	fail 'a route missing from the document fails' "$out"
elif grep -q 'route GET /api/v3/user/gadgets (gadget.list) is missing from' <<<"$out"; then
	pass 'a route missing from the document fails, named'
else
	fail 'a route missing from the document is named' "$out"
fi
# A route spelled with the table's macros and {name+}: expanded before the comparison.
sed 's|^\t{ "GET", "/api/v3/user", api_user_get, "user.get", 0, NULL },|&\n\t{ "GET", REPO SB "/{id}/logs/{name+}", api_user_get, "sandbox.logs", ROUTE_SANDBOX, NULL },|' \
	app/api/routes.c >"$T/routes2.c"
if out=$($PY $CHECK --routes "$T/routes2.c" 2>&1); then
	fail 'a route made of macros, missing from the document, fails' "$out"
elif grep -q 'route GET /api/v3/repos/{owner}/{repo}/diffinery/sandboxes/{id}/logs/{name} (sandbox.logs) is missing' <<<"$out"; then
	pass 'a route made of macros is expanded and named'
else
	fail 'a route made of macros is expanded and named' "$out"
fi

# An operation in a copy of the document that no route answers.
$PY - docs/openapi.yaml "$T/openapi.yaml" <<'PYEOF'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
doc["paths"]["/api/v3/user"]["delete"] = {
    "operationId": "user.delete", "summary": "x",
    "responses": {"204": {"description": "x"}}}
yaml.safe_dump(doc, open(sys.argv[2], "w"))
PYEOF
if out=$($PY $CHECK --document "$T/openapi.yaml" 2>&1); then
	fail 'an operation that is no route fails' "$out"
elif grep -q 'documents DELETE /api/v3/user (user.delete), which is no route of' <<<"$out"; then
	pass 'an operation that is no route fails, named'
else
	fail 'an operation that is no route is named' "$out"
fi

# An operationId that is not the route's action.
sed 's/operationId: user.get$/operationId: user.show/' docs/openapi.yaml >"$T/renamed.yaml"
if out=$($PY $CHECK --document "$T/renamed.yaml" 2>&1); then
	fail 'an operationId other than the action fails' "$out"
elif grep -q 'GET /api/v3/user: operationId user.show, but the route.s action is user.get' <<<"$out"; then
	pass 'an operationId other than the action fails, named'
else
	fail 'an operationId other than the action is named' "$out"
fi

# The suites' expect_schema (tests/openapi/validate.mjs): a body of the documented shape
# passes, one that breaks it fails naming the field, an answer not documented is refused.
bash tests/openapi/ensure.sh
$PY -c 'import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), open(sys.argv[2], "w"))' \
	docs/openapi.yaml "$T/openapi.json"
V=(node tests/openapi/validate.mjs "$T/openapi.json")
good='{"exitCode":1,"stdout":"","stderr":"x","timedOut":false,"truncated":false,"durationMs":3}'
if out=$("${V[@]}" sandbox.exec 200 <<<"$good" 2>&1); then pass 'validate: an exec result passes'; else fail 'validate: an exec result passes' "$out"; fi
if out=$("${V[@]}" sandbox.exec 200 <<<'{"exitCode":"1","stdout":""}' 2>&1); then
	fail 'validate: a broken exec result fails' "$out"
elif grep -q '/exitCode must be integer' <<<"$out" && grep -q "required property 'timedOut'" <<<"$out"; then
	pass 'validate: a broken exec result fails, naming the fields'
else
	fail 'validate: a broken exec result names the fields' "$out"
fi
if out=$("${V[@]}" sandbox.read 404 <<<'{"error":"no such file: x"}' 2>&1); then pass 'validate: a sandbox error shape passes'; else fail 'validate: a sandbox error shape passes' "$out"; fi
if out=$("${V[@]}" token.create 201 <<<'{"id":"1","token":"t","scope":"write","expires_at":"soon"}' 2>&1); then
	fail 'validate: a time that is not RFC 3339 fails' "$out"
elif grep -q 'must match format "date-time"' <<<"$out"; then
	pass 'validate: a time that is not RFC 3339 fails'
else
	fail 'validate: a time that is not RFC 3339 is named' "$out"
fi
if out=$("${V[@]}" user.get 418 <<<'{}' 2>&1); then
	fail 'validate: an undocumented status is refused' "$out"
elif grep -q 'user.get documents no 418 answer' <<<"$out"; then
	pass 'validate: an undocumented status is refused'
else
	fail 'validate: an undocumented status is named' "$out"
fi

if [ $failed -ne 0 ]; then echo "test-check-openapi: $failed failed"; exit 1; fi
echo "test-check-openapi: all passed"
