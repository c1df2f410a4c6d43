#!/usr/bin/env bash
# t_exec_caps.sh: a sandbox cannot push its execs back onto the workers (issue 32 A.2,
# decisions 0085, 0086). The service counts running execs (attached, streamed, detached) per
# sandbox and per account in the database and refuses past SANDBOXD_EXECS_PER_SANDBOX /
# SANDBOXD_EXECS_PER_ACCOUNT with a named 429 and Retry-After; with the agent on, an agent
# that is busy (its connections filled from inside) or gone (killed from inside) is a named
# 429 or 502, never a Docker exec in a worker (the audit row's backend is never docker).
# Meanwhile another account's execs run and its calls answer.
. "$(dirname "$0")/lib.sh"

if [ "${SANDBOXD_AGENT:-1}" = 0 ]; then
	skip 'the agent is off: the caps and the refusals are the agent-on pass' 'SANDBOXD_AGENT=0'
	finish
fi

# Small caps, so that a few sleeps reach them; the suite's settings again at the end.
stack_restart 'caps: 4 execs per sandbox, 6 per account; 2, 3 and 4 parked calls' \
	SANDBOXD_EXECS_PER_SANDBOX=4 SANDBOXD_EXECS_PER_ACCOUNT=6 SANDBOXD_PARKED_PER_SANDBOX=2 \
	SANDBOXD_PARKED_PER_ACCOUNT=3 SANDBOXD_HOLDER_PARKED=4 SANDBOXD_PARK_MEMORY=1024
AT_EXIT+=("stack_up >/dev/null 2>&1")

# The other account first: its sandbox, which must keep working throughout.
mk_sandbox "capo$SFX" other
OTHER_TOKEN=$OT OTHER_SB=$SB OTHER_ID=$ID
AT_EXIT+=("api POST '$OTHER_SB/$OTHER_ID/close' '' '$OTHER_TOKEN' >/dev/null 2>&1")
# The account that does all of the attack: two sandboxes on one repository.
mk_sandbox "capa$SFX" caps
A1=$ID
AT_EXIT+=("api POST '$SB/$A1/close' '' '$OT' >/dev/null 2>&1")
api POST "$SB" '{}' "$OT"
expect_status 201 'a second sandbox of the same account'
A2=$(_json .id)
AT_EXIT+=("api POST '$SB/$A2/close' '' '$OT' >/dev/null 2>&1")

detach() { # SANDBOX CMD -> STATUS, EXEC
	api POST "$SB/$1/exec" "$(jq -n --arg c "$2" '{cmd: $c, detach: true, timeoutMs: 600000}')" "$OT"
	EXEC=$(_json '.execId // empty')
}
run() { # SANDBOX CMD [TOKEN SB]
	api POST "${4:-$SB}/$1/exec" "$(jq -n --arg c "$2" '{cmd: $c}')" "${3:-$OT}"
}
stream() { # SANDBOX CMD: as run, asking for NDJSON
	API_HEADERS=('Accept: application/x-ndjson')
	api POST "$SB/$1/exec" "$(jq -n --arg c "$2" '{cmd: $c}')" "$OT"
	API_HEADERS=()
}
slots() { sql "select count(*) from exec_slots where sandbox_id = '$1'"; }
last_exec_row() { # SANDBOX: status|backend of its last exec row
	sql "select concat_ws('|', status, details->>'backend') from audit_log where sandbox_id = '$1' and action = 'sandbox.exec' order by id desc limit 1"
}
other_works() { # the other account: an exec and GET /api/v3/user, both answering
	run "$OTHER_ID" 'echo other-ok' "$OTHER_TOKEN" "$OTHER_SB"
	[ "$STATUS|$(_json .stdout)" = $'200|other-ok' ] || return 1
	api GET /api/v3/user '' "$OTHER_TOKEN"
	[ "$STATUS|$(_json .login)" = "200|capo$SFX" ]
}

# --- per sandbox --------------------------------------------------------------------------------
IDS=()
for i in 1 2 3 4; do
	detach "$A1" "sleep 300"
	expect_status 202 "detached sleep $i of 4 in the first sandbox: 202"
	IDS+=("$EXEC")
done
check_eq 'four slots taken, one per running exec' 4 "$(slots "$A1")"
detach "$A1" "sleep 300"
check_eq 'the fifth detached exec: 429 naming the cap' \
	'429|too many execs running in this sandbox (4)' "$STATUS|$(_json .error)"
expect_header Retry-After 5 'with Retry-After: 5'
check_eq 'and no exec id' '' "$EXEC"
run "$A1" 'echo attached'
check_eq 'an attached exec past it too' '429|too many execs running in this sandbox (4)' \
	"$STATUS|$(_json .error)"
stream "$A1" 'echo streamed'
check_eq 'a streamed exec too' '429|too many execs running in this sandbox (4)' "$STATUS|$(_json .error)"
check_eq 'the refusal is audited as the cap' '429|exec_cap' \
	"$(sql "select concat_ws('|', status, details->>'refused') from audit_log where sandbox_id = '$A1' and action = 'sandbox.exec' order by id desc limit 1")"
check 'another account meanwhile: its exec runs and GET /api/v3/user answers' other_works

# --- per account, across its sandboxes ----------------------------------------------------------
run "$A2" 'echo second'
check_eq 'the second sandbox runs an attached exec (5 of 6 for the account)' '200|second' \
	"$STATUS|$(_json .stdout)"
check_eq 'whose slot went back at its end' 0 "$(slots "$A2")"
run "$A2" 'sleep 1; echo held'
check_eq 'and one the holder took over (past SANDBOXD_HOLD_AFTER_MS)' '200|held' "$STATUS|$(_json .stdout)"
check 'whose slot the holder gave back with its row' wait_until 10 eval '[ "$(slots "$A2")" = 0 ]'
for i in 1 2; do
	detach "$A2" "sleep 300"
	expect_status 202 "detached sleep $i of 2 in the second sandbox: 202"
	IDS+=("$EXEC")
done
detach "$A2" "sleep 300"
check_eq 'the seventh for the account: 429 naming the account cap' \
	'429|too many execs running for this account (6)' "$STATUS|$(_json .error)"
expect_header Retry-After 5 'with Retry-After: 5'
check 'another account meanwhile: its exec runs and GET /api/v3/user answers' other_works

# An exec that ends gives its slot back: two of the first sandbox's killed, read as ended.
for k in 0 1; do
	api POST "$SB/$A1/execs/${IDS[$k]}/kill" '{"signal":"KILL"}' "$OT"
	expect_status 202 "detached exec $((k + 1)) killed"
	check "and read as exited" wait_until 20 eval \
		'api GET "$SB/$A1/execs/${IDS[$k]}" "" "$OT"; [ "$(_json .state)" = exited ]'
done
check_eq 'their slots went back' 2 "$(slots "$A1")"
run "$A2" 'echo room-again'
check_eq 'the account has room again: an exec runs' '200|room-again' "$STATUS|$(_json .stdout)"
# Detached execs that ended with nobody reading them: asked of the agent past a cap.
detach "$A2" "true"
expect_status 202 'a detached exec that ends at once (3 of 4 in the second sandbox)'
detach "$A2" "sleep 300"
expect_status 202 'a detached sleep (4 of 4)'
api POST "$SB/$A2/execs/$EXEC/kill" '{"signal":"KILL"}' "$OT"
expect_status 202 'killed, and not read'
check_eq 'their slots still there until someone asks' 4 "$(slots "$A2")"
ran() { run "$A2" 'echo ended-unread-count-no-more'; [ "$STATUS" = 200 ]; }
check 'past the cap the service asks the agent: ended execs count no more' wait_until 20 ran
check_eq 'the two still running keep theirs' 2 "$(sql "select count(*) from exec_slots where sandbox_id = '$A2' and exec_id is not null")"

# --- the agent busy: its connections filled from inside -----------------------------------------
# The sandbox's own process opens connections to its agent faster than the agent's handshake
# limit (10 s) lets them go: 40 more every half second, so every slot is taken again within
# that time of freeing, however slow the machine (CI's sanitizer pass once found the agent
# free for seconds between rounds 4 s apart). It closes its oldest past 400, so that its own
# file limit never stops it, and ends after 30 s.
detach "$A2" 'end=$((SECONDS + 30)); fds=(); while ((SECONDS < end)); do for i in $(seq 40); do exec {f}<>/dev/tcp/127.0.0.1/7070 && fds+=("$f"); done; while ((${#fds[@]} > 400)); do g=${fds[0]}; exec {g}>&-; fds=("${fds[@]:1}"); done; sleep 0.5; done'
FILL_START=$SECONDS
expect_status 202 'a detached exec that fills the agent'"'"'s connections'
FILLER=$EXEC
busy() { run "$A2" 'echo through'; [ "$STATUS" = 429 ]; }
check 'an attached exec then: 429' wait_until 20 busy
expect_json_match .error '^agent busy: too many connections' 'named: agent busy'
expect_header Retry-After 5 'with Retry-After: 5'
check_eq 'its row says agent, never docker' '429|agent' "$(last_exec_row "$A2")"
check 'another account meanwhile: its exec runs and GET /api/v3/user answers' other_works
# An exec may slip through between two of the filler's rounds, so "back" is asked only once
# the filler is over: it started before its 202 and ends 30 s after it started (a last
# round of half a second, and a margin).
FILL_END=$((FILL_START + 33))
((SECONDS < FILL_END)) && sleep $((FILL_END - SECONDS))
back() { run "$A2" 'echo free'; [ "$STATUS|$(_json .stdout)" = $'200|free' ]; }
check 'once the filler ends, the agent takes execs again' wait_until 40 back

# --- the agent killed from inside ---------------------------------------------------------------
run "$A2" 'kill -9 $(cat /workspace/.sandboxd/agent.pid); echo killed'
check_eq 'the exec that kills its agent answers' '200|killed' "$STATUS|$(_json .stdout)"
run "$A2" 'echo after'
check_eq 'the next exec: 502, named' "502|the sandbox's agent cannot be reached" \
	"$STATUS|$(_json .error | cut -d: -f1)"
check_eq 'its row says agent, not docker' '502|agent' "$(last_exec_row "$A2")"
detach "$A2" 'echo detached-after'
check_eq 'a detached exec: 502 too, no exec id' "502|the sandbox's agent cannot be reached|" \
	"$STATUS|$(_json .error | cut -d: -f1)|$EXEC"
stream "$A2" 'echo streamed-after'
check_eq 'a streamed exec: 502 too' "502|the sandbox's agent cannot be reached" \
	"$STATUS|$(_json .error | cut -d: -f1)"
check_eq 'no exec row of this account names the docker backend' 0 \
	"$(sql "select count(*) from audit_log where sandbox_id in ('$A1', '$A2') and action = 'sandbox.exec' and details->>'backend' = 'docker'")"
check_eq 'and the refusals left no slot behind' 0 \
	"$(sql "select count(*) from exec_slots where sandbox_id = '$A2' and exec_id is null")"
check 'another account meanwhile: its exec runs and GET /api/v3/user answers' other_works
check_eq "the other account's execs ran through its agent" 0 \
	"$(sql "select count(*) from audit_log where sandbox_id = '$OTHER_ID' and action = 'sandbox.exec' and details->>'backend' <> 'agent'")"

# --- a slot whose owner died never stays: expired rows are the reaper's -----------------------
sql "insert into exec_slots (sandbox_id, account_id, request_id, expires_at) select '$A1', account_id, 'dead-$SFX', now() - interval '1 second' from sandboxes where id = '$A1'" >/dev/null
check 'an expired slot (a dead worker'"'"'s) is deleted by the reaper' wait_until 20 eval \
	'[ "$(sql "select count(*) from exec_slots where request_id = '"'dead-$SFX'"'")" = 0 ]'

# Closing a sandbox gives its slots back.
api POST "$SB/$A1/close" '' "$OT"
expect_status 204 'the first sandbox closed'
check 'its slots are gone' wait_until 20 eval '[ "$(slots "$A1")" = 0 ]'
api POST "$SB/$A2/close" '' "$OT"
expect_status 204 'the second sandbox closed'

# --- calls parked while a clone runs (decision 0087) -------------------------------------------
# git's workers stopped: new sandboxes' clones hang, and calls on them park with the holder.
: "${SANDBOXD_PID_FILE:?local.env has no SANDBOXD_PID_FILE}"
M=$(cat "$SANDBOXD_PID_FILE")
GW=$(gitworkers)
check 'the git workers are found' test -n "$GW"
# shellcheck disable=SC2086
AT_EXIT+=("kill -CONT $GW 2>/dev/null")
# shellcheck disable=SC2086
kill -STOP $GW
P=()
for k in 1 2; do
	api POST "$SB" '{}' "$OT"
	expect_status 201 "sandbox P$k, whose clone hangs"
	P+=("$(_json .id)")
	AT_EXIT+=("api POST '$SB/${P[-1]}/close' '' '$OT' >/dev/null 2>&1")
done
api POST "$OTHER_SB" '{}' "$OTHER_TOKEN"
expect_status 201 "the other account's sandbox, whose clone hangs too"
P3=$(_json .id)
AT_EXIT+=("api POST '$OTHER_SB/$P3/close' '' '$OTHER_TOKEN' >/dev/null 2>&1")
parked() { sql "select count(*) from exec_slots where kind = 'parked' and sandbox_id in ($1)"; }
# Bodies past SANDBOXD_PARK_MEMORY (1 KiB here) wait in an unlinked spool file.
BIG=$(head -c 4096 /dev/zero | base64 -w0)
call_bg pa POST "$SB/${P[0]}/write" "{\"path\":\"big.txt\",\"content\":\"$BIG\"}"
call_bg pb POST "$SB/${P[0]}/read" '{"path":"x"}'
check 'two calls parked on the first' wait_until 20 eval '[ "$(parked "'"'${P[0]}'"'")" = 2 ]'
HP=$(pgrep -x -P "$M" sandboxd-holder 2>/dev/null)
check 'the large body waits in an unlinked file of the spool folder (an O_TMPFILE mapping)' \
	grep -qE '/#[0-9]+ \(deleted\)$' "/proc/$HP/maps"
check_eq 'the small one in memory (one memfd)' 1 "$(grep -c 'memfd:sandboxd-park' "/proc/$HP/maps")"
api POST "$SB/${P[0]}/read" '{"path":"x"}' "$OT"
check_eq 'a third on the same sandbox: 429 naming the cap' \
	'429|too many calls waiting for the clone in this sandbox (2)' "$STATUS|$(_json .error)"
expect_header Retry-After 5 'with Retry-After: 5'
call_bg pc POST "$SB/${P[1]}/read" '{"path":"x"}'
check 'one on the second sandbox parks (3 for the account)' wait_until 20 eval \
	'[ "$(parked "'"'${P[1]}'"'")" = 1 ]'
api POST "$SB/${P[1]}/read" '{"path":"x"}' "$OT"
check_eq 'a fourth for the account: 429 naming the account cap' \
	'429|too many calls waiting for the clone for this account (3)' "$STATUS|$(_json .error)"
BG_TOKEN=$OTHER_TOKEN call_bg pd POST "$OTHER_SB/$P3/read" '{"path":"x"}'
check "the other account's call parks (4 in the holder)" wait_until 20 eval \
	'[ "$(parked "'"'$P3'"'")" = 1 ]'
api POST "$OTHER_SB/$P3/read" '{"path":"x"}' "$OTHER_TOKEN"
check_eq "a fifth in the holder: 503 naming the holder's cap" \
	'503|the holder keeps too many parked calls (4)' "$STATUS|$(_json .message)"
check 'its slot went back with it' wait_until 10 eval '[ "$(parked "'"'$P3'"'")" = 1 ]'
check 'another account meanwhile: its exec runs and GET /api/v3/user answers' other_works
# shellcheck disable=SC2086
kill -CONT $GW
for n in pa pb pc pd; do
	check "parked call $n answers 200 once the clone is done" wait_until 120 eval \
		'[ "$(cat "$_T/'"$n"'.status" 2>/dev/null)" = 200 ]'
done
check 'every parked slot went back' wait_until 20 eval \
	'[ "$(parked "'"'${P[0]}', '${P[1]}', '$P3'"'")" = 0 ]'
finish
