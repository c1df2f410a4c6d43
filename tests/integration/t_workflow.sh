#!/usr/bin/env bash
# t_workflow.sh: the example workflow sandbox users run first (issue 15), on the standard
# image, over REST and then over MCP with the official SDK client (tests/mcp/workflow.mjs).
# A repository holds a small Node project (web/: its test compares the output with a
# snapshot file, and the snapshot is stale) and a small Python package (calc/: one pytest
# test). In a sandbox at a feature branch: `npm ci` (no dependencies: nothing to fetch)
# exits 0; `npm test` exits 1 showing the failing snapshot; `npm test -- -u` updates it,
# the change is committed and `git push origin HEAD:<branch>` lands (read in the bare
# repository); a venv that sees Debian's pytest and setuptools installs the package
# without an index or build isolation, and pytest passes. Nothing of it needs the network.
. "$(dirname "$0")/lib.sh"

MCP_DIR=$ROOT/tests/mcp
O="wf$SFX"
mk_repo "$O" app
BARE=$REPOS_DIR/$R.git

# --- the repository: main, and the feature branches the sandboxes start at ---------------------
mkdir -p "$W/web/__snapshots__" "$W/calc/calc" "$W/calc/tests"
cat >"$W/web/package.json" <<'EOF'
{
  "name": "greet",
  "version": "1.0.0",
  "private": true,
  "scripts": { "test": "node test.js" }
}
EOF
cat >"$W/web/package-lock.json" <<'EOF'
{
  "name": "greet",
  "version": "1.0.0",
  "lockfileVersion": 3,
  "requires": true,
  "packages": { "": { "name": "greet", "version": "1.0.0" } }
}
EOF
cat >"$W/web/index.js" <<'EOF'
module.exports = (name) => `Hello, ${name}!`;
EOF
# The snapshot test: `node test.js` compares, `node test.js -u` writes the snapshot anew.
cat >"$W/web/test.js" <<'EOF'
const fs = require('fs');
const greet = require('./index.js');
const file = `${__dirname}/__snapshots__/greet.txt`;
const got = greet('world') + '\n';
if (process.argv.includes('-u')) {
	fs.writeFileSync(file, got);
	console.log('snapshot updated: __snapshots__/greet.txt');
	process.exit(0);
}
const want = fs.readFileSync(file, 'utf8');
if (got !== want) {
	console.error('snapshot mismatch in __snapshots__/greet.txt');
	console.error(`- expected: ${JSON.stringify(want)}`);
	console.error(`+ received: ${JSON.stringify(got)}`);
	process.exit(1);
}
console.log('1 snapshot passed');
EOF
printf 'Hello world\n' >"$W/web/__snapshots__/greet.txt"
printf 'node_modules/\n.venv/\n*.egg-info/\n__pycache__/\n' >"$W/.gitignore"
cat >"$W/calc/pyproject.toml" <<'EOF'
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "calc"
version = "0.1.0"

[tool.setuptools]
packages = ["calc"]
EOF
printf 'def add(a, b):\n    return a + b\n' >"$W/calc/calc/__init__.py"
printf 'from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n' >"$W/calc/tests/test_calc.py"
git -C "$W" add -A && git -C "$W" -c user.name=t -c user.email=t@t commit -qm 'web and calc'
git -C "$W" push -q "http://t:$OT@${SANDBOXD_URL#http://}/$R.git" main main:feature/snap main:feature/mcp
check 'the repository has the projects on feature/snap and feature/mcp' \
	git --git-dir="$BARE" cat-file -e feature/mcp:web/__snapshots__/greet.txt

# --- over REST -------------------------------------------------------------------------------
run() { # CMD [CWD]: exec in the sandbox ID
	api POST "$SB/$ID/exec" "$(jq -nc --arg c "$1" --arg d "${2:-}" '{cmd: $c} + (if $d == "" then {} else {cwd: $d} end)')" "$OT"
}
api POST "$SB" '{"ref":"feature/snap"}' "$OT"
expect_status 201 'a sandbox at feature/snap'
ID=$(_json .id)
AT_EXIT+=("api POST '$SB/$ID/close' '' '$OT' >/dev/null 2>&1")
check_eq 'on the default image, standard' standard "$(_json .image)"
run 'git rev-parse --abbrev-ref HEAD'
expect_json .stdout feature/snap 'checked out at the feature branch'

# The registry a closed port on loopback: npm ci has nothing to fetch, and must not try.
run 'npm_config_registry=http://127.0.0.1:9/ npm ci' web
expect_json .exitCode 0 'npm ci (no dependencies; the registry unreachable) exits 0'
run 'npm test' web
check_eq 'npm test exits 1 on the stale snapshot' 1 "$(_json .exitCode)"
ERR=$(_json .stderr)
check 'its output names the failing snapshot' grep -qF 'snapshot mismatch in __snapshots__/greet.txt' <<<"$ERR"
check 'and shows both sides' grep -qF '+ received: "Hello, world!\n"' <<<"$ERR"
run 'npm test -- -u && npm test' web
check_eq 'npm test -- -u updates the snapshot, and npm test then passes' '0|1' \
	"$(_json .exitCode)|$(grep -c '1 snapshot passed' <<<"$(_json .stdout)")"
run 'git status --porcelain'
check_eq 'only the snapshot changed (node_modules ignored)' ' M web/__snapshots__/greet.txt' "$(_json .stdout)"
run 'git commit -qam "update the greeting snapshot" && git push -q origin HEAD:feature/snap 2>&1; echo "rc=$?"'
check_eq 'committed and pushed to feature/snap' 'rc=0' "$(_json .stdout)"
run 'git rev-parse HEAD'
HEAD_SB=$(_json .stdout)
check_eq 'the push landed on the branch in the bare repository' "$HEAD_SB" \
	"$(git --git-dir="$BARE" rev-parse feature/snap)"
check_eq 'with the new snapshot' 'Hello, world!' "$(git --git-dir="$BARE" show feature/snap:web/__snapshots__/greet.txt)"
check_eq 'main is untouched' 'Hello world' "$(git --git-dir="$BARE" show main:web/__snapshots__/greet.txt)"

PY='python3 -m venv --system-site-packages .venv && .venv/bin/pip install -q --no-build-isolation --no-index -e . && .venv/bin/python -m pytest -q'
run "$PY" calc
check_eq 'venv, pip install -e (no index, no build isolation) and pytest pass offline' 0 "$(_json .exitCode)"
check 'pytest ran the test' grep -q '1 passed' <<<"$(_json .stdout)"
run '.venv/bin/python -c "import calc, sys; print(calc.__file__)"' calc
check_eq 'the package is installed editable (from the work tree)' /workspace/repo/calc/calc/__init__.py "$(_json .stdout)"
api POST "$SB/$ID/close" '' "$OT"
expect_status 204 'closed'

# --- over MCP, with the official SDK client -----------------------------------------------------
if [[ ! -d $MCP_DIR/node_modules/@modelcontextprotocol/sdk ]]; then
	(cd "$MCP_DIR" && npm ci --no-audit --no-fund --loglevel=error) >"$_T/npm.log" 2>&1 ||
		fail 'npm ci of the pinned MCP SDK' "$(tail -5 "$_T/npm.log")"
fi
SANDBOXD_URL=$SANDBOXD_URL MCP_TOKEN=$OT MCP_OWNER=$O MCP_REPO=app MCP_BRANCH=feature/mcp \
	timeout -k 5 600 node "$MCP_DIR/workflow.mjs" >"$_T/wf.out" 2>"$_T/wf.err"
WF_RC=$?
MCP_ID=
while IFS= read -r line; do
	case $line in
	'ok '*) ok "mcp: ${line#ok }" ;;
	'not ok '*) l=${line#not ok }; fail "mcp: ${l%% :: *}" "${l#* :: }" ;;
	'sandbox '*) MCP_ID=${line#sandbox } ;;
	esac
done <"$_T/wf.out"
[[ -n $MCP_ID ]] && AT_EXIT+=("api POST '$SB/$MCP_ID/close' '' '$OT' >/dev/null 2>&1")
check_eq 'the SDK run ended cleanly' 0 "$WF_RC"
[[ $WF_RC == 0 ]] || fail 'SDK stderr' "$(tail -c 600 "$_T/wf.err")"
check_eq 'the MCP push landed on feature/mcp with the new snapshot' 'Hello, world!' \
	"$(git --git-dir="$BARE" show feature/mcp:web/__snapshots__/greet.txt 2>/dev/null)"
check_eq 'made in the sandbox (its creator the author)' "$O" "$(git --git-dir="$BARE" log -1 --format=%an feature/mcp)"
check_eq 'its tool calls are audited via mcp, the create with image standard' 'mcp|standard' \
	"$(sql "select via || '|' || (details->>'image') from audit_log where action = 'sandbox.create' and sandbox_id = '${MCP_ID:-none}'")"
finish
