#!/usr/bin/env bash
# t_exec_procs.sh: detached execs as processes (SPEC.md §4 "Processes"): GET …/execs lists
# them newest first with their masked commands and states, POST …/execs/{id}/kill ends the
# whole tree (TERM, then KILL 5 s later for one that ignores it; or the signal asked for)
# and the exec then reads exited, killed, 128 + n; bad input refused by name; rows audited.
# Through the agent, and through Docker exec in the Makefile's SANDBOXD_AGENT=0 pass.
. "$(dirname "$0")/lib.sh"

fails() { ! "$@"; }
# expect_box STATUS TEXT NAME: a sandbox answer {"error": TEXT} with STATUS
expect_box() {
	expect_status "$1" "$3: $1"
	expect_body "$(jq -nc --arg e "$2" '{error: $e}')" "$3: $2"
}
WANT=agent
[ "${SANDBOXD_AGENT:-1}" = 0 ] && WANT=docker
OWNER="sbp$SFX"
mk_sandbox "$OWNER" procs
AT_EXIT+=("api POST '$SB/$ID/close' '' '$OT' >/dev/null 2>&1")
CONTAINER=$(docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$ID")")

detach() { # JSON -> EXEC
	api POST "$SB/$ID/exec" "$1" "$OT"
	EXEC=$(_json .execId)
}
get() { api GET "$SB/$ID/execs/$1" '' "$OT"; }
exited() { get "$1"; [ "$(_json .state)" = exited ]; }
list() { api GET "$SB/$ID/execs" '' "$OT"; }
kill_exec() { api POST "$SB/$ID/execs/$1/kill" "${2:-}" "$OT"; }
# pgrep -c prints how many (0 when none): a failed docker exec prints nothing, never "0".
alive() { docker exec "$CONTAINER" pgrep -c -f "^sleep $1\$"; }

# --- the list -----------------------------------------------------------------------------------
list
expect_status 200 'a sandbox without detached execs: 200'
check_eq 'and an empty list' '[]' "$BODY"
detach '{"cmd":"echo first; exit 3","detach":true}'
FIRST=$EXEC
check 'the first one ends' wait_until 20 exited "$FIRST"
TOK=$(box_token_of "$CONTAINER")
check 'the sandbox token read from the clone config (to be masked)' grep -qE '^dst_' <<<"$TOK"
detach "$(jq -nc --arg t "$TOK" '{cmd: ("echo " + $t + " >/dev/null; sleep 401"), detach: true}')"
SECOND=$EXEC
check 'the second one runs' wait_until 10 eval '[ "$(alive 401)" = 1 ]'
list
expect_status 200 'GET …/execs: 200'
check_eq 'newest first' "$SECOND $FIRST" "$(jq -r 'map(.execId) | join(" ")' <<<"$BODY")"
check_eq 'the running one: its shape' 'cmd,durationMs,execId,startedAt,state' "$(jq -r '.[0] | keys | join(",")' <<<"$BODY")"
check_eq 'running' running "$(jq -r '.[0].state' <<<"$BODY")"
check 'its command masked' fails grep -q dst_ <<<"$BODY"
check_eq 'with *** where the token was' 'echo *** >/dev/null; sleep 401' "$(jq -r '.[0].cmd' <<<"$BODY")"
check_eq 'the ended one: exited, its code, not killed, not timed out' 'exited|3|false|false|echo first; exit 3' \
	"$(jq -r '.[1] | [.state, .exitCode, .killed, .timedOut, .cmd] | join("|")' <<<"$BODY")"
check 'startedAt is a timestamp' grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$' <<<"$(jq -r '.[0].startedAt' <<<"$BODY")"

# --- kill: TERM by default; the tree ends; the exec reads killed, 143 -------------------------
kill_exec "$SECOND"
expect_status 202 'POST …/kill: 202'
check_eq 'naming the exec and the signal' "$SECOND|TERM" "$(_json '[.execId, .signal] | join("|")')"
check 'it ends' wait_until 15 exited "$SECOND"
check_eq 'exited, killed, 143 (TERM), not timed out' 'exited|true|143|false' "$(_json '[.state, .killed, .exitCode, .timedOut] | join("|")')"
check_eq 'nothing of it runs on' 0 "$(alive 401)"
kill_exec "$SECOND"
expect_box 409 "exec $SECOND has already ended" 'a kill of an ended exec: 409'

# A tree that ignores TERM, with a child that left its session: KILL 5 s later ends it all.
detach '{"cmd":"trap \"\" TERM; setsid sleep 402 & sleep 403","detach":true}'
STUBBORN=$EXEC
check 'the stubborn one runs, both sleeps' wait_until 10 eval '[ "$(alive 402)" = 1 ] && [ "$(alive 403)" = 1 ]'
T0=$(date +%s)
kill_exec "$STUBBORN" '{"signal":"TERM"}'
expect_status 202 'TERM asked for: 202'
check 'it ends' wait_until 20 exited "$STUBBORN"
T1=$(date +%s)
check_eq 'killed, with 137: KILL was needed' 'true|137' "$(_json '[.killed, .exitCode] | join("|")')"
check_cond "after the 5 s grace ($((T1 - T0)) s)" "(( T1 - T0 >= 4 ))"
check_eq 'the child that left its session is ended too' '0|0' "$(alive 402)|$(alive 403)"

detach '{"cmd":"sleep 404","detach":true}'
kill_exec "$EXEC" '{"signal":"KILL"}'
expect_status 202 'KILL asked for: 202'
check 'it ends at once' wait_until 5 exited "$EXEC"
check_eq 'killed, 137' 'true|137' "$(_json '[.killed, .exitCode] | join("|")')"
detach '{"cmd":"sleep 405","detach":true}'
INTX=$EXEC
kill_exec "$EXEC" '{"signal":"INT"}'
check 'INT: it ends' wait_until 10 exited "$EXEC"
check_eq 'killed, 130' 'true|130' "$(_json '[.killed, .exitCode] | join("|")')"

# --- bad input ----------------------------------------------------------------------------------
detach '{"cmd":"sleep 406","detach":true}'
RUNNING=$EXEC
kill_exec "$RUNNING" '{"signal":"STOP"}'
expect_box 400 "field 'signal' must be 'TERM', 'KILL', 'INT' or 'HUP'" 'a signal not in the list: 400, naming it'
kill_exec "$RUNNING" '{"signal":9}'
expect_status 400 'a number for the signal: 400'
check_eq 'and it still runs' 1 "$(alive 406)"
kill_exec ex_000000000000000000000000
expect_box 404 'no such exec: ex_000000000000000000000000' 'an unknown exec: 404'
kill_exec 'nope'
expect_box 404 'no such exec: nope' 'a malformed exec id: 404'
READ_TOKEN=$(mk_token "$OWNER" read)
api POST "$SB/$ID/execs/$RUNNING/kill" '' "$READ_TOKEN"
expect_error 403 'this needs a token with write scope' "the creator's read-scoped token cannot kill"
api GET "$SB/$ID/execs" '' "$READ_TOKEN"
expect_error 403 'this needs a token with write scope' 'nor list' 
OTHER="sbpo$SFX"
mk_user "$OTHER" || exit 1
api PUT "/api/v3/repos/$R/collaborators/$OTHER" '{"role":"write"}' "$OT"
api POST "$SB/$ID/execs/$RUNNING/kill" '' "$LAST_TOKEN"
expect_error 403 'not your sandbox' 'another user cannot kill: not your sandbox'
api GET "$SB/$ID/execs" '' "$LAST_TOKEN"
expect_error 403 'not your sandbox' 'nor list'
check_eq 'the exec still runs' 1 "$(alive 406)"

# --- rows ---------------------------------------------------------------------------------------
check_eq "every exec's row names backend $WANT" "$WANT" "$(sql "select string_agg(distinct backend, ',') from detached_execs where sandbox_id = '$ID'")"
check_eq 'the kills are recorded with their first signal' 'INT KILL TERM TERM' \
	"$(sql "select string_agg(kill_signal, ' ' order by kill_signal) from detached_execs where sandbox_id = '$ID' and killed_at is not null")"
check_eq 'the kill is audited with its signal and backend' "202|$INTX|INT|$WANT" \
	"$(sql "select status || '|' || (details->>'exec_id') || '|' || (details->>'signal') || '|' || (details->>'backend') from audit_log where sandbox_id = '$ID' and action = 'sandbox.exec_kill' and status = 202 order by id desc limit 1")"
check_eq 'the lists are audited' t "$(sql "select count(*) >= 2 from audit_log where sandbox_id = '$ID' and action = 'sandbox.execs'")"
check_eq 'the auditor role reads the table' t "$(sql "set role sandboxd_auditor; select count(*) > 0 from detached_execs where sandbox_id = '$ID'")"
api POST "$SB/$ID/close" '' "$OT"
list
expect_status 410 'a closed sandbox: 410'
finish
