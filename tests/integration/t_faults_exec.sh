#!/usr/bin/env bash
# t_faults_exec.sh: faults in the middle of an exec. The process that keeps it (the holder;
# its worker with the agent off) killed with SIGKILL: the client gets nginx's 502 (JSON),
# the master replaces it, the sandbox goes on working, and the killed exec's whole process
# tree is ended (its connection to the agent or the engine closed, which the agent or the
# exec's wrapper notices). A client that goes away: the keeper notices,
# the tree is ended the same way, the audit row says 499, and the worker serves again. A
# client that leaves while its exec waits for the clone is noticed within seconds too.
. "$(dirname "$0")/lib.sh"

: "${SANDBOXD_PID_FILE:?local.env has no SANDBOXD_PID_FILE}"
HOSTPORT=${SANDBOXD_URL#http://}
M=$(cat "$SANDBOXD_PID_FILE")
N=${SANDBOXD_WORKERS:-4}
nworkers() { workers | wc -l; }

O="fx$SFX"
mk_repo "$O" r
api POST "$SB" '{}' "$OT"
expect_status 201 'a sandbox'
ID=$(_json .id)
CID=$(docker ps -q --no-trunc --filter "label=sandboxd.sandbox=$(owner_label_of "$ID")")
api POST "$SB/$ID/exec" '{"cmd":"echo ready"}' "$OT"
expect_json .stdout ready 'its first exec works (the clone is done)'

# What runs in the container, as the host sees it (no exec needed).
procs() { # fails when the engine cannot say (then nothing counts as ended)
	local out
	out=$(docker top "$CID" -o pid,args 2>/dev/null) || return 1
	tail -n +2 <<<"$out"
}
running() { local p; p=$(procs) && grep -qE "$1" <<<"$p"; }
not_running() { local p; p=$(procs) && ! grep -qE "$1" <<<"$p"; }

# exec_bg NAME JSON MAXTIME: an exec in the background (call_bg).
exec_bg() { call_bg "$1" POST "$SB/$ID/exec" "$2" "$3"; }
bg_result() { # NAME: STATUS and BODY of a background exec once its curl has ended
	LAST_REQ="POST $SB/$ID/exec ($1, in the background)"
	STATUS=$(cat "$_T/$1.status" 2>/dev/null)
	BODY=$(cat "$_T/$1.body" 2>/dev/null)
	HEADERS=$(tr -d '\r' <"$_T/$1.headers" 2>/dev/null)
}


# --- the process that keeps an exec killed with SIGKILL in the middle of it --------------------
# With the agent and the holder on (the default), the holder keeps a running exec (README
# "The holder": t_holder has the rest); with SANDBOXD_AGENT=0 its worker does.
holder() { pgrep -x -P "$M" sandboxd-holder 2>/dev/null; }
HOLDING=worker
[[ ${SANDBOXD_AGENT:-1} != 0 && ${SANDBOXD_HOLDER:-1} != 0 ]] && HOLDING=holder
# A tree whose one part ignores SIGTERM; a time limit far away: only the keeper's death can
# end it within the bounds below.
exec_bg kill '{"cmd":"(trap \"\" TERM; sleep 302) & sleep 303; wait","timeoutMs":600000}' 60
K=$BG_PID
check 'the exec runs in the container' wait_until 30 running 'sleep 30[23]'
if [[ $HOLDING == holder ]]; then
	# The worker hands the run over SANDBOXD_HOLD_AFTER_MS (50) after it starts, its held
	# row written first: the command may show in the container before that (under the
	# sanitizers, by more), so the wait is for the worker to be free.
	check 'no worker is busy with it: the holder has it' wait_until 10 eval '[ -z "$(busy_workers)" ]'
	VICTIM=$(holder)
else
	VICTIM=$(busy_workers)
fi
check_cond "exactly one $HOLDING keeps it (got '${VICTIM//$'\n'/ }')" '[[ $VICTIM =~ ^[0-9]+$ ]]'
[[ $VICTIM =~ ^[0-9]+$ ]] && kill -KILL "$VICTIM"
wait_until 20 eval '! kill -0 $K 2>/dev/null' || true
wait "$K" 2>/dev/null
bg_result kill
expect_status 502 "the client of the killed $HOLDING gets 502 from nginx"
expect_body '{"message": "sandboxd is not answering (bad gateway)"}' 'with nginx JSON error body'
expect_header_match X-Request-Id '^[0-9a-f]{32}$' 'and an X-Request-Id'
if [[ $HOLDING == holder ]]; then
	replaced() { ! kill -0 "$VICTIM" 2>/dev/null && [[ -n $(holder) ]]; }
	check 'the master starts a new holder' wait_until 15 replaced
else
	replaced() { ! kill -0 "$VICTIM" 2>/dev/null && [[ $(nworkers) == "$N" ]]; }
	check "the master replaces the worker ($N workers again)" wait_until 15 replaced
fi
check_eq 'the master is the same process' "$M" "$(cat "$SANDBOXD_PID_FILE")"
check 'the killed exec ends, also the part that ignores SIGTERM, within 20 s' \
	wait_until 20 not_running 'sleep 30[23]'
api POST "$SB/$ID/exec" '{"cmd":"echo again"}' "$OT"
expect_status 200 'the sandbox is usable: the next exec works'
expect_json .stdout again 'with its output'
api GET "$SB/$ID" "" "$OT"
expect_json .state ready 'the sandbox is still ready'

# --- a client that goes away in the middle of an exec ---------------------------------------
check 'nginx lets sandboxd see a client leave (fastcgi_ignore_client_abort is never on)' \
	eval "! grep -qE '^[^#]*fastcgi_ignore_client_abort[[:space:]]+on' '$ROOT/nginx/local.conf' '$ROOT/nginx/sandboxd.conf'"
MARK="gone-$SFX"
exec_bg gone "{\"cmd\":\"(trap \\\"\\\" TERM; sleep 304) & sleep 305; : $MARK\"}" 4
G=$BG_PID
check 'the exec runs in the container' wait_until 30 running 'sleep 30[45]'
wait "$G" 2>/dev/null
check_cond 'curl gave up after 4 s (no answer)' "[[ \$(cat '$_T/gone.status') == 000 ]]"
check "the $HOLDING ends the whole tree, SIGTERM-proof part included, within 20 s" \
	wait_until 20 not_running 'sleep 30[45]'
audit_499() {
	[[ $(sql "select count(*) from audit_log where sandbox_id = '$ID' and action = 'sandbox.exec'
	  and status = 499 and details->>'cmd' like '%$MARK' and details ? 'error'") == 1 ]]
}
check 'its audit row says 499 (the client went away)' wait_until 15 audit_499
api POST "$SB/$ID/exec" '{"cmd":"(sleep 1; echo late) & echo early"}' "$OT"
expect_json .stdout $'early\nlate' 'the next exec works (and its own background output is read)'
# Every worker is free again: N execs that wait for each other (a barrier in the sandbox)
# all answer; a worker still stuck with the abandoned exec would leave one of them queued
# behind the others, and the others waiting for it in vain.
BAR="/tmp/bar-$SFX"
PAR=''
for ((i = 0; i < N; i++)); do
	exec_bg "par$i" "{\"cmd\":\"touch $BAR.$i; for k in \$(seq 150); do [ \$(ls $BAR.* | wc -l) -ge $N ] && echo together && exit; sleep 0.1; done; echo alone\"}" 60
	PAR+=" $BG_PID"
done
# shellcheck disable=SC2086
wait $PAR 2>/dev/null
ok_par=0
for ((i = 0; i < N; i++)); do
	bg_result "par$i"
	[[ $STATUS == 200 && $(_json .stdout) == together ]] && ok_par=$((ok_par + 1))
done
check_eq "then $N execs at once (one per worker) run together" "$N" "$ok_par"
check_eq 'no worker was lost on the way' "$N" "$(nworkers)"

# A client that leaves an exec with a short time limit: the result is simply not sent.
exec_bg short '{"cmd":"sleep 306","timeoutMs":1500}' 1
wait "$BG_PID" 2>/dev/null
check 'an abandoned exec with its own limit ends too' wait_until 20 not_running 'sleep 306'

# --- a client that leaves while its exec waits for the clone -----------------------------------
# The git workers are stopped, so a new sandbox's clone hangs; an exec on it waits for the
# clone (up to 3 minutes). The client leaves after 3 s: the worker notices between its waits
# (5 s at most), audits 499 and serves again, long before the clone wait's end.
GW=$(gitworkers)
check 'the git workers are found' test -n "$GW"
# shellcheck disable=SC2086
AT_EXIT+=("kill -CONT $GW 2>/dev/null")
# shellcheck disable=SC2086
kill -STOP $GW
api POST "$SB" '{}' "$OT"
expect_status 201 'a sandbox whose clone hangs (git is stopped)'
HID=$(_json .id)
KEEP=$ID ID=$HID
exec_bg clonewait '{"cmd":"echo never"}' 3
wait "$BG_PID" 2>/dev/null
ID=$KEEP
clone_499() {
	[[ $(sql "select count(*) from audit_log where sandbox_id = '$HID' and action = 'sandbox.exec'
	  and status = 499") == 1 ]]
}
check 'the exec waiting for the clone is audited 499 within 10 s of the client leaving' \
	wait_until 10 clone_499
# shellcheck disable=SC2086
kill -CONT $GW
cloned() {
	api GET "$SB/$HID" "" "$OT"
	[[ $(_json .clone.state) == done ]]
}
check 'git resumed, the clone finishes' wait_until 60 cloned
api POST "$SB/$HID/exec" '{"cmd":"cat x"}' "$OT"
expect_json .stdout x 'and an exec on it works'
api POST "$SB/$HID/close" "" "$OT"

api POST "$SB/$ID/close" "" "$OT"
expect_status 204 'closed'
finish
