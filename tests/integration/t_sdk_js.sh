#!/usr/bin/env bash
# t_sdk_js.sh: the TypeScript SDK (clients/js, issue 33 item 2) against the real stack. Its
# pinned devDependencies (typescript, @types/node) come from npm ci of the committed
# lockfile; `tsc --noEmit` checks index.d.ts with test/types-check.ts; `npm pack --dry-run`
# ships exactly index.js, index.d.ts, README.md and package.json; then `node --test` runs
# clients/js/test/*.test.js as a user of its own with a repository of its own, and each node
# test becomes one check here (test/reporter.mjs), so that a failure is named.
# shellcheck disable=SC2034 # LAST_REQ is lib.sh's, rc is read by check_cond's condition
. "$(dirname "$0")/lib.sh"

JS=$ROOT/clients/js
command -v node >/dev/null && command -v npm >/dev/null || {
	fail 'node and npm are installed (deploy/install-deps.sh)' "node: $(command -v node) npm: $(command -v npm)"
	finish
}

# --- the pinned tools: npm ci from the lockfile unless node_modules has them already ----------
stale=
while IFS=$'\t' read -r pkg want; do
	have=$(jq -r .version "$JS/node_modules/$pkg/package.json" 2>/dev/null || true)
	[ "$have" = "$want" ] || stale="$stale $pkg@$want"
done < <(jq -r '.devDependencies | to_entries[] | "\(.key)\t\(.value)"' "$JS/package.json")
if [ -n "$stale" ]; then
	LAST_REQ="npm ci in clients/js (for$stale)"
	if (cd "$JS" && npm ci --no-audit --no-fund --loglevel=error) >"$_T/npm-ci.log" 2>&1; then
		ok 'npm ci: the pinned typescript and @types/node'
	else
		BODY=$(tail -n 20 "$_T/npm-ci.log")
		fail 'npm ci: the pinned typescript and @types/node' 'npm ci failed'
		finish
	fi
fi

# --- types and the package --------------------------------------------------------------------
LAST_REQ='tsc --noEmit -p clients/js'
if (cd "$JS" && ./node_modules/.bin/tsc --noEmit -p .) >"$_T/tsc.log" 2>&1; then
	ok 'tsc --noEmit: index.d.ts and test/types-check.ts type-check'
else
	BODY=$(head -c 2000 "$_T/tsc.log")
	fail 'tsc --noEmit: index.d.ts and test/types-check.ts type-check' 'tsc found errors'
fi
LAST_REQ='npm pack --dry-run --json in clients/js'
(cd "$JS" && npm pack --dry-run --json 2>/dev/null) >"$_T/pack.json"
BODY=$(jq -c '[.[0].files[].path] | sort' "$_T/pack.json" 2>/dev/null)
check_eq 'npm pack --dry-run: the package holds index.js, index.d.ts, README.md, package.json' \
	'["README.md","index.d.ts","index.js","package.json"]' "$BODY"
# The package as a user gets it: packed, unpacked elsewhere, imported by its name.
LAST_REQ='npm pack, then import from the unpacked package'
if (cd "$JS" && npm pack --pack-destination "$_T" >/dev/null 2>&1) &&
	mkdir -p "$_T/user/node_modules/@sandboxd" && tar -xzf "$_T"/sandboxd-sdk-*.tgz -C "$_T/user/node_modules/@sandboxd" &&
	mv "$_T/user/node_modules/@sandboxd/package" "$_T/user/node_modules/@sandboxd/sdk" &&
	BODY=$(cd "$_T/user" && node --input-type=module -e \
		'import { Sandbox, Client, SandboxdError } from "@sandboxd/sdk"; console.log(typeof Sandbox.create, typeof Client, typeof SandboxdError)' 2>&1); then
	check_eq 'the packed package imports by its name: Sandbox, Client, SandboxdError' 'function function function' "$BODY"
else
	fail 'the packed package imports by its name: Sandbox, Client, SandboxdError' "$BODY"
fi

# --- node --test against the stack ------------------------------------------------------------
O="sdkjs$SFX"
mk_repo "$O" sdk
AT_EXIT+=("ctl token revoke $LAST_TOKEN_ID; ctl account disable $O")
# Another writer of the repository: someone else's sandbox is 403 "not your sandbox" to it.
mk_writer "sdkjs2$SFX"
# Whatever sandbox a test left behind (a failure before its after()) is closed at the end.
AT_EXIT+=(close_open_sandboxes)

LAST_REQ='node --test clients/js/test/'
(cd "$JS" && SANDBOXD_URL=$SANDBOXD_URL SANDBOXD_TOKEN=$OT SDK_TEST_REPO=$R SDK_TEST_OWNER=$O SDK_TEST_OTHER_TOKEN=$OT2 \
	node --test --test-timeout=180000 --test-reporter=./test/reporter.mjs test/*.test.js) \
	>"$_T/node.out" 2>"$_T/node.err"
rc=$?
checks_from_lines node "$_T/node.out"
BODY=$(tail -c 1500 "$_T/node.err")
check_cond 'node --test ran the tests (at least 50) and exited 0 with none failed' \
	"((N_LINES >= 50)) && ! grep -q '^fail' '$_T/node.out' && ((rc == 0))"
it_tokens "$(cat "$_T/node.out" "$_T/node.err")"
close_open_sandboxes
api GET "$SB" '' "$OT"
expect_json '[.[] | select(.state == "ready" or .state == "starting")] | length' 0 \
	'no sandbox of the tests is left running'
finish
