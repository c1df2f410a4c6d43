#!/usr/bin/env bash
# t_parked.sh: a file call that waits for a clone costs no worker (README "The holder",
# park.h). While git's workers are stopped, new sandboxes' clones hang; reads, writes,
# lists, removes, raw GETs and PUTs, a detached exec and a lone MCP call on them are
# parked with the holder, no worker busy, while the other calls answer. Once git runs,
# each is replayed to a worker and answers as it would have: the same bodies, one audit
# row each, its duration counted from the first arrival. A client that leaves while its
# call waits: 499 in the row, and the write it asked for never happens. A clone that
# fails: 409 with its error. SANDBOXD_HOLDER=0: the worker waits, as before.
. "$(dirname "$0")/lib.sh"

: "${SANDBOXD_PID_FILE:?local.env has no SANDBOXD_PID_FILE}"
M=$(cat "$SANDBOXD_PID_FILE")

O="pk$SFX"
mk_repo "$O" r

GW=$(gitworkers)
check 'the git workers are found' test -n "$GW"
# shellcheck disable=SC2086
AT_EXIT+=("kill -CONT $GW 2>/dev/null")
# shellcheck disable=SC2086
kill -STOP $GW
C=()
for k in 1 2; do
	api POST "$SB" '{}' "$OT"
	expect_status 201 "sandbox P$k, whose clone hangs"
	C+=("$(_json .id)")
done
CIN="'${C[0]}', '${C[1]}'"
T0=$(date +%s)
pids=()
for i in $(seq 1 6); do
	call_bg "r$i" POST "$SB/${C[i % 2]}/read" '{"path":"x"}'
	pids+=("$BG_PID")
	b64=$(printf 'written-%s\n' "$i" | base64 -w0)
	call_bg "w$i" POST "$SB/${C[i % 2]}/write" "{\"path\":\"out/w$i.txt\",\"content\":\"$b64\"}"
	pids+=("$BG_PID")
done
call_bg list POST "$SB/${C[0]}/list" '{"path":"."}'
pids+=("$BG_PID")
call_bg rm POST "$SB/${C[1]}/remove" '{"path":".git/description"}'
pids+=("$BG_PID")
call_bg get GET "$SB/${C[0]}/files/x"
pids+=("$BG_PID")
head -c 200000 /dev/urandom >"$_T/put.bin"
call_bg put PUT "$SB/${C[0]}/files/raw/put.bin" "@$_T/put.bin" 120 application/octet-stream
pids+=("$BG_PID")
# Over SANDBOXD_FILE_LIMIT (32 MiB): its body waits in an unnamed file of SANDBOXD_SPOOL_DIR,
# not in memory, and not in a worker either.
head -c $((33 * 1048576 + 5)) /dev/urandom >"$_T/big.bin"
call_bg big PUT "$SB/${C[1]}/files/raw/big.bin" "@$_T/big.bin" 180 application/octet-stream
pids+=("$BG_PID")
call_bg detach POST "$SB/${C[1]}/exec" '{"cmd":"echo detached-ran > /workspace/repo/d.txt","detach":true}'
pids+=("$BG_PID")
call_bg mcp POST /mcp "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"sandbox_read_file\",\"arguments\":{\"owner\":\"$O\",\"repo\":\"r\",\"sandbox_id\":\"${C[0]}\",\"path\":\"x\"}}}"
pids+=("$BG_PID")
# The client that leaves, with a write that must then never happen.
call_bg gone POST "$SB/${C[0]}/write" "{\"path\":\"gone.txt\",\"content\":\"$(echo never | base64 -w0)\"}" 3
GONE_PID=$BG_PID
sleep 4
check_eq 'no worker is busy with the 20 calls that wait for the clones' 0 "$(busy_count)"
check '/metrics: sandboxd_holder_calls{kind="parked"} counts the 19 still waiting (the 20th left)' \
	wait_until 10 eval '[[ $(holder_metric parked) == 19 ]]'
check_eq 'and {kind="exec"} none of them' 0 "$(holder_metric exec)"
check 'GET /api/v3/user and /healthz answer 200 within 5 s each, 5 times, meanwhile' others_answer "$OT"
api GET "$SB/${C[0]}" '' "$OT"
expect_json .clone.state pending 'and the clones are still pending then'
wait "$GONE_PID" 2>/dev/null
check 'the leaving client gave up after 3 s' grep -q 'timed out' "$_T/gone.err"
sleep 2
# shellcheck disable=SC2086
kill -CONT $GW
for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
WAITED=$(($(date +%s) - T0))
bad=0
for i in $(seq 1 6); do
	[[ "$(cat "$_T/r$i.status") $(jq -r .content "$_T/r$i.body" | base64 -d)" == "200 x" ]] || bad=$((bad + 1))
	[[ "$(cat "$_T/w$i.status") $(jq -c . "$_T/w$i.body")" == "200 {\"ok\":true,\"path\":\"out/w$i.txt\",\"size\":10}" ]] ||
		bad=$((bad + 1))
done
check_eq 'once git runs, the 6 reads answer the cloned file and the 6 writes 200' 0 "$bad"
head -c 200 "$_T/r1.body" | sed 's/^/#   r1: /'
api POST "$SB/${C[1]}/read" '{"path":"out/w3.txt"}' "$OT"
check_eq 'a write that waited is in the sandbox' 'written-3' "$(_json .content | base64 -d)"
check_eq 'the list: 200 with the clone in it' '200 true' \
	"$(cat "$_T/list.status") $(jq '[.entries[].path] | index("/workspace/repo/x") != null' "$_T/list.body")"
check_eq 'the remove: 204' 204 "$(cat "$_T/rm.status")"
check_eq 'the raw GET: 200 and the bytes' '200 x' "$(cat "$_T/get.status") $(cat "$_T/get.body")"
check_eq 'the raw PUT of 200,000 bytes: 201 and its size' '201 200000' \
	"$(cat "$_T/put.status") $(jq -r .size "$_T/put.body")"
curl -sS -o "$_T/put.back" -H "Authorization: Bearer $OT" "$SANDBOXD_URL$SB/${C[0]}/files/raw/put.bin"
check_eq 'and the bytes in the sandbox are the ones sent' "$(sha256sum <"$_T/put.bin")" \
	"$(sha256sum <"$_T/put.back")"
check_eq 'the raw PUT of 33 MiB + 5 bytes (past the file limit): 201 and its size' \
	"201 $((33 * 1048576 + 5))" "$(cat "$_T/big.status") $(jq -r .size "$_T/big.body")"
curl -sS -o "$_T/big.back" -H "Authorization: Bearer $OT" "$SANDBOXD_URL$SB/${C[1]}/files/raw/big.bin"
check_eq 'and its bytes in the sandbox are the ones sent' "$(sha256sum <"$_T/big.bin")" \
	"$(sha256sum <"$_T/big.back")"
check_eq 'the detached exec: 202 with its id' '202 true' \
	"$(cat "$_T/detach.status") $(jq '.execId | length > 0' "$_T/detach.body")"
check_eq 'the lone MCP call: its result, with its id' '200 7 x' \
	"$(cat "$_T/mcp.status") $(jq -r '.id' "$_T/mcp.body") $(jq -r '.result.structuredContent.content' "$_T/mcp.body")"
check_eq 'every call that waited has one audit row, 200/201/202/204 (the MCP call as a read)' 19 \
	"$(sql "select count(*) from audit_log where sandbox_id in ($CIN) and status in (200, 201, 202, 204)
	         and duration_ms >= 5000
	         and action in ('sandbox.read', 'sandbox.write', 'sandbox.list_files', 'sandbox.remove',
	                        'sandbox.file_get', 'sandbox.file_put', 'sandbox.exec')")"
sql "select action, status, duration_ms from audit_log where sandbox_id in ($CIN) order by id" | sed 's/^/#   /'
check_eq "the rows' durations count from the first arrival (the 7 reads' all past 5 s)" 7 \
	"$(sql "select count(*) from audit_log where sandbox_id in ($CIN) and action = 'sandbox.read'
	         and duration_ms >= 5000 and duration_ms <= $((WAITED * 1000 + 1000))")"
check_eq 'the client that left: one row, 499, written once it left (not at the replay)' '499 true' \
	"$(sql "select string_agg(status::text || ' ' || (duration_ms < 4500), ',') from audit_log
	         where sandbox_id = '${C[0]}' and action = 'sandbox.write' and status >= 400")"
api POST "$SB/${C[0]}/read" '{"path":"gone.txt"}' "$OT"
expect_status 404 "and its write never happened"
