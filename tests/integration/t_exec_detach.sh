#!/usr/bin/env bash
# t_exec_detach.sh: detached exec: 202 and an id at once, the command running on, its output
# read back by byte offsets (at most 1 MiB a call, whole when put together), the exit code,
# time limits, dropped old output, masking, who may read, and activity. Through the agent
# (the default), and through Docker exec when the Makefile's second pass runs it with
# SANDBOXD_AGENT=0: every start and read row names that backend.
. "$(dirname "$0")/lib.sh"

WANT=agent
[ "${SANDBOXD_AGENT:-1}" = 0 ] && WANT=docker

fails() { ! "$@"; }
mk_sandbox "sbd$SFX" detach
CONTAINER=$(docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$ID")")

detach() { # JSON -> EXEC
	api POST "$SB/$ID/exec" "$1" "$OT"
	EXEC=$(_json .execId)
}
get() { api GET "$SB/$ID/execs/$EXEC?stdoutOffset=${1:-0}&stderrOffset=${2:-0}" '' "$OT"; }
exited() { get "$@"; [ "$(_json .state)" = exited ]; }
# all EXEC: reads the whole output by offsets into $_T/out and $_T/err; CALLS counts the calls
all() {
	local so=0 se=0 state=running
	: >"$_T/out"
	: >"$_T/err"
	CALLS=0
	while ((CALLS < 400)); do
		get "$so" "$se"
		[ "$STATUS" = 200 ] || return 1
		CALLS=$((CALLS + 1))
		jq -j .stdout <<<"$BODY" >>"$_T/out"
		jq -j .stderr <<<"$BODY" >>"$_T/err"
		local nso nse
		nso=$(_json .stdoutOffset)
		nse=$(_json .stderrOffset)
		state=$(_json .state)
		if [ "$state" = exited ] && [ "$nso" = "$so" ] && [ "$nse" = "$se" ]; then return 0; fi
		so=$nso se=$nse
		[ "$state" = exited ] || sleep 0.2
	done
	return 1
}

# --- the command runs on; its output comes back by offsets ------------------------------------
detach '{"cmd":"echo start; sleep 3; echo done; echo oops >&2; exit 7","detach":true}'
expect_status 202 'detach: 202 at once'
expect_json_match .execId '^ex_[0-9a-f]{24}$' 'with an execId'
check 'the output shows while it runs' wait_until 20 eval 'get; [ "$(_json .stdout)" = start ]'
expect_json .state running 'state running'
expect_keys . 'durationMs,stderr,stderrOffset,stdout,stdoutOffset,state' 'the running shape: no exit code yet'
expect_json .stdoutOffset 6 'stdoutOffset past what was read'
check 'it ends' wait_until 30 exited
expect_json .exitCode 7 'the exit code'
expect_json .timedOut false 'not timed out'
check_cond 'durationMs counts its run' "(( $(_json .durationMs) >= 2900 ))"
get 6 0
expect_json .stdout done 'from stdoutOffset 6: only what came after'
expect_json .stderr oops 'stderr apart'
get 11 5
expect_json .stdout '' 'at the end: nothing more'
expect_json .stdoutOffset 11 'and the same offset'
get 12 0
expect_status 400 'an offset past the output: 400'
expect_json .error 'stdoutOffset 12 is past the output (11 bytes so far)' 'naming it'
api GET "$SB/$ID/execs/$EXEC?stdoutOffset=-1" '' "$OT"
expect_status 400 'a negative offset: 400'
api GET "$SB/$ID/execs/ex_000000000000000000000000" '' "$OT"
expect_status 404 'an unknown exec: 404'
expect_json .error 'no such exec: ex_000000000000000000000000' 'naming it'
api GET "$SB/$ID/execs/..%2f..%2fetc" '' "$OT"
expect_status 404 'a malformed exec id: 404'

# --- big output in pieces of at most 1 MiB ----------------------------------------------------
detach '{"cmd":"seq 1 300000; seq 1 1000 >&2","detach":true}'
check 'a big output ends' wait_until 30 exited
get
check_cond 'one call gives at most 1 MiB' "(( $(jq -j .stdout <<<"$BODY" | wc -c) <= 1048576 && $(_json .stdoutOffset) < 1978895 ))"
check 'read by offsets' all
check 'put together, the output is exact' cmp -s "$_T/out" <(seq 1 300000)
check 'stderr too' cmp -s "$_T/err" <(seq 1 1000)
check_cond 'in several calls' "(( CALLS >= 2 ))"

# --- limits, masking --------------------------------------------------------------------------
# pgrep -c prints how many (0 when none): a failed docker exec prints nothing and never
# passes for "none".
sleepers() { docker exec "$CONTAINER" pgrep -c -f '^sleep 6[01]$'; }
detach '{"cmd":"sleep 60 & sleep 61","detach":true,"timeoutMs":4000}'
check 'while it runs, both of its sleeps are there' wait_until 4 eval '[ "$(sleepers)" = 2 ]'
check 'past its limit it ends' wait_until 30 exited
expect_json .exitCode 124 'with 124'
expect_json .timedOut true 'and timedOut'
check 'nothing of its process tree runs on' wait_until 15 eval '[ "$(sleepers)" = 0 ]'
detach '{"cmd":"git config --list; cat .git/config","detach":true}'
check 'the git config exec ends' wait_until 20 exited
check 'the sandbox token is masked' fails grep -q dst_ <<<"$BODY"
check 'with ***' grep -q '\*\*\*' <<<"$(_json .stdout)"
detach '{"cmd":"head -c 75497472 /dev/zero | tr \"\\0\" a; echo; echo tail-end","detach":true}'
check 'a 72 MiB output ends' wait_until 90 exited
get
check 'the oldest output was dropped: the marker says how much' grep -qE '^\[… [0-9]+ bytes omitted …\]$' <<<"$(_json .stdout | head -n 1)"
check_cond 'and the offset moved past it' "(( $(_json .stdoutOffset) > 8388608 ))"
check 'the end is kept' all
check_eq 'its last line' tail-end "$(tail -n 1 "$_T/out")"

# --- who may read, activity, audit ------------------------------------------------------------
OTHER="sbdo$SFX"
mk_user "$OTHER" || exit 1
api PUT "/api/v3/repos/$R/collaborators/$OTHER" '{"role":"write"}' "$OT"
api GET "$SB/$ID/execs/$EXEC" '' "$LAST_TOKEN"
expect_error 403 'not your sandbox' "another user: not your sandbox"
detach '{"cmd":"sleep 1","detach":true,"timeoutMs":1200000}'
check_eq 'a detached exec holds the idle deadline past its limit' t "$(sql "select idle_stop_at > now() + interval '20 minutes' from sandboxes where id = '$ID'")"
# The 20-minute exec's hold is over, as the clock would have it.
sql "update sandboxes set busy_until = now() where id = '$ID'" >/dev/null
api PATCH "$SB/$ID" '{"idle_timeout_seconds":60}' "$OT"
expect_status 200 "the sandbox's own idle limit: 60 s"
detach '{"cmd":"sleep 1","detach":true,"timeoutMs":120000}'
check_cond "an exec holds the deadline past its limit and its grace by the sandbox's own limit (120 + 5 + 60 s)" \
	"(( \$(sql \"select round(extract(epoch from idle_stop_at - now())) from sandboxes where id = '$ID'\") >= 175 && \$(sql \"select round(extract(epoch from idle_stop_at - now())) from sandboxes where id = '$ID'\") <= 186 ))"
api GET "$SB/$ID" '' "$OT"
check_cond 'a call while it runs does not shorten that hold' \
	"(( \$(sql \"select round(extract(epoch from idle_stop_at - now())) from sandboxes where id = '$ID'\") >= 175 ))"
sql "update sandboxes set busy_until = now() where id = '$ID'" >/dev/null
api GET "$SB/$ID" '' "$OT"
check_cond 'once nothing holds it, a call moves the deadline to its own limit (60 s)' \
	"(( \$(sql \"select round(extract(epoch from idle_stop_at - now())) from sandboxes where id = '$ID'\") <= 61 ))"
check_eq 'the start is audited' "true|$EXEC" "$(sql "select (details->>'detached')::boolean || '|' || (details->>'exec_id') from audit_log where sandbox_id = '$ID' and action = 'sandbox.exec' order by at desc limit 1")"
left() { sql "select round(extract(epoch from idle_stop_at - now())) from sandboxes where id = '$ID'"; }
# An attached exec holds the sandbox while it runs and gives the hold back when it ends.
curl -s -o /dev/null -H "Authorization: Bearer $OT" -H 'Content-Type: application/json' \
	-d '{"cmd":"sleep 4","timeoutMs":30000}' "$SANDBOXD_URL$SB/$ID/exec" &
ATT=$!
check 'while an attached exec of 30 s runs, the hold is its limit, grace and idle limit' \
	wait_until 3 eval '(( $(left) >= 90 ))'
api GET "$SB/$ID" '' "$OT"
check_cond 'a call meanwhile keeps it' "(( \$(left) >= 85 ))"
wait "$ATT"
api GET "$SB/$ID" '' "$OT"
check_cond 'once it ended, a call counts the idle limit from now' "(( \$(left) <= 61 ))"
check_eq "every start and read row (but the unknown exec's 404) says backend $WANT, with no agent error" "$WANT|0" \
	"$(sql "select string_agg(distinct details->>'backend', ',') || '|' || count(*) filter (where details ? 'agent_error') from audit_log where sandbox_id = '$ID' and status <> 404 and (action = 'sandbox.exec_get' or (action = 'sandbox.exec' and details ? 'detached'))")"
check_cond 'reads are audited' "[ \"\$(sql \"select count(*) > 5 from audit_log where sandbox_id = '$ID' and action = 'sandbox.exec_get'\")\" = t ]"
api POST "$SB/$ID/close" '' "$OT"
api GET "$SB/$ID/execs/$EXEC" '' "$OT"
expect_status 410 'a closed sandbox: 410'
finish
