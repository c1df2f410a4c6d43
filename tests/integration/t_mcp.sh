#!/usr/bin/env bash
# t_mcp.sh: POST /mcp. Raw JSON-RPC with curl for the transport's rules and the error codes,
# then an agent's whole cycle with the official MCP TypeScript SDK client (tests/mcp).
. "$(dirname "$0")/lib.sh"

export GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=/bin/false
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
HOSTPORT=${SANDBOXD_URL#http://}
MCP_DIR=$ROOT/tests/mcp
fails() { ! "$@"; }
fails_header() { ! header "$1" >/dev/null; }

O="mcp$SFX"
mk_user "$O" --name "Mcp Owner" --email "mcp@example.test" || exit 1
OT=$LAST_TOKEN
R="$O/app"
api POST /api/v3/user/repos '{"name":"app","visibility":"private"}' "$OT"
expect_status 201 'repository created'
W=$_T/w
git init -q -b main "$W"
echo one >"$W/f" && git -C "$W" add f && git -C "$W" commit -qm one
git -C "$W" push -q "http://t:$OT@$HOSTPORT/$R.git" main

rpc() { # BODY [TOKEN] [extra curl -H …]: POST /mcp
	local body=$1 token=${2-$OT}
	API_HEADERS=('Accept: application/json, text/event-stream' "${@:3}")
	api POST /mcp "$body" "$token"
	API_HEADERS=()
}

# --- the transport -----------------------------------------------------------------------
rpc '{"jsonrpc":"2.0","id":1,"method":"ping"}' -
expect_status 401 'no token: 401'
expect_header_match WWW-Authenticate '^Bearer ' 'with a Bearer challenge'
rpc '{"jsonrpc":"2.0","id":1,"method":"ping"}' dfy_bad
expect_status 401 'a bad token: 401'
api GET /mcp '' "$OT"
expect_status 405 'GET /mcp: 405, no server stream'
expect_header Allow POST 'Allow: POST'
api DELETE /mcp '' "$OT"
expect_status 405 'DELETE /mcp: 405, no sessions to end'

rpc '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'
expect_status 200 'initialize: 200'
expect_header_match Content-Type '^application/json' 'answered as application/json'
expect_json .result.protocolVersion 2025-06-18 'a supported version asked for is agreed'
expect_json .id 1 'the id is echoed'
expect_json .result.serverInfo.name sandboxd 'serverInfo'
expect_json .result.capabilities.tools.listChanged false 'tools capability'
check 'no session id: the server is stateless' fails_header Mcp-Session-Id
rpc '{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"2025-03-26"}}'
expect_json .result.protocolVersion 2025-03-26 '2025-03-26 is agreed'
rpc '{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"1999-01-01"}}'
expect_json .result.protocolVersion 2025-11-25 'an unknown version: ours is offered'
rpc '{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}'
expect_json .error.code -32602 'initialize without protocolVersion: -32602'
rpc '{"jsonrpc":"2.0","method":"notifications/initialized"}'
expect_status 202 'a notification: 202'
expect_empty_body 'with no body'
rpc '{"jsonrpc":"2.0","id":4,"result":{}}'
expect_status 202 'a response from the client: 202'

# --- malformed JSON-RPC ------------------------------------------------------------------
rpc '{"jsonrpc":"2.0","id":1,"method":'
expect_status 400 'broken JSON: 400'
expect_json .error.code -32700 'broken JSON: -32700'
expect_json .id null 'with id null'
rpc 'nope'
expect_json .error.code -32700 'not JSON: -32700'
rpc ' '
expect_json .error.code -32700 'an empty body: -32700'
rpc '42'
expect_status 400 'a number: 400'
expect_json .error.code -32600 'a number: -32600'
rpc '{"jsonrpc":"1.0","id":7,"method":"ping"}'
expect_json .error.code -32600 'jsonrpc 1.0: -32600'
expect_json .id 7 'the id is echoed on an invalid request'
expect_json_match .error.message jsonrpc 'the message names the field'
rpc '{"jsonrpc":"2.0","id":null,"method":"ping"}'
expect_json .error.code -32600 'id null: -32600'
rpc '{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}'
expect_json .error.code -32600 'an object id: -32600'
rpc '{"jsonrpc":"2.0","id":8,"method":"tools/lisst"}'
expect_status 200 'an unknown method is a JSON-RPC error in a 200'
expect_json .error.code -32601 'unknown method: -32601'
expect_json .error.message 'method not found: tools/lisst' 'naming the method'
rpc '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":[1]}'
expect_json .error.code -32602 'params not an object: -32602'
rpc '{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{}}'
expect_json .error.code -32602 'tools/call without a name: -32602'
rpc '{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"rm_rf"}}'
expect_json .error.code -32602 'an unknown tool: -32602'
expect_json .error.message 'unknown tool: rm_rf' 'naming the tool'
rpc '{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"sandbox_create","arguments":[]}}'
expect_json .error.code -32602 'arguments not an object: -32602'
rpc '{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"sandbox_create","arguments":{"owner":"x","repo":"y","colour":"red"}}}'
expect_json .result.isError true 'an unknown argument is the tool'"'"'s error'
expect_json '.result.content[0].text' "unknown argument 'colour'" 'naming it'
rpc '{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"sandbox_create","arguments":{"owner":"x","repo":5}}}'
expect_json '.result.content[0].text' "argument 'repo' must be a string" 'a wrong type, named'
# A create's own egress and limits, as REST's fields (REST judges and names them).
rpc "{\"jsonrpc\":\"2.0\",\"id\":141,\"method\":\"tools/call\",\"params\":{\"name\":\"sandbox_create\",\"arguments\":{\"owner\":\"$O\",\"repo\":\"app\",\"egress\":\"none\",\"memory_mib\":256,\"disk_mib\":128,\"cpus\":0.5}}}"
expect_json .result.isError false 'sandbox_create with egress none, 256 MiB, 128 MiB of disk, 0.5 CPUs'
LIM=$(_json .result.structuredContent.id)
api GET "/api/v3/repos/$R/diffinery/sandboxes/$LIM" '' "$OT"
expect_json '[.egress, .resources.cpus, .resources.memoryMiB, .resources.diskMiB] | map(tostring) | join("|")' \
	'none|0.5|256|128' 'the sandbox has them (REST GET)'
api POST "/api/v3/repos/$R/diffinery/sandboxes/$LIM/close" '' "$OT"
expect_status 204 'closed'
rpc "{\"jsonrpc\":\"2.0\",\"id\":142,\"method\":\"tools/call\",\"params\":{\"name\":\"sandbox_create\",\"arguments\":{\"owner\":\"$O\",\"repo\":\"app\",\"memory_mib\":999999}}}"
expect_json '[.result.isError, .result.content[0].text] | map(tostring) | join("|")' \
	"true|field 'memoryMiB' is over this deployment's maximum (8192)" 'past the maximum: the tool'"'"'s error with REST'"'"'s text'
rpc '{"jsonrpc":"2.0","id":15,"method":"ping"}' "$OT" 'MCP-Protocol-Version: 2030-01-01'
expect_status 400 'an unsupported MCP-Protocol-Version header: 400'
expect_json .error.code -32600 'as -32600'
rpc '{"jsonrpc":"2.0","id":16,"method":"ping"}' "$OT" 'MCP-Protocol-Version: 2025-11-25'
expect_json .result '{}' 'ping with the agreed version: {}'

# --- Origin (DNS rebinding): present and not allowed is 403; the service's own origin and no
# Origin at all (clients that are not browsers) are served --------------------------------
rpc '{"jsonrpc":"2.0","id":17,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}' "$OT" 'Origin: http://evil.example'
expect_status 403 'Origin: http://evil.example: 403'
expect_json '.error.message' 'Origin http://evil.example is not allowed (SANDBOXD_MCP_ORIGINS)' 'naming the origin and the setting'
expect_json '"\(.error.code) \(.id)"' '-32600 null' 'as a JSON-RPC error without an id'
rpc '{"jsonrpc":"2.0","id":18,"method":"ping"}' "$OT" 'Origin: null'
expect_status 403 'Origin: null (a sandboxed page or file://): 403'
rpc '{"jsonrpc":"2.0","id":19,"method":"ping"}' "$OT" "Origin: $SANDBOXD_URL"
expect_status 200 "Origin: $SANDBOXD_URL (the public URL's, the default list): 200"
expect_json .result '{}' 'and answered'
rpc '{"jsonrpc":"2.0","id":20,"method":"ping"}'
expect_status 200 'no Origin: 200'

# --- integer ids json-c would clamp: -32600, not an answer to another id -------------------
id_echoed() { [[ $BODY =~ \"id\":\ ?$1[,}\ ] ]]; }
rpc '{"jsonrpc":"2.0","id":9223372036854775807,"method":"ping"}'
expect_status 200 'id 2^63 - 1: 200'
check 'echoed exactly' id_echoed 9223372036854775807
for big in 9223372036854775808 18446744073709551616 -9223372036854775809; do
	rpc "{\"jsonrpc\":\"2.0\",\"id\":$big,\"method\":\"ping\"}"
	expect_status 400 "id $big: 400"
	expect_json '"\(.error.code) \(.id)"' '-32600 null' 'as -32600 with id null'
	expect_json '.error.message' '"id" must be a string or an integer between -9223372036854775807 and 9223372036854775807' 'saying the range'
done

# --- batches: 2025-03-26 only ------------------------------------------------------------
rpc '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":2,"method":"tools/list"},{"jsonrpc":"2.0","id":3,"method":"nope"}]' "$OT" 'MCP-Protocol-Version: 2025-03-26'
expect_status 200 'a batch under 2025-03-26: 200'
expect_json 'length' 3 'one answer per request, none for the notification'
expect_json '.[1].result.tools | length' 8 'tools/list inside the batch'
expect_json '.[2].error.code' -32601 'an error inside the batch stays in its answer'
rpc '[{"jsonrpc":"2.0","id":1,"method":"ping"}]' "$OT" 'MCP-Protocol-Version: 2025-06-18'
expect_status 400 'a batch under 2025-06-18: 400'
expect_json .error.code -32600 'as -32600'
rpc '[]' "$OT" 'MCP-Protocol-Version: 2025-03-26'
expect_json .error.code -32600 'an empty batch: -32600'
rpc '[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}]' "$OT" 'MCP-Protocol-Version: 2025-03-26'
expect_json '.[0].error.code' -32600 'initialize inside a batch: -32600'

# --- tools/list --------------------------------------------------------------------------
rpc '{"jsonrpc":"2.0","id":20,"method":"tools/list"}'
expect_json '[.result.tools[].name] | sort | join(",")' 'sandbox_close,sandbox_create,sandbox_exec,sandbox_list,sandbox_list_files,sandbox_preview,sandbox_read_file,sandbox_write_file' 'the eight tools'
expect_json '.result.tools[] | select(.name == "sandbox_write_file") | .inputSchema.required | join(",")' 'owner,repo,sandbox_id,path,content' 'write_file requires path and content'

# --- sandbox tokens stay out -------------------------------------------------------------
api POST "/api/v3/repos/$R/diffinery/sandboxes" '{}' "$OT"
expect_status 201 'a REST sandbox for the token check'
RID=$(_json .id)
box_token() {
	box_token_of "$(docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$RID")")"
}
check 'the clone has its token' wait_until 60 eval '[ -n "$(box_token)" ]'
rpc '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' "$(box_token)"
expect_error 403 'sandbox tokens can only be used for git' 'a sandbox token: 403 as on REST'

# --- body size: only sandbox_write_file may pass the ordinary JSON limit (1 MiB here) ---------
# The suite's limits: SANDBOXD_BODY_LIMIT 1 MiB, SANDBOXD_FILE_LIMIT 1 MiB (so an MCP body
# may reach 4/3 of it, plus 64 KiB). Each message below is between the two.
big_msg() { # METHOD KIND FILE [OWNER SANDBOX]: a message of about 1.1 MiB
	"${PY:-python3}" - "$@" <<'PYEOF'
import json, sys
method, kind, path = sys.argv[1:4]
text = "a" * (1100 << 10)
if kind == "write":
    # 720,000 bytes of file; in JSON each newline takes two: the body is over 1 MiB.
    params = {"name": "sandbox_write_file", "arguments": {"owner": sys.argv[4], "repo": "app",
              "sandbox_id": sys.argv[5], "path": "big.txt", "content": "a\n" * 360000}}
elif kind == "list":
    params = {"_meta": {"pad": text}}
else:
    params = None
if kind == "batch":
    m = [{"jsonrpc": "2.0", "id": i, "method": "ping", "params": {"_meta": {"p": "a" * 1000}}} for i in range(1100)]
else:
    m = {"jsonrpc": "2.0", "id": 30, "method": method, "params": params}
open(path, "w").write(json.dumps(m))
PYEOF
}
big_msg tools/call write "$_T/write.json" "$O" "$RID"
rpc "@$_T/write.json"
expect_status 200 'sandbox_write_file in a body of 1.05 MiB: 200'
expect_json '.result.structuredContent.size' 720000 'the file is written'
big_msg tools/list list "$_T/list.json"
rpc "@$_T/list.json"
expect_status 413 'tools/list in a body of 1.1 MiB: 413'
expect_json '.error.message' 'request body is larger than 1048576 bytes (only sandbox_write_file may be larger)' 'naming the limit'
expect_json '.error.code' -32600 'as -32600'
big_msg ping batch "$_T/batch.json"
rpc "@$_T/batch.json" "$OT" 'MCP-Protocol-Version: 2025-03-26'
expect_status 413 'a batch of 1.1 MiB: 413'
expect_json '.error.message' 'request body is larger than 1048576 bytes (only sandbox_write_file may be larger)' 'naming the limit'
api POST "/api/v3/repos/$R/diffinery/sandboxes/$RID/close" '' "$OT"

# --- an agent's cycle with the official SDK ----------------------------------------------
OTHER="mcpo$SFX"
mk_user "$OTHER" || exit 1
OTHER_T=$LAST_TOKEN
api PUT "/api/v3/repos/$R/collaborators/$OTHER" '{"role":"write"}' "$OT"
expect_status 204 'a collaborator with write'
api POST "/api/v3/repos/$R/job-tokens" '{"scope":"write"}' "$OT"
JOB_T=$(_json .token)
api POST /api/v3/user/repos '{"name":"old","visibility":"private"}' "$OT"
api PATCH "/api/v3/repos/$O/old" '{"archived":true}' "$OT"
expect_status 200 'an archived repository'

if [[ ! -d $MCP_DIR/node_modules/@modelcontextprotocol/sdk ]]; then
	(cd "$MCP_DIR" && npm ci --no-audit --no-fund --loglevel=error) >"$_T/npm.log" 2>&1 ||
		fail 'npm ci of the pinned MCP SDK' "$(tail -5 "$_T/npm.log")"
fi
SANDBOXD_URL=$SANDBOXD_URL MCP_TOKEN=$OT MCP_OTHER_TOKEN=$OTHER_T MCP_JOB_TOKEN=$JOB_T \
	MCP_OWNER=$O MCP_REPO=app MCP_ARCHIVED=old MCP_ARCHIVED_TEXT='repository is archived (read-only)' \
	MCP_PREVIEW_DOMAIN=${SANDBOXD_PREVIEW_DOMAIN:-preview.localhost} \
	timeout -k 5 300 node "$MCP_DIR/agent.mjs" >"$_T/agent.out" 2>"$_T/agent.err"
AGENT_RC=$?
while IFS= read -r line; do
	case $line in
	'ok '*) ok "sdk: ${line#ok }" ;;
	'not ok '*) l=${line#not ok }; fail "sdk: ${l%% :: *}" "${l#* :: }" ;;
	'pushed '*) SB_ID=${line#pushed } ;;
	esac
done <"$_T/agent.out"
check_eq 'the SDK run ended cleanly' 0 "$AGENT_RC"
[[ $AGENT_RC == 0 ]] || fail 'SDK stderr' "$(tail -c 600 "$_T/agent.err")"

check 'the push from the sandbox landed' git --git-dir "$REPOS_DIR/$R.git" rev-parse -q --verify refs/heads/from-mcp
check_eq 'the pushed file is there' 'héllo wörld ✓' "$(git --git-dir "$REPOS_DIR/$R.git" show from-mcp:notes/hello.txt 2>/dev/null)"

# --- audit: tool calls are marked as MCP -------------------------------------------------
SB_ID=${SB_ID:-none}
check_eq 'each tool call has its row via mcp' 'sandbox.create|mcp|201' \
	"$(sql "select action || '|' || via || '|' || status from audit_log where sandbox_id = '$SB_ID' and action = 'sandbox.create'")"
check_cond 'execs are audited with their command, via mcp' \
	"[ \"\$(sql \"select count(*) from audit_log where sandbox_id = '$SB_ID' and action = 'sandbox.exec' and via = 'mcp' and details->>'tool' = 'sandbox_exec' and details->>'cmd' like 'echo hello%'\")\" = 1 ]"
check_eq 'list_files is audited as the REST list, via mcp' 'sandbox_list_files|200|/workspace/repo/notes' \
	"$(sql "select concat_ws('|', details->>'tool', status, details->>'file') from audit_log where sandbox_id = '$SB_ID' and action = 'sandbox.list_files' and via = 'mcp' order by id limit 1")"
check_eq 'a refused call is audited with its status' 403 \
	"$(sql "select status from audit_log where sandbox_id = '$SB_ID' and login = '$OTHER' and via = 'mcp' and action = 'sandbox.exec'")"
check_eq 'protocol errors are audited too' 1 \
	"$(sql "select count(*) from audit_log where login = '$O' and via = 'mcp' and action = 'mcp.unknown' and details->>'rpc_method' = 'tools/lisst'")"
check_eq 'the no-token attempts are audited as mcp' t \
	"$(sql "select count(*) >= 1 from audit_log where action = 'auth.required' and via = 'mcp'")"
check 'no container of the cycle is left' [ -z "$(docker ps -aq --filter "label=sandboxd.sandbox=$(owner_label_of "$SB_ID")")" ]

finish
