#!/usr/bin/env bash
# t_faults_pg.sh: the database lost under the service. A create whose connection is cut
# between its container and its row's update: 503 database unavailable, no container left,
# the row failed by the reaper at once. An exec whose connection is lost while it checks the
# token it masks: refused (503), never run unmasked. Then PostgreSQL restarted, and stopped
# and started, under load (reads, token writes, execs, sandbox create/close cycles at once):
# every answer is a success or 503 {"message":"database unavailable"}; every success has its
# audit row; nothing a 503 answered for was done (no token row, no audit row claiming
# success); every sandbox ends consistent with its container; the same master and workers.
. "$(dirname "$0")/lib.sh"

: "${SANDBOXD_PID_FILE:?local.env has no SANDBOXD_PID_FILE}"
HOSTPORT=${SANDBOXD_URL#http://}
M=$(cat "$SANDBOXD_PID_FILE")
workers() { pgrep -x -P "$M" sandboxd 2>/dev/null | sort -n | tr '\n' ' '; }

PG_CTL=$(command -v pg_ctl || ls /usr/lib/postgresql/*/bin/pg_ctl 2>/dev/null | sort -V | tail -n 1)
PGD=$SANDBOXD_VAR/pg
if [[ ! -f $PGD/PG_VERSION ]]; then
	fail 'the PostgreSQL data dir is $SANDBOXD_VAR/pg' "no PG_VERSION in $PGD"
	finish
fi
as_postgres() { su postgres -s /bin/bash -c "$(printf '%q ' "$PG_CTL" -D "$PGD" "$@") >/dev/null 2>&1 </dev/null"; }
PGLOG=$SANDBOXD_VAR/log/postgres.log
pg_up() { psql -X -Atq -c 'select 1' >/dev/null 2>&1; }
# Whatever happens below, PostgreSQL runs again when this file ends (later tests need it).
OPTS=$(cut -d' ' -f2- "$PGD/postmaster.opts" 2>/dev/null)
AT_EXIT+=("pg_up || as_postgres -l '$PGLOG' -w -t 60 -o '$OPTS' start")

O="fp$SFX"
mk_user "$O" || exit 1
OT=$LAST_TOKEN
S="fq$SFX"   # a second account for the sandbox cycles: its own sandbox limit
mk_user "$S" || exit 1
ST=$LAST_TOKEN
R="$O/r"
api POST /api/v3/user/repos '{"name":"r","visibility":"public"}' "$OT"
expect_status 201 'a public repository'
W=$_T/w
git init -q -b main "$W"
echo x >"$W/x" && git -C "$W" add x && git -C "$W" -c user.name=t -c user.email=t@t commit -qm x
git -C "$W" push -q "http://t:$OT@$HOSTPORT/$R.git" main
api PUT "/api/v3/repos/$R/collaborators/$S" '{"role":"write"}' "$OT"
expect_status 204 'the second account may write'
SB=/api/v3/repos/$R/diffinery/sandboxes
api POST "$SB" '{}' "$OT"
expect_status 201 'a sandbox for the execs'
ID=$(_json .id)
api POST "$SB/$ID/exec" '{"cmd":"echo ready"}' "$OT"
expect_json .stdout ready 'its first exec works'

# --- a create caught between its row and its container ------------------------------------------
# A session takes the new row's lock as soon as the row is committed, so that the create
# blocks on its next update of the row, its container made; then the create's database
# connection is cut (as a restart does, but only that one: a restart may free the row
# first and let the create finish).
PGAPPNAME=t_faults_pg_locker psql -X -Atq -c "do \$\$ begin
	loop
		perform 1 from sandboxes s join accounts a on a.id = s.account_id
		 where a.login = '$S' and s.state = 'starting' for update of s;
		exit when found;
		perform pg_sleep(0.002);
	end loop;
	perform pg_sleep(60);
end \$\$" >/dev/null 2>&1 &
LOCKER=$!
AT_EXIT+=("kill $LOCKER 2>/dev/null")
# The create only once the locker looks: a create that takes a warm container is over in
# a tenth of a second, less than psql may take to start.
locker_on() { [[ $(sql_super "select count(*) from pg_stat_activity where application_name = 't_faults_pg_locker' and state = 'active'") -ge 1 ]]; }
check 'the locker session is looking for the row' wait_until 15 locker_on
curl -sS -o "$_T/caught.body" -w '%{http_code}' --max-time 60 -H "Authorization: Bearer $ST" \
	-H 'Content-Type: application/json' -d '{}' "$SANDBOXD_URL$SB" >"$_T/caught.status" 2>/dev/null &
CAUGHT=$!
# A cold create blocks on its update of the row; one that takes a warm container already on
# the claim (warm_containers.claimed_by references the row: the key check waits too; the
# claim's statement starts with its WITH).
BLOCKED="wait_event_type = 'Lock' and (query ilike 'UPDATE sandboxes%' or query ~* '^(WITH .*)?UPDATE warm_containers')"
create_blocked() { [[ $(sql_super "select count(*) from pg_stat_activity where $BLOCKED") -ge 1 ]]; }
check 'a create waits on its row, its container made' wait_until 30 create_blocked
CID=$(sql "select s.id from sandboxes s join accounts a on a.id = s.account_id where a.login = '$S' and s.state = 'starting'")
check_eq "its database connection is cut" t "$(sql_super "select bool_and(pg_terminate_backend(pid)) from pg_stat_activity where $BLOCKED")"
wait "$CAUGHT" 2>/dev/null
sql_super "select pg_terminate_backend(pid) from pg_stat_activity where query ilike '%pg_sleep(60)%' and pid <> pg_backend_pid()" >/dev/null
wait "$LOCKER" 2>/dev/null
LAST_REQ="POST $SB (its database connection cut)"
STATUS=$(cat "$_T/caught.status") BODY=$(cat "$_T/caught.body")
expect_error 503 'database unavailable' 'the caught create answers 503 database unavailable'
no_container() { [[ -z $(docker ps -aq --filter "label=sandboxd.sandbox=$(owner_label_of "$CID")") ]]; }
check 'its container does not outlive the failed call (15 s)' wait_until 15 no_container
ended() { [[ $(sql "select state from sandboxes where id = '$CID'") == failed ]]; }
check 'its row is failed (15 s), not left starting for the start timeout' wait_until 15 ended
check_eq 'its token is revoked' 0 "$(sql "select count(*) from tokens where sandbox_id = '$CID' and revoked_at is null")"
check_eq 'by the reaper, which saw its creator gone' 'start interrupted|reaper' \
	"$(sql "select s.end_reason || '|' || a.via from sandboxes s join audit_log a on a.sandbox_id = s.id
	  and a.action = 'sandbox.reconcile' where s.id = '$CID'")"

# --- the database lost while an exec looks up the token it masks ------------------------------------
# A sandbox without its sealed token (one made before sql/023, or by a service without a
# secrets key; here its row's copy is cleared): the first exec of it in a worker reads the
# token from the clone's config (through the agent) and checks it against the database; the
# database goes away in between (the config made a FIFO holds the read), and is back before
# the command ends. Running the command unmasked would answer 200 with the token in it.
api POST "$SB" '{}' "$OT"
expect_status 201 'a second sandbox, never exec-ed through the service'
MS=$(_json .id)
MC=$(docker ps -q --no-trunc --filter "label=sandboxd.sandbox=$(owner_label_of "$MS")")
cloned() { [[ $(docker exec "$MC" cat /workspace/.sandboxd/clone.state 2>/dev/null) == "done" ]]; }
check 'its clone is done' wait_until 60 cloned
MTOK=$(box_token_of "$MC")
check 'the test has its token' grep -q '^dst_' <<<"$MTOK"
check_eq 'its row had the token sealed; the copy is cleared for this test' 1 \
	"$(sql_super "with u as (update sandboxes set token_sealed = null where id = '$MS' and token_sealed is not null returning 1) select count(*) from u")"
docker exec -u "$BOX_USER" -w /workspace/repo "$MC" sh -c 'mv .git/config .git/config.real && mkfifo .git/config'
curl -sS -o "$_T/mask.body" -w '%{http_code}' --max-time 60 -H "Authorization: Bearer $OT" \
	-H 'Content-Type: application/json' -d '{"cmd":"cat .git/config.real"}' \
	"$SANDBOXD_URL$SB/$MS/exec" >"$_T/mask.status" 2>/dev/null &
MASKER=$!
reading_token() { docker top "$MC" -o pid,args 2>/dev/null | grep -q 'head -c 4096 /workspace/repo/.git/config'; }
check 'the exec reads the token from the config' wait_until 30 reading_token
check_cond 'the database drops every connection of the service' \
	"[[ \$(sql_super \"select count(*) from (select pg_terminate_backend(pid) from pg_stat_activity where usename = 'sandboxd') t\") -ge 1 ]]"
timeout 30 docker exec -u "$BOX_USER" -w /workspace/repo "$MC" sh -c 'cat .git/config.real > .git/config'  # no reader: not held for ever
wait "$MASKER" 2>/dev/null
docker exec -u "$BOX_USER" -w /workspace/repo "$MC" sh -c 'rm .git/config && mv .git/config.real .git/config'
LAST_REQ="POST $SB/$MS/exec (the database lost while it looks up the token)"
STATUS=$(cat "$_T/mask.status") BODY=$(cat "$_T/mask.body")
check 'the answer never holds the token' eval '! grep -qF "$MTOK" <<<"$BODY"'
expect_error 503 'database unavailable' 'the exec is refused: 503 database unavailable'
api POST "$SB/$MS/exec" '{"cmd":"git config --get-regexp extraheader"}' "$OT"
expect_json_match .stdout 'Authorization: Basic \*\*\*' 'the next exec runs, masked'
api POST "$SB/$MS/close" "" "$OT"

# --- a COMMIT whose answer is lost -------------------------------------------------------------------
# The server commits, then the connection dies before the answer reaches the service (a
# restart or a stop in that instant). Made on demand: with a synchronous standby named that
# never comes, a COMMIT is durable locally and then waits; the test ends that connection.
# The service asks the server what became of the transaction: the token was made, so the
# answer is 201 and the token works, never a 503 for work that was done.
sync_off() {
	sql_super "alter system reset synchronous_standby_names" >/dev/null &&
		sql_super "select pg_reload_conf()" >/dev/null
}
AT_EXIT+=(sync_off)
sql_super "alter system set synchronous_standby_names = 'nobody_$SFX'" >/dev/null &&
	sql_super "select pg_reload_conf()" >/dev/null
check_eq 'commits wait for a standby that never comes' "nobody_$SFX" \
	"$(sql_super "select pg_sleep(0.2); show synchronous_standby_names" | tail -n 1)"
curl -sS -o "$_T/lost.body" -w '%{http_code}' --max-time 60 -H "Authorization: Bearer $OT" \
	-H 'Content-Type: application/json' -d "{\"scope\":\"read\",\"note\":\"lost-$SFX\"}" \
	"$SANDBOXD_URL/api/v3/user/tokens" >"$_T/lost.status" 2>/dev/null &
LOST=$!
waiting_commit() {
	[[ $(sql_super "select count(*) from pg_stat_activity where wait_event = 'SyncRep'
	  and usename = 'sandboxd'") -ge 1 ]]
}
check 'a token request is committed and waits on its COMMIT' wait_until 30 waiting_commit
check_eq 'its connection is ended before the COMMIT answers' t \
	"$(sql_super "select bool_and(pg_terminate_backend(pid)) from pg_stat_activity
	  where wait_event = 'SyncRep' and usename = 'sandboxd'")"
sync_off
wait "$LOST" 2>/dev/null
LAST_REQ="POST /api/v3/user/tokens (its COMMIT's answer lost)"
STATUS=$(cat "$_T/lost.status") BODY=$(cat "$_T/lost.body")
expect_status 201 'the service learns it committed: 201'
LTOK=$(_json .token)
api GET /api/v3/user "" "$LTOK"
expect_status 200 'the token it answers works'
check_eq 'its audit row says 201' 201 \
	"$(sql "select a.status from audit_log a join tokens t on t.id::text = a.details->>'token_id'
	  where t.note = 'lost-$SFX'")"

# --- the load -----------------------------------------------------------------------------------
# Each loader appends "kind status request-id detail" per request to $_T/load.NAME, and its
# bodies of non-2xx answers to $_T/load.NAME.bodies, until $_T/stop exists (or 120 s pass).
req() { # LOADER METHOD PATH BODY TOKEN: one request; prints "status request-id"
	local out=$_T/$1.out hdr=$_T/$1.hdr code
	code=$(curl -sS -o "$out" -D "$hdr" -w '%{http_code}' --max-time 60 -X "$2" \
		-H "Authorization: Bearer $5" -H 'Content-Type: application/json' -H 'Expect:' \
		${4:+--data-binary "$4"} "$SANDBOXD_URL$3" 2>/dev/null) || code=000
	printf '%s %s\n' "$code" "$(tr -d '\r' <"$hdr" | sed -n 's/^[Xx]-[Rr]equest-[Ii]d: *//p' | head -n 1)"
}
note() { # LOADER KIND STATUS REQID DETAIL
	printf '%s %s %s %s %s\n' "$2" "$3" "${4:--}" "${5:--}" "$EPOCHREALTIME" >>"$_T/load.$1"
	[[ $3 == 2* ]] || printf '%s %s\n' "$3" "$(head -c 300 "$_T/$1.out")" >>"$_T/load.$1.bodies"
}
loader() { # NAME KIND
	local name=$1 kind=$2 n=0 st rid out deadline=$((SECONDS + 120)) id
	: >"$_T/load.$name"
	while [[ ! -e $_T/stop ]] && ((SECONDS < deadline)); do
		n=$((n + 1))
		case $kind in
		read)
			read -r st rid < <(req "$name" GET /api/v3/user "" "$OT")
			note "$name" read "$st" "$rid"
			;;
		token)
			read -r st rid < <(req "$name" POST /api/v3/user/tokens "{\"scope\":\"read\",\"note\":\"load-$SFX-$n\"}" "$OT")
			note "$name" token "$st" "$rid" "load-$SFX-$n"
			;;
		exec)
			read -r st rid < <(req "$name" POST "$SB/$ID/exec" "{\"cmd\":\"echo $n\"}" "$OT")
			note "$name" exec "$st" "$rid"
			;;
		sandbox)
			read -r st rid < <(req "$name" POST "$SB" '{}' "$ST")
			id=$(jq -r '.id // "-"' "$_T/$name.out" 2>/dev/null)
			note "$name" create "$st" "$rid" "$id"
			if [[ $st == 201 ]]; then
				# close it, again and again if the database is away
				for ((k = 0; k < 100; k++)); do
					read -r st rid < <(req "$name" POST "$SB/$id/close" "" "$ST")
					note "$name" close "$st" "$rid" "$id"
					[[ $st == 204 || -e $_T/stop ]] && break
					sleep 0.2
				done
			fi
			;;
		esac
	done
}
LOADERS=''
for spec in r1:read r2:read t1:token t2:token x1:exec s1:sandbox; do
	loader "${spec%%:*}" "${spec#*:}" &
	LOADERS+=" $!"
	AT_EXIT+=("kill $! 2>/dev/null")
done
lines() { cat "$_T"/load.?? 2>/dev/null | wc -l; }
successes() { awk '$2 ~ /^2/ {n++} END {print n + 0}' "$_T/load.$1" 2>/dev/null; }
every_loader_since() { # N: every loader has N more successes than in $_T/mark.*
	local l
	for l in r1 r2 t1 t2 x1 s1; do
		(($(successes $l) >= $(cat "$_T/mark.$l") + $1)) || return 1
	done
}
mark() { local l; for l in r1 r2 t1 t2 x1 s1; do successes $l >"$_T/mark.$l"; done; }
mark
check 'the load runs: every loader succeeds twice' wait_until 60 every_loader_since 2

# --- restart under load -------------------------------------------------------------------------------
BEFORE=$(workers)
as_postgres -l "$PGLOG" -m fast -w -t 60 restart
check_eq 'pg_ctl restart under load: exit 0' 0 "$?"
mark
check 'after the restart every loader succeeds again (twice) within 60 s' wait_until 60 every_loader_since 2

# --- stopped under load, then started -----------------------------------------------------------------
as_postgres -m fast -w -t 60 stop
check_eq 'pg_ctl stop under load: exit 0' 0 "$?"
n503() { cat "$_T"/load.?? | awk '$2 == 503 {n++} END {print n + 0}'; }
N503=$(n503)
more_503() { (($(n503) >= N503 + 6)); }
check 'while it is down the load gets 503s' wait_until 20 more_503
as_postgres -l "$PGLOG" -w -t 60 -o "$OPTS" start
check_eq 'pg_ctl start: exit 0' 0 "$?"
check 'PostgreSQL answers again' wait_until 20 pg_up
mark
check 'the service recovers by itself: every loader succeeds again (twice) within 60 s' \
	wait_until 60 every_loader_since 2
touch "$_T/stop"
# shellcheck disable=SC2086
wait $LOADERS 2>/dev/null

# --- what the clients saw ---------------------------------------------------------------------------------
ALL=$_T/all
cat "$_T"/load.?? >"$ALL"
printf '#   %s requests: %s\n' "$(wc -l <"$ALL")" "$(awk '{print $1"="$2}' "$ALL" | sort | uniq -c | tr -s ' ' | tr '\n' ',')"
LAST_REQ="the load ($(wc -l <"$ALL") requests)"
STATUS='' BODY=$(cat "$_T"/load.??.bodies 2>/dev/null | sort | uniq -c | head -c 600)
check_eq 'every answer is a success or a 503' '' "$(awk '$2 !~ /^(200|201|204|503)$/' "$ALL" | head -n 5)"
check_eq 'every 503 says {"message":"database unavailable"}' '' \
	"$(cat "$_T"/load.??.bodies 2>/dev/null | grep '^503 ' | grep -v '^503 {"message":"database unavailable"}$' | sort -u | head -n 3)"
check_eq 'every answer has an X-Request-Id' '' "$(awk '$3 == "-"' "$ALL" | head -n 3)"
check 'some requests failed during the outage (the test did hit it)' grep -q ' 503 ' "$ALL"

# --- what the database kept ---------------------------------------------------------------------------------
ids_with() { # REGEX: request ids of the answers whose status matches, as a SQL list
	awk -v re="$1" '$2 ~ re && $3 != "-" {print "'\''" $3 "'\''"}' "$ALL" | paste -sd, -
}
NOK=$(awk '$2 ~ /^2/' "$ALL" | wc -l)
check_eq "every success ($NOK) has its audit row with its status" "$NOK" \
	"$(sql "select count(*) from audit_log a join (values $(awk '$2 ~ /^2/ {print "('\''" $3 "'\''," $2 ")"}' "$ALL" | paste -sd, -)) v(rid, st)
	  on a.request_id = v.rid and a.status = v.st")"
BADIDS=$(ids_with '^503$')
check_eq 'no request answered 503 has an audit row claiming success' 0 \
	"$(sql "select count(*) from audit_log where request_id in (${BADIDS:-''}) and status < 400")"
OKNOTES=$(awk '$1 == "token" && $2 == 201 {print $4}' "$ALL" | sort)
DBNOTES=$(sql "select note from tokens where note like 'load-$SFX-%'" | sort)
check_eq 'the tokens in the database are exactly those answered 201' "$OKNOTES" "$DBNOTES"
check_cond 'and tokens were made across the outage' '[[ $(wc -l <<<"$OKNOTES") -ge 6 ]]'

# Sandboxes: none stuck starting, every live one with its running container, every ended
# one without a container (the reaper finishes what a failed call left).
state_of() { sql "select state from sandboxes where id = '$1'"; }
container_state() { docker ps -a --filter "label=sandboxd.sandbox=$(owner_label_of "$1")" --format '{{.State}}' | head -n 1; }
inconsistent() { # prints the sandboxes of the second account whose row and container disagree
	local id st cs
	while read -r id st; do
		cs=$(container_state "$id")
		case $st in
		ready) [[ $cs == running ]] || echo "$id:$st:${cs:-none}" ;;
		*) [[ -z $cs ]] || echo "$id:$st:$cs" ;;
		esac
	done < <(sql "select s.id, s.state from sandboxes s join accounts a on a.id = s.account_id where a.login = '$S'" | tr '|' ' ')
	# containers of this stack that belong to no row at all
	docker ps -a --filter "label=sandboxd.instance=$SANDBOXD_INSTANCE" --format '{{.Label "sandboxd.sandbox"}}' |
		while read -r id; do
			case $id in # a warm container's row is in the pool's table while it lives
			pool:*) [[ -n $(sql "select 1 from warm_containers where id = '${id#pool:}' and state <> 'failed'") ]] ;;
			*) [[ -n $(state_of "$id") ]] ;;
			esac || echo "$id:no-row"
		done
}
consistent() { [[ -z $(inconsistent) ]]; }
check 'every sandbox agrees with its container within 30 s (none stuck starting)' wait_until 30 consistent
LAST_REQ='sandboxes vs containers'
BODY=$(inconsistent)
check_eq 'so: no inconsistent sandbox' '' "$BODY"
CREATED=$(awk '$1 == "create" && $2 == 201 {print $4}' "$ALL" | sort -u)
n=0
for id in $CREATED; do [[ $(state_of "$id") == closed ]] && n=$((n + 1)); done
check_eq "every sandbox answered 201 exists and was closed ($(wc -w <<<"$CREATED"))" "$(wc -w <<<"$CREATED")" "$n"

# --- the service itself ----------------------------------------------------------------------------------------
check_eq 'the master was not restarted' "$M" "$(cat "$SANDBOXD_PID_FILE")"
check_eq 'the workers were not restarted (reconnected, not fatal)' "$BEFORE" "$(workers)"
api GET /healthz "" -
expect_status 200 'GET /healthz 200'
api POST "$SB/$ID/exec" '{"cmd":"echo after"}' "$OT"
expect_json .stdout after 'the exec sandbox still works'
api POST "$SB/$ID/close" "" "$OT"
finish
