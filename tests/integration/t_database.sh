#!/usr/bin/env bash
# t_database.sh: PostgreSQL restarted (and stopped) under the running service:
# 503 {"message":"database unavailable"} at worst once, then 200, with the same
# master and workers (a lost connection is reconnected, not fatal).
. "$(dirname "$0")/lib.sh"

: "${SANDBOXD_PID_FILE:?local.env has no SANDBOXD_PID_FILE}"
M=$(cat "$SANDBOXD_PID_FILE")
W=${SANDBOXD_WORKERS:-4}
workers() { pgrep -P "$M" 2>/dev/null | sort -n | tr '\n' ' '; }

PG_CTL=$(command -v pg_ctl || ls /usr/lib/postgresql/*/bin/pg_ctl 2>/dev/null | sort -V | tail -n 1)
PGDATA_DIR=''
for d in "$SANDBOXD_VAR/pg" "$SANDBOXD_VAR/pg/data" "$SANDBOXD_VAR"/pg/*; do
	if [[ -f $d/PG_VERSION ]]; then
		PGDATA_DIR=$d
		break
	fi
done
if [[ -z $PGDATA_DIR ]]; then
	fail 'the PostgreSQL data dir is $SANDBOXD_VAR/pg' "no PG_VERSION under $SANDBOXD_VAR/pg"
	finish
fi
ok "PostgreSQL data dir: $PGDATA_DIR"

as_postgres() { # pg_ctl ARGS… as the postgres user
	su postgres -s /bin/bash -c "$(printf '%q ' "$PG_CTL" -D "$PGDATA_DIR" "$@") >/dev/null 2>&1 </dev/null"
}
PGLOG=$SANDBOXD_VAR/log/postgres.log
[[ -f $PGLOG ]] || PGLOG=$PGDATA_DIR/it-restart.log
pg_up() { psql -X -Atq -c 'select 1' >/dev/null 2>&1; }

# warm every worker's connection
for ((i = 0; i < 3 * W; i++)); do api GET /api/v3/user; done
expect_status 200 'requests succeed before the restart'
BEFORE=$(workers)

# _after_restart LABEL COUNT: COUNT requests in a row; at most one 503 (with the
# right body), every 503 before the first 200, the rest 200.
_after_restart() {
	local label=$1 count=$2 i n503=0 bad503=0 other=0 late503=0 seen200=0 seq=''
	for ((i = 0; i < count; i++)); do
		api GET /api/v3/user
		seq+="$STATUS "
		case $STATUS in
		200) seen200=1 ;;
		503)
			n503=$((n503 + 1))
			((seen200)) && late503=$((late503 + 1))
			[[ $(jq -c . <<<"$BODY" 2>/dev/null) == '{"message":"database unavailable"}' && -n $REQ_ID ]] ||
				bad503=$((bad503 + 1))
			;;
		*) other=$((other + 1)) ;;
		esac
	done
	local last=$STATUS
	printf '#   %s: statuses %s\n' "$label" "$seq"
	LAST_REQ="GET /api/v3/user, $count times in a row"
	BODY="statuses: $seq"
	STATUS=$last
	check_eq "$label: only 200 or 503 answers" 0 "$other"
	check_cond "$label: at most one 503 (got $n503)" "((${n503} <= 1))"
	check_eq "$label: no 503 once a 200 came" 0 "$late503"
	check_eq "$label: every 503 is {\"message\":\"database unavailable\"} with X-Request-Id" 0 "$bad503"
	check_eq "$label: the last answer is 200" 200 "$last"
}

# --- restart -------------------------------------------------------------------------
as_postgres -l "$PGLOG" -m fast -w -t 60 restart
check_eq 'pg_ctl restart: exit 0' 0 "$?"
check 'PostgreSQL answers after the restart' wait_until 10 pg_up
_after_restart 'after pg_ctl restart' $((3 * W + 2))
check_eq 'the master was not restarted' "$M" "$(cat "$SANDBOXD_PID_FILE")"
check_eq 'the workers were not restarted (reconnected, not fatal)' "$BEFORE" "$(workers)"

# --- stopped, then started -------------------------------------------------------------
OPTS=$(cut -d' ' -f2- "$PGDATA_DIR/postmaster.opts" 2>/dev/null)
as_postgres -m fast -w -t 60 stop
check_eq 'pg_ctl stop: exit 0' 0 "$?"
for i in 1 2 3; do
	api GET /api/v3/user
	expect_error 503 'database unavailable' "database down, request $i: 503 database unavailable"
done
check_cond 'database down: 503 has X-Request-Id' '[[ -n $REQ_ID ]]'
api GET /healthz "" -
expect_status 503 'database down: GET /healthz 503'
expect_json_match .message 'database' 'database down: /healthz names the database'
check_cond 'database down: /healthz says the database is not ok' '[[ $(_json .database) != ok ]]'
api GET /api/v3/user "" -
check_cond 'database down, no token: 401 or 503, never a crash' '[[ $STATUS == 401 || $STATUS == 503 ]]'
check 'the master survives the database going away' kill -0 "$M"

as_postgres -l "$PGLOG" -w -t 60 -o "$OPTS" start
check_eq 'pg_ctl start: exit 0' 0 "$?"
check 'PostgreSQL answers again' wait_until 10 pg_up
recovered() { api GET /api/v3/user; [[ $STATUS == 200 ]]; }
check 'the service answers 200 again within 10 s' wait_until 10 recovered
n=0
for ((i = 0; i < 2 * W; i++)); do
	api GET /api/v3/user
	[[ $STATUS == 200 ]] && n=$((n + 1))
done
check_eq "then $((2 * W)) requests in a row get 200" $((2 * W)) "$n"
api GET /healthz "" -
expect_status 200 'GET /healthz 200 again'
check_eq 'still the same master' "$M" "$(cat "$SANDBOXD_PID_FILE")"

finish
