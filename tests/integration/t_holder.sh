#!/usr/bin/env bash
# t_holder.sh: a running command costs no worker (README "The holder"). Execs through the
# agent, attached and streamed, are handed to the holder once they started: many of them
# run at once on the stack's 4 workers while the other calls answer; each answers as a
# worker would and gets its audit row, once, with its exit code. A client that leaves ends
# the tree (499). A worker killed right after the hand-over loses nothing; one killed just
# before it leaves a row the reaper ends (502); the holder killed mid-run: nginx's 502, the
# tree ended, the row ended by the reaper, a new holder. SANDBOXD_HOLDER=0: workers keep
# their execs as before.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_guard.sh"

: "${SANDBOXD_PID_FILE:?local.env has no SANDBOXD_PID_FILE}"
M=$(cat "$SANDBOXD_PID_FILE")
holder() { pgrep -x -P "$M" sandboxd-holder 2>/dev/null; }

O="ho$SFX"
mk_repo "$O" r
api POST "$SB" '{}' "$OT"
expect_status 201 'a first sandbox'
S1=$(_json .id)
api POST "$SB" '{}' "$OT"
expect_status 201 'a second sandbox'
S2=$(_json .id)
for s in "$S1" "$S2"; do
	api POST "$SB/$s/exec" '{"cmd":"echo ready"}' "$OT"
	expect_json .stdout ready "its first exec works ($s)"
done
check_cond 'the holder runs beside the workers' '[[ -n $(holder) ]]'

# exec_bg NAME SANDBOX JSON MAXTIME [ACCEPT]: an exec in the background (call_bg).
exec_bg() { call_bg "$1" POST "$SB/$2/exec" "$3" "$4" '' "${5:-}"; }
held() { (($(sql "select count(*) from held_execs where holder is not null and sandbox_id in ('$S1', '$S2')") >= $1)); }
no_busy() { (($(busy_count) == 0)); }
held_none() { [[ $(sql "select count(*) from held_execs where sandbox_id in ('$S1', '$S2')") == 0 ]]; }

# --- many execs at once, 4 workers -------------------------------------------------------------
N=16
pids=()
for i in $(seq 1 $N); do
	s=$S1
	((i % 2)) && s=$S2
	if ((i <= 12)); then
		exec_bg "a$i" "$s" "{\"cmd\":\"sleep 8; echo done-$i\"}" 60
	else
		exec_bg "a$i" "$s" "{\"cmd\":\"sleep 8; echo done-$i\"}" 60 application/x-ndjson
	fi
	pids+=("$BG_PID")
done
check "the holder keeps all $N (held_execs, each with its holder)" wait_until 30 held $N
# A worker hands an exec over and then ends its request (the answer's bytes are the
# holder's, the worker's commit is not): free within moments, while all still run.
check 'no worker is busy with them' wait_until 5 no_busy
check "all $N still run then (each sleeps 8 s)" held $N
check_eq "/metrics: sandboxd_holder_calls{kind=\"exec\"} is $N meanwhile" "$N" "$(holder_metric exec)"
check 'GET /api/v3/user and /healthz answer 200 within 5 s each, 5 times, meanwhile' others_answer "$OT"
check "and the $N execs were still running after them" held $N
for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
bad=0
for i in $(seq 1 12); do
	[[ $(cat "$_T/a$i.status") == 200 ]] || bad=$((bad + 1))
	[[ $(jq -r '"\(.exitCode) \(.stdout)"' "$_T/a$i.body" 2>/dev/null) == "0 done-$i" ]] || bad=$((bad + 1))
done
check_eq 'the 12 attached execs answer 200, exit 0, each its own stdout' 0 "$bad"
bad=0
for i in $(seq 13 $N); do
	[[ $(cat "$_T/a$i.status") == 200 ]] || bad=$((bad + 1))
	grep -qx "{\"stdout\":\"done-$i\\\\n\"}" "$_T/a$i.body" || bad=$((bad + 1))
	tail -n 1 "$_T/a$i.body" | jq -e '.exitCode == 0 and .stdoutBytes > 0' >/dev/null || bad=$((bad + 1))
done
check_eq 'the 4 streamed execs: their line, then the result (exit 0)' 0 "$bad"
head -c 300 "$_T/a13.body" | sed 's/^/#   a13: /'
check_eq "each has one audit row with exit_code 0 and its duration" "$N" \
	"$(sql "select count(*) from audit_log where action = 'sandbox.exec' and status = 200
	         and sandbox_id in ('$S1', '$S2') and details->>'cmd' like 'sleep 8; echo done-%'
	         and (details->>'exit_code')::int = 0 and duration_ms >= 8000
	         and details->>'backend' = 'agent'")"
check_eq 'the streamed ones say so in their rows' 4 \
	"$(sql "select count(*) from audit_log where sandbox_id in ('$S1', '$S2')
	         and details->>'cmd' like 'sleep 8; echo done-%' and details->>'streamed' = 'true'")"
check 'nothing is left in held_execs' wait_until 5 held_none
check_eq '/metrics: and sandboxd_holder_calls{kind="exec"} is back to 0' 0 "$(holder_metric exec)"
check_eq "the sandbox's hold is given back" 0 \
	"$(sql "select count(*) from sandboxes where id in ('$S1', '$S2') and busy_until > now()")"

# --- a command that ends at once is its worker's: no hand-over, no held row -------------------------
handovers() {
	curl -sS --max-time 10 -H "Authorization: Bearer $SANDBOXD_TOKEN" "$SANDBOXD_URL/metrics" |
		awk '$1 == "sandboxd_holder_handovers_total{kind=\"exec\"}" { print $2 }'
}
H0=$(handovers)
for i in 1 2 3; do
	api POST "$SB/$S1/exec" '{"cmd":"echo quick; echo quick-err >&2"}' "$OT"
done
expect_json '"\(.exitCode) \(.stdout)\(.stderr)" | rtrimstr("\n")' $'0 quick\nquick-err' 'a quick command answers as ever'
check_eq 'three quick commands (ending within SANDBOXD_HOLD_AFTER_MS) were not handed over' \
	"$H0" "$(handovers)"
api POST "$SB/$S1/exec" '{"cmd":"sleep 0.3; echo slow"}' "$OT"
expect_json '"\(.exitCode) \(.stdout)" | rtrimstr("\n")' '0 slow' 'a command of 0.3 s answers'
check_eq 'and it was handed over (sandboxd_holder_handovers_total{kind="exec"} + 1)' \
	"$((H0 + 1))" "$(handovers)"
check_eq 'the four have their rows, by the agent' 4 \
	"$(sql "select count(*) from audit_log where action = 'sandbox.exec' and status = 200
	         and sandbox_id = '$S1' and details->>'backend' = 'agent'
	         and details->>'cmd' in ('echo quick; echo quick-err >&2', 'sleep 0.3; echo slow')")"

# --- caps and masking are the holder's too ------------------------------------------------------
api POST "$SB/$S1/exec" '{"cmd":"sleep 0.1; head -c 2000000 /dev/zero | tr \"\\\\0\" a; printf \"\\\\377\"; git -C /workspace/repo config --get-regexp extraheader >&2"}' "$OT"
expect_status 200 'a big output through the holder'
check_eq '(it was handed over)' "$((H0 + 2))" "$(handovers)"
expect_json .truncated true 'is cut with head and tail'
expect_json .stdoutBytes 2000001 '(its raw size counted)'
check_eq 'the token in the config is masked (stderr)' 'http.http://sandboxd.internal:'"${SANDBOXD_URL##*:}"'/.extraheader Authorization: Basic ***' "$(_json .stderr)"
check 'the byte 0xFF became U+FFFD' grep -qF $'\xef\xbf\xbd' <<<"$(_json .stdout)"

# --- MCP's sandbox_exec is held too -------------------------------------------------------------
# A lone tools/call is answered by the holder: the tool's JSON-RPC result, built as the
# worker builds it (api_mcp.c), its row via mcp. So is a batch's exec when it is the last
# message answered (the holder writes the batch's other answers before it); an exec with
# calls after it stays in its worker, which answers them once it ends.
mcp_bg() { # NAME ID(JSON) CMD: a tools/call of sandbox_exec in the background
	local body
	body=$(jq -nc --argjson id "$2" --arg o "$O" --arg s "$S1" --arg c "$3" \
		'{jsonrpc: "2.0", id: $id, method: "tools/call", params: {name: "sandbox_exec",
		  arguments: {owner: $o, repo: "r", sandbox_id: $s, command: $c}}}')
	call_bg "$1" POST /mcp "$body" 60
}
pids=()
for i in 1 2 3 4 5 6; do
	id=$i
	((i % 2)) && id="\"call-$i\""
	mcp_bg "m$i" "$id" "sleep 6; echo mcp-$i"
	pids+=("$BG_PID")
done
check 'the holder keeps the 6 MCP calls' wait_until 20 held 6
check 'no worker is busy with them' wait_until 5 no_busy
check 'all 6 still run then (each sleeps 6 s)' held 6
code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 -H "Authorization: Bearer $OT" \
	"$SANDBOXD_URL/api/v3/user")
check_eq 'GET /api/v3/user answers meanwhile' 200 "$code"
for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
bad=0
for i in 1 2 3 4 5 6; do
	id=$i
	((i % 2)) && id="\"call-$i\""
	[[ $(cat "$_T/m$i.status") == 200 ]] || bad=$((bad + 1))
	jq -e --argjson id "$id" --arg out "mcp-$i"$'\n' '.jsonrpc == "2.0" and .id == $id and
		.result.isError == false and .result.structuredContent.exitCode == 0 and
		.result.structuredContent.stdout == $out and
		(.result.content[0].text | fromjson | .stdout) == $out' "$_T/m$i.body" >/dev/null ||
		bad=$((bad + 1))
done
check_eq "each MCP answer is the tool's result with its own id, exit 0 and its stdout" 0 "$bad"
head -c 300 "$_T/m1.body" | sed 's/^/#   m1: /'
check_eq 'each has one audit row via mcp, with exit_code 0 and its duration' 6 \
	"$(sql "select count(*) from audit_log where action = 'sandbox.exec' and via = 'mcp'
	         and status = 200 and sandbox_id = '$S1' and details->>'cmd' like 'sleep 6; echo mcp-%'
	         and details->>'tool' = 'sandbox_exec' and (details->>'exit_code')::int = 0
	         and duration_ms >= 6000")"
BATCH=$(jq -nc --arg o "$O" --arg s "$S1" '[{jsonrpc: "2.0", id: 7, method: "tools/call",
	params: {name: "sandbox_exec", arguments: {owner: $o, repo: "r", sandbox_id: $s,
	command: "echo in-batch"}}}, {jsonrpc: "2.0", id: 8, method: "ping"}]')
# shellcheck disable=SC2034 # lib.sh's api reads API_HEADERS
API_HEADERS=('MCP-Protocol-Version: 2025-03-26' 'Accept: application/json, text/event-stream')
api POST /mcp "$BATCH" "$OT"
# shellcheck disable=SC2034
API_HEADERS=()
expect_status 200 'a batch with an exec before a ping (its worker answers it: the ping waits for it)'
expect_json '[.[0].result.structuredContent.stdout, (.[1].result | length)] | map(tostring) | join("|")' \
	$'in-batch\n|0' 'both answers, in order'
check 'nothing is left in held_execs' wait_until 5 held_none
# A batch whose last answered message is the exec (a notification after it needs nothing):
# the worker answers the others, the holder the exec, and writes the whole array.
BATCH=$(jq -nc --arg o "$O" --arg s "$S1" '[{jsonrpc: "2.0", id: 9, method: "ping"},
	{jsonrpc: "2.0", id: "ten", method: "tools/list"},
	{jsonrpc: "2.0", id: 11, method: "tools/call", params: {name: "sandbox_exec",
	 arguments: {owner: $o, repo: "r", sandbox_id: $s, command: "sleep 5; echo batch-held"}}},
	{jsonrpc: "2.0", method: "notifications/cancelled", params: {requestId: 1}}]')
MCP_VERSION=2025-03-26 call_bg batch POST /mcp "$BATCH" 60
check 'a batch ending in an exec: the holder keeps the exec' wait_until 20 held 1
check 'and no worker is busy with it' wait_until 5 no_busy
check 'it still runs then (it sleeps 5 s)' held 1
wait "$BG_PID" 2>/dev/null
check_eq 'its answer: 200, the three answers in order, the exec'"'"'s with its stdout' \
	'200 9|ten|11 0 8 batch-held' \
	"$(cat "$_T/batch.status") $(jq -r '(map(.id | tostring) | join("|")) + " " +
		(.[0].result | length | tostring) + " " + (.[1].result.tools | length | tostring) + " " +
		(.[2].result.structuredContent.stdout | rtrimstr("\n"))' "$_T/batch.body")"
head -c 300 "$_T/batch.body" | sed 's/^/#   batch: /'
check_eq 'one audit row each: ping, tools/list by the worker, the exec by the holder' \
	'mcp.ping mcp.tools_list sandbox.exec' \
	"$(sql "select string_agg(action, ' ' order by id) from audit_log where via = 'mcp'
	         and request_id = (select request_id from audit_log where action = 'sandbox.exec'
	                           and details->>'cmd' = 'sleep 5; echo batch-held')")"
check 'nothing is left in held_execs' wait_until 5 held_none

# --- execs waiting for clones that hang cost no worker either ------------------------------------
# The git workers are stopped: new sandboxes' clones hang. 20 execs on two of them are
# handed to the holder before they start (the agent waits for the clone); the workers
# serve meanwhile; once git runs again each clone ends and its execs run. (Two sandboxes:
# the suite's account may have four.)
GW=$(gitworkers)
check 'the git workers are found' test -n "$GW"
# shellcheck disable=SC2086
AT_EXIT+=("kill -CONT $GW 2>/dev/null")
# shellcheck disable=SC2086
kill -STOP $GW
C=()
for k in 1 2; do
	api POST "$SB" '{}' "$OT"
	expect_status 201 "sandbox C$k, whose clone hangs"
	C+=("$(_json .id)")
done
CIN="'${C[0]}', '${C[1]}'"
cpids=()
for i in $(seq 1 20); do
	body="{\"cmd\":\"echo cloned-$i; git log -1 --format=%s\"}"
	if ((i <= 16)); then exec_bg "c$i" "${C[i % 2]}" "$body" 120
	else exec_bg "c$i" "${C[i % 2]}" "$body" 120 application/x-ndjson; fi
	cpids+=("$BG_PID")
done
exec_bg cwd "${C[0]}" '{"cmd":"true","cwd":"nope"}' 120
cpids+=("$BG_PID")
held_c() { (($(sql "select count(*) from held_execs where holder is not null and sandbox_id in ($CIN)") >= 21)); }
check 'the holder keeps all 21 while the clones hang' wait_until 30 held_c
check 'no worker is busy with them' wait_until 5 no_busy
check 'all 21 still held then (the clones still hang)' held_c
check 'GET /api/v3/user and /healthz answer 200 within 5 s each, 5 times, meanwhile' others_answer "$OT"
api GET "$SB/${C[0]}" '' "$OT"
expect_json .clone.state pending 'and the clones are still pending then'
# shellcheck disable=SC2086
kill -CONT $GW
for p in "${cpids[@]}"; do wait "$p" 2>/dev/null; done
bad=0
for i in $(seq 1 16); do
	[[ $(cat "$_T/c$i.status") == 200 ]] || bad=$((bad + 1))
	[[ $(jq -r '"\(.exitCode) \(.stdout)"' "$_T/c$i.body" 2>/dev/null) == "0 cloned-$i"$'\nx' ]] || bad=$((bad + 1))
done
check_eq 'once git runs, the 16 attached execs answer 200, exit 0, in the cloned repository' 0 "$bad"
head -c 300 "$_T/c1.body" | sed 's/^/#   c1: /'
bad=0
for i in $(seq 17 20); do
	[[ $(cat "$_T/c$i.status") == 200 ]] || bad=$((bad + 1))
	[[ $(jq -rs '[.[] | .stdout // empty] | join("")' "$_T/c$i.body" 2>/dev/null) == "cloned-$i"$'\nx' ]] || bad=$((bad + 1))
	tail -n 1 "$_T/c$i.body" | jq -e '.exitCode == 0' >/dev/null || bad=$((bad + 1))
done
check_eq 'the 4 streamed ones: the head once the command starts, its line, the result' 0 "$bad"
head -c 300 "$_T/c17.body" | sed 's/^/#   c17: /'
check_eq 'a cwd that the clone did not make: 400 naming it' \
	'400 {"error":"no such directory: /workspace/repo/nope"}' "$(cat "$_T/cwd.status") $(jq -c . "$_T/cwd.body")"
check_eq 'every one of the 21 has its audit row' 21 \
	"$(sql "select count(*) from audit_log where action = 'sandbox.exec' and sandbox_id in ($CIN)
	         and ((status = 200 and (details->>'exit_code')::int = 0) or status = 400)")"
check_eq "the holder wrote the clones' end into their rows" 'done done' \
	"$(sql "select string_agg(clone_state, ' ') from sandboxes where id in ($CIN)")"
# A clone that fails: git is stopped again, the clone's fetch killed inside.
for s in "${C[@]}"; do api POST "$SB/$s/close" '' "$OT"; done
# shellcheck disable=SC2086
kill -STOP $GW
api POST "$SB" '{}' "$OT"
expect_status 201 'a sandbox whose clone will fail'
CF=$(_json .id)
exec_bg cfail "$CF" '{"cmd":"echo never"}' 120
check 'the holder keeps its exec' wait_until 30 eval \
	"(( \$(sql \"select count(*) from held_execs where holder is not null and sandbox_id = '$CF'\") == 1 ))"
CFC=$(sql "select container_id from sandboxes where id = '$CF'")
check "the clone's fetch (git-remote-http) is killed inside" \
	wait_until 20 docker exec "$CFC" pkill -x git-remote-http
# shellcheck disable=SC2086
kill -CONT $GW
wait "$BG_PID" 2>/dev/null
check_eq 'its exec: 409 with the clone'"'"'s error' '409 clone failed: ' \
	"$(cat "$_T/cfail.status") $(jq -r .error "$_T/cfail.body" | cut -c1-14)"
api GET "$SB/$CF" '' "$OT"
check_eq 'and the sandbox says the same' "failed|$(jq -r .error "$_T/cfail.body" | cut -c15-)" \
	"$(_json '.clone.state + "|" + .clone.error')"
api POST "$SB/$CF/close" '' "$OT"

# --- the client leaves: the tree ends, 499 -------------------------------------------------------
C1=$(box_cid "$S1")
exec_bg gone "$S1" '{"cmd":"sleep 301"}' 3
wait "$BG_PID" 2>/dev/null
check 'the client gave up after 3 s' grep -q 'timed out' "$_T/gone.err"
check 'the tree ends once the client left' wait_until 20 box_ended "$C1" 'sleep 301'
check '499 in the audit row' wait_until 10 eval \
	"[[ \$(sql \"select count(*) from audit_log where sandbox_id = '$S1' and details->>'cmd' = 'sleep 301' and status = 499\") == 1 ]]"

# --- a worker killed right after the hand-over: nothing is lost ----------------------------------
stack_restart 'a worker dies right after a hand-over' SANDBOXD_FAULT_HANDOVER=after
M=$(cat "$SANDBOXD_PID_FILE")
before=$(workers | tr '\n' ' ')
api POST "$SB/$S1/exec" '{"cmd":"sleep 1; echo survived"}' "$OT"
expect_status 200 'the exec answers, from the holder'
expect_json .stdout survived 'with its output'
check 'its worker died (SIGKILL) and the master replaced it' \
	wait_until 15 eval '[[ $(workers | wc -l) == 4 && "$(workers | tr "\n" " ")" != "$before" ]]'
check_eq 'its audit row, once, exit 0' 1 \
	"$(sql "select count(*) from audit_log where sandbox_id = '$S1' and details->>'cmd' = 'sleep 1; echo survived' and status = 200 and (details->>'exit_code')::int = 0")"

# --- a worker killed right before it: the reaper ends the row ------------------------------------
stack_restart 'a worker dies right before a hand-over' SANDBOXD_FAULT_HANDOVER=before
api POST "$SB/$S1/exec" '{"cmd":"sleep 0.5; echo never-answered"}' "$OT"
expect_status 502 "the client gets nginx's 502"
row() { [[ $(sql "select status || ' ' || (details->>'ended_by') from audit_log where sandbox_id = '$S1' and details->>'cmd' = 'sleep 0.5; echo never-answered'") == "502 reaper" ]]; }
check 'the reaper moves its row to the audit log: 502, ended_by reaper (within 45 s)' wait_until 45 row
check_eq 'once' 1 "$(sql "select count(*) from audit_log where sandbox_id = '$S1' and details->>'cmd' = 'sleep 0.5; echo never-answered'")"
check_eq 'with why' 'no holder kept the exec any more: its command was ended' \
	"$(sql "select details->>'error' from audit_log where sandbox_id = '$S1' and details->>'cmd' = 'sleep 0.5; echo never-answered'")"

# --- the holder killed mid-run --------------------------------------------------------------------
stack_restart 'no fault' SANDBOXD_FAULT_HANDOVER=
M=$(cat "$SANDBOXD_PID_FILE")
exec_bg lost "$S1" '{"cmd":"sleep 302"}' 60
check 'the holder keeps it' wait_until 20 eval "[[ \$(sql \"select count(*) from held_execs where sandbox_id = '$S1' and holder is not null\") == 1 ]]"
H=$(holder)
kill -KILL "$H"
wait "$BG_PID" 2>/dev/null
check_eq "its client gets nginx's 502" 502 "$(cat "$_T/lost.status")"
check 'the tree ends with the holder (its agent connection closed)' wait_until 20 box_ended "$C1" 'sleep 302'
check 'the master starts a new holder' wait_until 15 eval '[[ -n $(holder) && $(holder) != "$H" ]]'
lost_row() { [[ $(sql "select status || ' ' || (details->>'ended_by') from audit_log where sandbox_id = '$S1' and details->>'cmd' = 'sleep 302'") == "502 reaper" ]]; }
check 'the reaper ends its row (within 45 s)' wait_until 45 lost_row
api POST "$SB/$S1/exec" '{"cmd":"echo again"}' "$OT"
expect_json .stdout again 'the next exec works, through the new holder'

# --- SANDBOXD_HOLDER=0: the worker keeps the exec ------------------------------------------------
stack_restart 'no holder' SANDBOXD_HOLDER=0
M=$(cat "$SANDBOXD_PID_FILE")
check_cond 'no holder runs' '[[ -z $(holder) ]]'
exec_bg kept "$S1" '{"cmd":"sleep 3; echo kept"}' 30
check 'a worker is busy with it' wait_until 10 eval '(($(busy_count) == 1))'
wait "$BG_PID" 2>/dev/null
check_eq 'it answers as before' 'kept' "$(jq -r .stdout "$_T/kept.body" | tr -d '\n')"
check_eq 'and held_execs never saw it' 0 "$(sql "select count(*) from held_execs")"
stack_restart 'the suite settings' SANDBOXD_HOLDER=

for s in "$S1" "$S2"; do api POST "$SB/$s/close" '' "$OT"; done
finish
