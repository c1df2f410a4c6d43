#!/usr/bin/env bash
# t_workers.sh: process faults. A worker killed with SIGKILL is replaced and the
# next request succeeds; SIGHUP replaces the workers; SIGTERM drains a request in
# flight and the master exits; local-stack.sh up brings sandboxd back.
. "$(dirname "$0")/lib.sh"

: "${SANDBOXD_PID_FILE:?local.env has no SANDBOXD_PID_FILE}"

master() { cat "$SANDBOXD_PID_FILE" 2>/dev/null; }
workers() { pgrep -x -P "$M" sandboxd 2>/dev/null | sort -n; }  # not sandboxd-reaper
nworkers() { workers | wc -l; }
alive() { kill -0 "$1" 2>/dev/null; }
dead() { ! kill -0 "$1" 2>/dev/null; }

M=$(master)
if [[ ! $M =~ ^[0-9]+$ ]] || ! alive "$M"; then
	fail 'the master from SANDBOXD_PID_FILE is running' "pid file $SANDBOXD_PID_FILE holds '$M'"
	finish
fi
ok "the master ($M) is running"
# How many workers the master was told to run: SANDBOXD_WORKERS in its own environment
# (sandboxd's default, 16, when it has none), never the count it happens to have.
WANT=$(tr '\0' '\n' <"/proc/$M/environ" 2>/dev/null | sed -n 's/^SANDBOXD_WORKERS=//p')
WANT=${WANT:-16}
[[ -n ${SANDBOXD_WORKERS:-} ]] && check_eq 'the stack runs sandboxd with the SANDBOXD_WORKERS this test was given' \
	"$SANDBOXD_WORKERS" "$WANT"
# the workers may still be starting
wait_until 10 eval '[ "$(nworkers)" -ge "$WANT" ]' || true
N0=$(nworkers)
check_eq "the master has SANDBOXD_WORKERS ($WANT) workers" "$WANT" "$N0"

all_ok() { # COUNT: COUNT sequential GET /api/v3/user, all 200
	local i bad=0
	for ((i = 0; i < $1; i++)); do
		api GET /api/v3/user
		[[ $STATUS == 200 ]] || bad=$((bad + 1))
	done
	((bad == 0))
}

# --- SIGKILL one worker ----------------------------------------------------------
VICTIM=$(workers | head -n 1)
kill -KILL "$VICTIM"
back() { dead "$VICTIM" && [[ $(nworkers) == "$N0" ]] && ! workers | grep -qx "$VICTIM"; }
check "SIGKILL worker $VICTIM: the worker count returns to $N0 within 10 s" wait_until 10 back
api GET /api/v3/user
expect_status 200 'the next request after the SIGKILL succeeds'
check "then $((2 * N0)) requests in a row succeed" all_ok $((2 * N0))
check_eq 'the master is the same process' "$M" "$(master)"

# --- SIGKILL every worker at once --------------------------------------------------
OLD=$(workers | tr '\n' ' ')
# shellcheck disable=SC2086
kill -KILL $OLD
all_new() {
	local p
	for p in $OLD; do alive "$p" && return 1; done
	[[ $(nworkers) == "$N0" ]]
}
check "SIGKILL every worker: $N0 new workers within 15 s" wait_until 15 all_new
check 'the master survives losing every worker' alive "$M"
api GET /api/v3/user
expect_status 200 'the next request after losing every worker succeeds'

# --- SIGHUP replaces the workers -------------------------------------------------------
OLD=$(workers | tr '\n' ' ')
kill -HUP "$M"
check "SIGHUP: every worker replaced, still $N0, within 10 s" wait_until 10 all_new
check 'SIGHUP: the master stays' alive "$M"
check "after SIGHUP $((2 * N0)) requests in a row succeed" all_ok $((2 * N0))

# --- SIGTERM drains a request in flight --------------------------------------------------
# Hold an exclusive lock on accounts, so that a GET /api/v3/user blocks inside the
# worker; SIGTERM the master while it waits; the request must still finish.
lock_held() {
	[[ $(sql_super "select count(*) from pg_locks l join pg_class c on c.oid = l.relation
	  where c.relname = 'accounts' and l.mode = 'AccessExclusiveLock' and l.granted") -ge 1 ]]
}
request_waits() {
	[[ $(sql_super "select count(*) from pg_stat_activity where wait_event_type = 'Lock'
	  and pid <> pg_backend_pid() and query not ilike '%pg_sleep%'") -ge 1 ]]
}
psql -X -Atq -c "begin; lock table accounts in access exclusive mode; select pg_sleep(5); commit;" >/dev/null 2>&1 &
LOCKER=$!
AT_EXIT+=("kill $LOCKER 2>/dev/null")
check 'the lock on accounts is held' wait_until 5 lock_held
curl -sS -o "$_T/drain.body" -w '%{http_code}' --max-time 30 -H "Authorization: Bearer $SANDBOXD_TOKEN" \
	"$SANDBOXD_URL/api/v3/user" >"$_T/drain.status" 2>"$_T/drain.err" &
CURLER=$!
AT_EXIT+=("kill $CURLER 2>/dev/null")
check 'GET /api/v3/user is waiting on the lock inside a worker' wait_until 4 request_waits
WORKERS_BEFORE=$(workers | tr '\n' ' ')
kill -TERM "$M"
sleep_until_done() { dead "$CURLER"; }
wait_until 20 sleep_until_done || true
wait "$CURLER" 2>/dev/null
LAST_REQ='GET /api/v3/user (in flight during SIGTERM)'
STATUS=$(cat "$_T/drain.status" 2>/dev/null)
BODY=$(cat "$_T/drain.body" 2>/dev/null)
expect_status 200 'SIGTERM: the request in flight still gets 200'
expect_json .login admin 'SIGTERM: and its full body'
check 'SIGTERM: the master exits within 15 s' wait_until 15 dead "$M"
gone() {
	local p
	for p in $WORKERS_BEFORE; do alive "$p" && return 1; done
	return 0
}
check 'SIGTERM: no worker is left' wait_until 5 gone
wait "$LOCKER" 2>/dev/null

# --- local-stack.sh up brings sandboxd back ------------------------------------------------
# with the settings of the running stack (never local-stack.sh's default ports)
port=${SANDBOXD_URL##*:}
port=${port%%/*}
export SANDBOXD_HTTP_PORT=${SANDBOXD_HTTP_PORT:-$port}
export SANDBOXD_PG_PORT=${SANDBOXD_PG_PORT:-$PGPORT}
export SANDBOXD_WORKERS=${SANDBOXD_WORKERS:-$N0}
export SANDBOXD_SKIP_DEPS=${SANDBOXD_SKIP_DEPS:-1}
SANDBOXD_SKIP_BUILD=1 timeout -k 10 300 bash "$LOCAL_STACK" up >"$SANDBOXD_VAR/stack-up-again.log" 2>&1 </dev/null
rc=$?
check_eq 'local-stack.sh up after the SIGTERM: exit 0' 0 "$rc"
if ((rc != 0)); then tail -n 20 "$SANDBOXD_VAR/stack-up-again.log" | sed 's/^/#   /'; fi
OLDTOKEN=$SANDBOXD_TOKEN
set -a
# shellcheck disable=SC1091
. "$SANDBOXD_VAR/local.env"
set +a
SANDBOXD_URL=${SANDBOXD_URL%/}
M2=$(master)
check 'a new master is running' eval '[[ $M2 =~ ^[0-9]+$ && $M2 != "$M" ]] && alive "$M2"'
M=$M2
api GET /api/v3/user
expect_status 200 'after local-stack.sh up: GET /api/v3/user 200'
api GET /api/v3/user "" "$OLDTOKEN"
expect_status 200 'the admin token from before the restart still works'
wait_until 10 eval '[ "$(nworkers)" -ge "$N0" ]' || true
check_eq "the new master has $N0 workers" "$N0" "$(nworkers)"

finish
