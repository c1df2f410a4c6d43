#!/usr/bin/env bash
# t_audit_dba.sh: the audit log as a DBA sees it (issue 6, sql/README.md, sql/003_audit.sql):
# the partitioned, append-only audit_log after a migration from empty and from the previous
# schema; the service's and the auditor's rights; every view; the ten documented queries,
# taken from sql/README.md and run as sandboxd_auditor against rows made by real REST calls
# and git pushes; pruning; and no request succeeding without its row, database down or not.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_guard.sh"

export GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=/bin/false
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
HOSTPORT=${SANDBOXD_URL#http://}
url() { printf 'http://t:%s@%s/%s.git' "$1" "$HOSTPORT" "$2"; }
W=$_T/work
mkdir -p "$W"
g() { git -C "$W/$1" "${@:2}"; }
commit() { printf '%s\n' "$3" >"$W/$1/$2" && g "$1" add "$2" && g "$1" commit -qm "add $2"; }
README=$ROOT/sql/README.md

# as the service's role (SANDBOXD_DATABASE_URL); in a transaction rolled back
svc() { psql -X -Atq -v ON_ERROR_STOP=1 "$SANDBOXD_DATABASE_URL" -c "$1" 2>"$_T/svc.err"; }
svc_try() { psql -X -Atq -v ON_ERROR_STOP=1 "$SANDBOXD_DATABASE_URL" -c 'begin' -c "$1" -c 'rollback' >/dev/null 2>"$_T/svc.err"; }
# as the owner, in a transaction rolled back; the error text in $_T/own.err
own_try() { psql -X -Atq -v ON_ERROR_STOP=1 -c 'begin' -c "$1" -c 'rollback' >/dev/null 2>"$_T/own.err"; }
# as sandboxd_auditor (the owner may SET ROLE to it)
aud() { PGOPTIONS='-c role=sandboxd_auditor' psql -X -Atq -v ON_ERROR_STOP=1 -c "$1" 2>"$_T/aud.err"; }
aud_q() { aud "$1" >/dev/null; }
refused_by() { grep -q "$1" "$2"; }
# Each refusal below is refused_saying TEXT ERRFILE CMD… (lib_guard.sh): the database said
# TEXT; a connection that fails, a role that is not there, is no refusal.
PD='ERROR:  permission denied for table'

# --- migration from an empty database (the stack ran it) ------------------------------------
check_eq 'migrations 1, 2, 3 applied on the empty database' '1,2,3' \
	"$(sql "select string_agg(version::text, ',' order by version) from schema_migrations where version <= 3")"
check_eq 'audit_log is a partitioned table' p "$(sql "select relkind from pg_class where oid = 'audit_log'::regclass")"
check_eq 'it is partitioned by range on at' 'RANGE (at)' "$(sql "select pg_get_partkeydef('audit_log'::regclass)")"
THIS=$(sql "select 'audit_log_' || to_char(now() at time zone 'UTC', 'YYYY_MM')")
NEXT=$(sql "select 'audit_log_' || to_char((now() at time zone 'UTC') + interval '1 month', 'YYYY_MM')")
check_eq "this month's and next month's partitions and the default exist" 3 \
	"$(sql "select count(*) from audit_partitions where partition in ('$THIS', '$NEXT', 'audit_log_default')")"
check_eq 'the primary key includes at' 'PRIMARY KEY (id, at)' \
	"$(sql "select pg_get_constraintdef(oid) from pg_constraint where conrelid = 'audit_log'::regclass and contype = 'p'")"
NOCOMMENT=$(sql "select string_agg(c.relname || coalesce('.' || a.attname, ''), ', ')
	from pg_class c join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
	left join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
	  and col_description(c.oid, a.attnum) is null
	where c.relkind in ('r', 'p', 'v') and (not c.relispartition or obj_description(c.oid, 'pg_class') is null)
	  and (obj_description(c.oid, 'pg_class') is null or a.attname is not null)")
check_eq 'every table, column and view has a COMMENT' '' "$NOCOMMENT"

# --- real traffic -------------------------------------------------------------------------
O="dba$SFX"
mk_user "$O" || exit 1
OT=$LAST_TOKEN
R="$O/web"
api POST /api/v3/user/repos '{"name":"web","visibility":"private"}' "$OT"
expect_status 201 'repository created'
git init -q -b main "$W/a"
commit a README hello
check 'first push of main' g a push -q "$(url "$OT" "$R")" main
commit a two second
check 'fast-forward of main' g a push -q "$(url "$OT" "$R")" main
check 'push of a feature branch' g a push -q "$(url "$OT" "$R")" main:refs/heads/feature
g a reset -q --hard HEAD~1
commit a forced rewrite
check 'a force-push to main is refused' eval '! g a push -q -f "$(url "$OT" "$R")" main 2>/dev/null'
AG="dbag$SFX"
mk_user "$AG" --kind agent || exit 1
AGT=$LAST_TOKEN
api PUT "/api/v3/repos/$R/collaborators/$AG" '{"role":"write"}' "$OT"
expect_status 204 'the agent may write'
git clone -q "$(url "$AGT" "$R")" "$W/ag"
commit ag agent "by an agent"
check "the agent's push to main is refused" eval '! g ag push -q "$(url "$AGT" "$R")" main 2>/dev/null'
check 'the agent pushes its own branch' g ag push -q "$(url "$AGT" "$R")" main:refs/heads/agent-work

# credentials: minted, revoked, then used (denied) from an address of our own
api POST /api/v3/user/tokens '{"scope":"read"}' "$OT"
expect_status 201 'token minted over REST'
NEWID=$(_json .id)
api DELETE "/api/v3/user/tokens/$NEWID" "" "$OT"
expect_status 204 'and revoked'
api POST "/api/v3/repos/$R/git-urls" '{"scopes":["git:read"]}' "$OT"
expect_status 201 'a git URL minted'
RT=$(mk_token "$O" read) || exit 1
RT_ID=$(last_token_id)
ctl token revoke "$RT_ID"
ADDR="127.$((RANDOM % 200 + 20)).$((RANDOM % 250 + 1)).$((RANDOM % 250 + 1))"
for i in 1 2 3 4; do
	st=$(curl -s -o /dev/null -w '%{http_code}' --interface "$ADDR" -H "Authorization: Bearer $RT" "$SANDBOXD_URL/api/v3/user")
	check_eq "revoked token from $ADDR, try $i: 401" 401 "$st"
done
st=$(curl -s -o /dev/null -w '%{http_code}' --interface "$ADDR" -H "Authorization: Bearer dfy_nottoken" "$SANDBOXD_URL/api/v3/user")
check_eq "a string that is no token from $ADDR: 401" 401 "$st"

# a 500 with its row: the owner's directory on disk is a file, so the repository cannot be made
E="dbe$SFX"
mk_user "$E" || exit 1
ET=$LAST_TOKEN
touch "$REPOS_DIR/$E"
api POST /api/v3/user/repos '{"name":"broken"}' "$ET"
expect_status 500 "a repository that cannot be made on disk: 500"
ID_500=$REQ_ID
rm -f "$REPOS_DIR/$E"

# one account's known activity
B="dbb$SFX"
mk_user "$B" || exit 1
BT=$LAST_TOKEN
api GET /api/v3/user "" "$BT"
api GET /api/v3/user "" "$BT"
api POST /api/v3/user/repos '{"name":"b1"}' "$BT"
expect_status 201 "$B's repository"
api GET "/api/v3/repos/$B/nothere" "" "$BT"
expect_status 404 "$B asks for a repository that is not there"


# sandbox.exec rows as sandboxd writes them: three real execs in a sandbox of the repository,
# with exit codes 0, 1 and 2 (the service's role inserts them: it may INSERT).
api POST "/api/v3/repos/$R/diffinery/sandboxes" '{}' "$OT"
expect_status 201 'a sandbox on the repository'
SB=$(_json .id)
AT_EXIT+=("api POST '/api/v3/repos/$R/diffinery/sandboxes/$SB/close' '' '$OT' >/dev/null 2>&1")
n=0
for c in 'git status --short' 'test -e nothere' 'cat README; exit 2'; do
	n=$((n + 1))
	api POST "/api/v3/repos/$R/diffinery/sandboxes/$SB/exec" "$(jq -nc --arg c "$c" '{cmd: $c}')" "$OT"
	check_eq "exec $n ($c): 200, exit code $((n - 1)), its sandbox.exec row" "200|$((n - 1))|1" \
		"$STATUS|$(_json .exitCode)|$(sql "select count(*) from audit_log where request_id = '$REQ_ID' and action = 'sandbox.exec' and sandbox_id = '$SB'")"
done
# A row of another sandbox, which the query must leave out.
svc "insert into audit_log (action, status, sandbox_id, via, details) values ('sandbox.exec', 200, 'other-$SFX', 'mcp', '{\"cmd\":\"ls\"}')" >/dev/null

api PATCH "/api/v3/repos/$R" '{"visibility":"public"}' "$OT"
expect_status 200 'the last thing done to the repository'
ID_LAST=$REQ_ID

# --- the ten queries of sql/README.md, as sandboxd_auditor ------------------------------------
NAMES=$(sed -n 's/^<!-- query: \([a-z_]*\) -->$/\1/p' "$README")
check_eq 'sql/README.md has ten marked queries' 10 "$(wc -l <<<"$NAMES")"
query_sql() { # NAME: the ```sql block after its marker
	awk -v m="<!-- query: $1 -->" '$0 == m {f = 1; next} f == 1 && /^```sql$/ {f = 2; next} f == 2 && /^```$/ {exit} f == 2 {print}' "$README"
}
Q_OUT=''
q() { # NAME [psql -v settings…]: runs it as the auditor; output rows as a|b|c in Q_OUT
	local name=$1
	shift
	query_sql "$name" >"$_T/q.sql"
	if [[ ! -s $_T/q.sql ]]; then
		fail "query $name: found in sql/README.md" 'no sql block after its marker'
		return 1
	fi
	if Q_OUT=$(PGOPTIONS='-c role=sandboxd_auditor' psql -X -Atq -F '|' -v ON_ERROR_STOP=1 "$@" -f "$_T/q.sql" 2>"$_T/q.err"); then
		ok "query $name runs as sandboxd_auditor"
	else
		fail "query $name runs as sandboxd_auditor" "$(head -c 300 "$_T/q.err")"
		return 1
	fi
}
rows() { printf '%s\n' "$Q_OUT" | grep -c . || true; }
field() { printf '%s\n' "$Q_OUT" | cut -d'|' -f"$1" | paste -sd, -; }
ran=()

ran+=(sandbox_commands)
q sandbox_commands -v sandbox="$SB" &&
	check_eq 'who ran what in the sandbox: seq|login|cmd|exit_code in order' \
		"1|$O|git status --short|0;2|$O|test -e nothere|1;3|$O|cat README; exit 2|2" \
		"$(printf '%s\n' "$Q_OUT" | awk -F'|' '{print $1 "|" $3 "|" $6 "|" $7}' | paste -sd';' -)"

ran+=(tokens_failing_auth)
if q tokens_failing_auth; then
	check_eq 'the revoked token: 4 failures, reason token revoked, its login' "$RT_ID|personal|$O|4|{\"token revoked\"}" \
		"$(printf '%s\n' "$Q_OUT" | awk -F'|' -v id="$RT_ID" '$1 == id {print $1 "|" $2 "|" $3 "|" $4 "|" $5}')"
	check 'most failures first' eval "[[ \"\$(field 4 | tr , '\n')\" == \"\$(field 4 | tr , '\n' | sort -rn)\" ]]"
fi

ran+=(default_branch_pushes)
if q default_branch_pushes; then
	check_eq 'pushes to main this week: create, update accepted; force and agent refused' \
		"refs/heads/main|create|accepted|$O;refs/heads/main|update|accepted|$O;refs/heads/main|update|refused|$O;refs/heads/main|update|refused|$AG" \
		"$(printf '%s\n' "$Q_OUT" | awk -F'|' -v r="$R" '$2 == r {print $3 "|" $4 "|" $5 "|" $7}' | paste -sd';' -)"
	check_eq 'no other branch among them' 0 "$(printf '%s\n' "$Q_OUT" | awk -F'|' -v r="$R" '$2 == r && $3 != "refs/heads/main"' | grep -c . || true)"
fi

ran+=(repository_activity)
if q repository_activity -v repo="$R"; then
	check_eq 'repository activity: newest first, the PATCH' "repo.update|success|200|$O" \
		"$(printf '%s\n' "$Q_OUT" | head -n 1 | awk -F'|' '{print $2 "|" $3 "|" $4 "|" $5}')"
	check_eq 'its request id' "$ID_LAST" "$(printf '%s\n' "$Q_OUT" | head -n 1 | cut -d'|' -f9)"
	check_eq 'every row of the repository (under 50)' "$(sql "select count(*) from audit_log where repository = '$R'")" "$(rows)"
	check 'git.push.ref rows show their ref' grep -q '|git.push.ref|success|200|.*|git|refs/heads/feature|' <<<"$Q_OUT"
fi

ran+=(account_activity)
q account_activity -v login="${B^^}" &&
	check_eq "what $B did (login matched case-insensitively)" \
		"user.get|success|2;repo.create|success|1;repo.get|failed|1" \
		"$(printf '%s\n' "$Q_OUT" | cut -d'|' -f1-3 | paste -sd';' -)"

ran+=(denied_addresses)
q denied_addresses &&
	check_eq "denials from $ADDR: 5, one known token, auth.denied" "$ADDR|5|1|{auth.denied}" \
		"$(printf '%s\n' "$Q_OUT" | awk -F'|' -v a="$ADDR" '$1 == a {print $1 "|" $2 "|" $3 "|" $4}')"

ran+=(refused_pushes)
if q refused_pushes; then
	REF_OUT=$(printf '%s\n' "$Q_OUT" | awk -F'|' -v r="$R" '$2 == r')
	check_eq 'two refused updates of main' 2 "$(grep -c . <<<"$REF_OUT")"
	check 'the agent refused with its reason' grep -q "|refs/heads/main|update|$AG|personal|.*agents may not update the default branch" <<<"$REF_OUT"
	check 'the force-push refused with its reason' grep -q "|refs/heads/main|update|$O|personal|.*force-push" <<<"$REF_OUT"
fi

ran+=(request_trail)
PUSH_RQ=$(sql "select request_id from audit_log where action = 'git.push.ref' and repository = '$R' and details->>'ref' = 'refs/heads/feature'")
q request_trail -v request_id="$PUSH_RQ" &&
	check_eq "a push's trail: its ref row and the receive-pack request" 'git.push.ref|200|refs/heads/feature;git.push|200|' \
		"$(printf '%s\n' "$Q_OUT" | awk -F'|' '{print $2 "|" $3 "|" $6}' | paste -sd';' -)"
q request_trail -v request_id="$ID_LAST" &&
	check_eq "a REST request's trail: one row" "repo.update|200|$O|$R" \
		"$(printf '%s\n' "$Q_OUT" | cut -d'|' -f2-5)"

ran+=(server_errors)
if q server_errors; then
	check 'the 500 of repo.create is there with its error text' grep -qE '^repo\.create\|500\|[0-9]+\|[^|]+\|.+' <<<"$Q_OUT"
	check_eq 'that request wrote its row' 'repo.create|500' "$(sql "select action || '|' || status from audit_log where request_id = '$ID_500'")"
fi

ran+=(credential_changes)
if q credential_changes; then
	MINE=$(printf '%s\n' "$Q_OUT" | awk -F'|' -v o="$O" '$3 == o {print $2 "|" $4 "|" $5}')
	check 'token.create with its id' grep -qx "token.create|success|$NEWID" <<<"$MINE"
	check 'token.revoke with its id' grep -qx "token.revoke|success|$NEWID" <<<"$MINE"
	check 'git_url.create with its jti' grep -qE '^git_url\.create\|success\|.+' <<<"$MINE"
fi
for n in $NAMES; do
	[[ " ${ran[*]} " == *" $n "* ]] || fail "query $n is tested" 'not run by t_audit_dba.sh'
done

# --- every view runs, as the auditor --------------------------------------------------------
VIEWS=$(sql "select string_agg(viewname, ' ' order by viewname) from pg_views where schemaname = 'public'")
check_cond 'six audit views' "[[ \$(wc -w <<<'$VIEWS') -ge 6 ]]"
for v in $VIEWS; do
	check "the auditor reads view $v" aud_q "select count(*) from $v"
done
check_eq 'audit_denied_by_token_and_address counts our address' 4 \
	"$(aud "select denials from audit_denied_by_token_and_address where remote_addr = '$ADDR' and token_id = $RT_ID")"

# --- the auditor's rights ------------------------------------------------------------------
check 'the auditor reads audit_log' aud_q "select count(*) from audit_log"
check 'the auditor reads token ids and notes' aud_q "select id, note from tokens limit 1"
check 'the auditor cannot INSERT into audit_log' refused_saying "$PD audit_log" "$_T/aud.err" \
	aud "insert into audit_log (action, status) values ('x', 1)"
check '(permission denied)' refused_by 'permission denied' "$_T/aud.err"
check 'the auditor cannot UPDATE audit_log' refused_saying "$PD audit_log" "$_T/aud.err" aud "update audit_log set status = 0"
check 'the auditor cannot DELETE from audit_log' refused_saying "$PD audit_log" "$_T/aud.err" aud "delete from audit_log"
check 'the auditor cannot read token hashes' refused_saying "$PD tokens" "$_T/aud.err" aud "select hash from tokens limit 1"
check 'the auditor cannot read signing keys' refused_saying "$PD signing_keys" "$_T/aud.err" aud "select count(*) from signing_keys"
check 'the auditor cannot write accounts' refused_saying "$PD accounts" "$_T/aud.err" aud "update accounts set name = name"
AUDLOGIN="aud_$SFX"
if sql_super "create role $AUDLOGIN login; grant sandboxd_auditor to $AUDLOGIN" >/dev/null 2>&1; then
	AT_EXIT+=("sql_super 'drop role if exists $AUDLOGIN' >/dev/null 2>&1")
	as_login() { psql -X -Atq -v ON_ERROR_STOP=1 -U "$AUDLOGIN" -c "$1" >/dev/null 2>"$_T/login.err"; }
	check 'a login role granted sandboxd_auditor reads the audit log' as_login "select count(*) from audit_pushes"
	check 'and cannot INSERT' refused_saying "$PD audit_log" "$_T/login.err" \
		as_login "insert into audit_log (action, status) values ('x', 1)"
else
	fail 'GRANT sandboxd_auditor TO a new login role' 'no superuser to create it'
fi

# --- the service's rights and the append-only trigger -----------------------------------------
check_eq "the service's login role has no direct table rights (all through sandboxd_service)" 0 \
	"$(sql "select count(*) from information_schema.role_table_grants where grantee = 'sandboxd'")"
check "the service's role cannot UPDATE audit_log" refused_saying "$PD audit_log" "$_T/svc.err" svc_try "update audit_log set status = 0"
check '(permission denied)' refused_by 'permission denied' "$_T/svc.err"
check "the service's role cannot DELETE from audit_log" refused_saying "$PD audit_log" "$_T/svc.err" svc_try "delete from audit_log"
check "the service's role cannot TRUNCATE audit_log" refused_saying "$PD audit_log" "$_T/svc.err" svc_try "truncate audit_log"
check "the service's role cannot touch a partition directly" refused_saying "$PD $THIS" "$_T/svc.err" svc_try "delete from $THIS"
check "the service's role cannot read a partition directly either" refused_saying "$PD $THIS" "$_T/svc.err" svc_try "select count(*) from $THIS"
check "the service's role cannot prune" refused_saying 'ERROR:  permission denied for function audit_prune' "$_T/svc.err" \
	svc_try "select * from audit_prune('1 day')"
check "the service's role may ensure partitions" svc_try "select * from audit_ensure_partitions()"
BEFORE=$(sql "select count(*) from audit_log")
check 'the owner cannot UPDATE audit_log (trigger)' refused_saying 'ERROR:  audit_log is append-only: UPDATE refused' "$_T/own.err" \
	own_try "update audit_log set status = 0"
check '(append-only: UPDATE refused)' refused_by 'append-only: UPDATE refused' "$_T/own.err"
check 'the owner cannot DELETE from audit_log (trigger)' refused_saying 'ERROR:  audit_log is append-only: DELETE refused' "$_T/own.err" \
	own_try "delete from audit_log"
check '(append-only: DELETE refused)' refused_by 'append-only: DELETE refused' "$_T/own.err"
check 'the owner cannot TRUNCATE audit_log (trigger)' refused_saying 'ERROR:  audit_log is append-only: TRUNCATE refused' "$_T/own.err" \
	own_try "truncate audit_log"
check '(append-only: TRUNCATE refused)' refused_by 'append-only: TRUNCATE refused' "$_T/own.err"
check "the owner cannot DELETE from a partition" refused_saying 'ERROR:  audit_log is append-only: DELETE refused' "$_T/own.err" \
	own_try "delete from $THIS"
check "the owner cannot TRUNCATE a partition" refused_saying 'ERROR:  audit_log is append-only: TRUNCATE refused' "$_T/own.err" \
	own_try "truncate $THIS"
check "the owner cannot TRUNCATE the default partition" refused_saying 'ERROR:  audit_log is append-only: TRUNCATE refused' "$_T/own.err" \
	own_try 'truncate audit_log_default'
check_cond 'no row went away' "(( \$(sql 'select count(*) from audit_log') >= $BEFORE ))"

# --- migration from the previous schema, partitions and pruning, in a throwaway database -------
DB2="adba_$SFX"
if sql_super "create database $DB2 owner sandboxd_owner" >/dev/null 2>&1; then
	AT_EXIT+=("sql_super 'drop database if exists $DB2 with (force)' >/dev/null 2>&1")
	s2() { psql -X -Atq -v ON_ERROR_STOP=1 -d "$DB2" -c "$1" 2>"$_T/s2.err"; }
	U2="postgresql:///$DB2?host=$PGHOST&port=$PGPORT&user=sandboxd_owner"
	check 'the previous schema (001, 002) by hand' psql -X -q -v ON_ERROR_STOP=1 -d "$DB2" \
		-f "$ROOT/sql/001_init.sql" -f "$ROOT/sql/002_git.sql" \
		-c 'CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())' \
		-c "INSERT INTO schema_migrations (version, name) VALUES (1, '001_init'), (2, '002_git')"
	s2 "insert into audit_log (at, action, status, login, details) values
	    (now() - interval '400 days', 'repo.get', 200, 'old', '{\"n\":1}'),
	    (now() - interval '150 days', 'repo.get', 404, 'mid', '{\"n\":2}'),
	    (now() - interval '40 days', 'git.push.ref', 403, 'recent', '{\"n\":3, \"ref\":\"refs/heads/main\", \"result\":\"refused\"}'),
	    (now(), 'user.get', 200, 'now', '{\"n\":4}')"
	OLDROWS=$(s2 "select string_agg(id || ':' || rfc3339(at) || ':' || login || ':' || details::text, ' ' order by id) from audit_log")
	SANDBOXD_DATABASE_URL=$U2 ctl migrate
	check_eq 'sandboxctl migrate from the previous schema: exit 0' 0 "$CTL_RC"
	check_eq 'it applied 003_audit' 'applied 003_audit' "$(grep '003' <<<"$CTL_OUT")"
	check_eq 'every old row survived, ids, times and details intact' "$OLDROWS" \
		"$(s2 "select string_agg(id || ':' || rfc3339(at) || ':' || login || ':' || details::text, ' ' order by id) from audit_log")"
	check_eq 'each old row is in the partition of its UTC month' 4 \
		"$(s2 "select count(*) from audit_log where tableoid::regclass::text = 'audit_log_' || to_char(at at time zone 'UTC', 'YYYY_MM')")"
	check_eq 'outcome is derived for old rows' 'success,failed,denied,success' "$(s2 "select string_agg(outcome, ',' order by id) from audit_log")"
	check_eq 'the sequence goes on after the old ids' 5 \
		"$(s2 "insert into audit_log (action, status) values ('after.migrate', 200) returning id")"
	SANDBOXD_DATABASE_URL=$U2 ctl migrate
	check_eq 'a second migrate: up to date' 'database is up to date' "$CTL_OUT"
	s2q() { s2 "$1" >/dev/null; }
	check 'the views run on the migrated database' s2q "select (select count(*) from audit_pushes) + (select count(*) from audit_denied) + (select count(*) from audit_repository_activity) + (select count(*) from audit_sandbox_commands) + (select count(*) from audit_denied_by_token_and_address)"

	# The owner may still INSERT old rows (the trigger only refuses changes); a row for a
	# month with no partition lands in the default partition, `audit partitions` moves it.
	check 'the owner INSERTs a row dated 3 years ago' s2 "insert into audit_log (at, action, status, login) values (now() - interval '3 years', 'ancient', 200, 'old')"
	check_eq 'it lands in the default partition' audit_log_default "$(s2 "select tableoid::regclass from audit_log where action = 'ancient'")"
	OLDM="audit_log_$(s2 "select to_char((now() - interval '3 years') at time zone 'UTC', 'YYYY_MM')")"
	SANDBOXD_DATABASE_URL=$U2 ctl audit partitions --months-ahead 3
	check_eq 'sandboxctl audit partitions: exit 0' 0 "$CTL_RC"
	check "it created $OLDM and months ahead" eval "grep -qx 'created $OLDM' <<<\"\$CTL_OUT\""
	check_eq 'the row moved into its month' "$OLDM" "$(s2 "select tableoid::regclass from audit_log where action = 'ancient'")"
	check_eq 'the default partition is empty again' 0 "$(s2 'select count(*) from audit_log_default')"
	check_eq 'three months ahead exist' 1 "$(s2 "select count(*) from audit_partitions where range_start = date_trunc('month', (now() at time zone 'UTC') + interval '3 months') at time zone 'UTC'")"
	SANDBOXD_DATABASE_URL=$U2 ctl audit partitions --months-ahead 3
	check_eq 'run again: nothing to do' 'audit_log partitions are in place (this month and 3 ahead)' "$CTL_OUT"

	# Pruning: 180 days. A row inside the limit keeps its whole month.
	s2 "insert into audit_log (at, action, status, login) values (now() - interval '179 days', 'edge', 200, 'in'), (now() - interval '181 days', 'edge', 200, 'out')"
	LIMIT="now() - interval '180 days'"
	PARTS_BEFORE=$(s2 "select string_agg(partition, ' ' order by partition) from audit_partitions")
	ROWS_BEFORE=$(s2 "select count(*) from audit_log")
	SANDBOXD_DATABASE_URL=$U2 ctl audit prune --older-than 180d --dry-run
	check_eq 'prune --dry-run: exit 0' 0 "$CTL_RC"
	DRY=$(sed -n 's/^would drop \(audit_log_[0-9_]*\) .*/\1/p' <<<"$CTL_OUT" | sort | paste -sd' ' -)
	check_eq '--dry-run changed no partition' "$PARTS_BEFORE" "$(s2 "select string_agg(partition, ' ' order by partition) from audit_partitions")"
	check_eq '--dry-run changed no row' "$ROWS_BEFORE" "$(s2 'select count(*) from audit_log')"
	WANT=$(s2 "select string_agg(partition, ' ' order by partition) from audit_partitions where not is_default and range_end <= $LIMIT")
	check_eq '--dry-run names exactly the months that end before the limit' "$WANT" "$DRY"
	check "the 3-year-old and 400-day-old months among them" eval "[[ ' $DRY ' == *' $OLDM '* && \$(wc -w <<<'$DRY') -ge 2 ]]"
	NEWER=$(s2 "select count(*) from audit_log where at >= $LIMIT")
	SANDBOXD_DATABASE_URL=$U2 ctl audit prune --older-than 180d
	check_eq 'prune: exit 0' 0 "$CTL_RC"
	DROPPED=$(sed -n 's/^dropped \(audit_log_[0-9_]*\) .*/\1/p' <<<"$CTL_OUT" | sort | paste -sd' ' -)
	check_eq 'it dropped what the dry run named' "$DRY" "$DROPPED"
	check 'and said how many' grep -qE "^dropped $(wc -w <<<"$DRY") partitions wholly older than [0-9T:Z-]+ \(180d\)$" <<<"$CTL_OUT"
	check_eq 'every row newer than the limit is still there' "$NEWER" "$(s2 "select count(*) from audit_log where at >= $LIMIT")"
	check_eq 'the row 179 days old is still there' 1 "$(s2 "select count(*) from audit_log where login = 'in'")"
	check_eq 'no month ending before the limit is left' 0 "$(s2 "select count(*) from audit_partitions where not is_default and range_end <= $LIMIT")"
	check_eq 'the 3-year-old and 400-day-old rows are gone' 0 "$(s2 "select count(*) from audit_log where login = 'old'")"
	check_eq 'rows in surviving months are untouched' "$(s2 "select count(*) from audit_log where at >= (select min(range_start) from audit_partitions where not is_default)")" \
		"$(s2 'select count(*) from audit_log')"
	SANDBOXD_DATABASE_URL=$U2 ctl audit prune --older-than 4320h
	check_eq 'prune --older-than 4320h (hours): nothing more to drop' 'dropped 0 partitions' "$(grep -o '^dropped 0 partitions' <<<"$CTL_OUT")"
	SANDBOXD_AUDIT_RETENTION=400d SANDBOXD_DATABASE_URL=$U2 ctl audit prune --dry-run
	check 'SANDBOXD_AUDIT_RETENTION is the default limit' grep -q '(400d)$' <<<"$CTL_OUT"
	SANDBOXD_AUDIT_RETENTION=soon SANDBOXD_DATABASE_URL=$U2 ctl audit prune
	check_eq 'a bad SANDBOXD_AUDIT_RETENTION: exit 2' 2 "$CTL_RC"
	SANDBOXD_DATABASE_URL=$U2 ctl audit prune --older-than 10w
	check_eq 'a bad --older-than: exit 2' 2 "$CTL_RC"
	check 'naming the value' grep -q "'10w' is not a retention" <<<"$CTL_ERR"
	SANDBOXD_DATABASE_URL=$U2 ctl audit prune --older-than 0d
	check_eq '--older-than 0d: exit 2' 2 "$CTL_RC"
	SANDBOXD_DATABASE_URL=$U2 ctl audit
	check_eq 'audit without a subcommand: exit 2' 2 "$CTL_RC"
	ctl audit --help
	check 'audit --help shows prune' grep -q 'sandboxctl audit prune \[--older-than' <<<"$CTL_OUT"
	ctl --help
	check 'sandboxctl --help lists audit and SANDBOXD_AUDIT_RETENTION' eval 'grep -q "audit partitions" <<<"$CTL_OUT" && grep -q SANDBOXD_AUDIT_RETENTION <<<"$CTL_OUT"'
	SANDBOXD_DATABASE_URL=$SANDBOXD_DATABASE_URL ctl audit prune --older-than 1d
	check_eq "the service's role cannot prune: exit 1" 1 "$CTL_RC"
else
	fail 'a throwaway database for the migration test' 'no superuser to create it'
fi

# --- no request succeeds without its row ------------------------------------------------------
# The audit INSERT fails (a trigger made for this test): the request's work is rolled back.
FAILNAME="auditfail$SFX"
sql "create function it_fail_audit_$SFX() returns trigger language plpgsql as \$\$ begin
       if new.repository = '$O/$FAILNAME' then raise exception 'audit row refused by the test'; end if;
       return new; end \$\$;
     create trigger it_fail_audit before insert on audit_log for each row execute function it_fail_audit_$SFX()" >/dev/null
AT_EXIT+=("sql 'drop trigger if exists it_fail_audit on audit_log; drop function if exists it_fail_audit_$SFX()' >/dev/null")
api POST /api/v3/user/repos "{\"name\":\"$FAILNAME\"}" "$OT"
check_cond 'a request whose audit row cannot be written does not succeed (5xx)' '[[ $STATUS == 5* ]]'
check_eq 'its repository row was rolled back' 0 "$(sql "select count(*) from repositories where name = '$FAILNAME'")"
check 'its directory was removed' test ! -e "$REPOS_DIR/$O/$FAILNAME.git"
sql "drop trigger it_fail_audit on audit_log; drop function it_fail_audit_$SFX()" >/dev/null
api POST /api/v3/user/repos "{\"name\":\"$FAILNAME\"}" "$OT"
expect_status 201 'the same request succeeds once its row can be written'
check_eq 'with its row' 'repo.create|201' "$(sql "select action || '|' || status from audit_log where request_id = '$REQ_ID'")"

# The database stopped: 503, and nothing happened.
PG_CTL=$(command -v pg_ctl || ls /usr/lib/postgresql/*/bin/pg_ctl 2>/dev/null | sort -V | tail -n 1)
PGD=$SANDBOXD_VAR/pg
as_postgres() { su postgres -s /bin/bash -c "$(printf '%q ' "$PG_CTL" -D "$PGD" "$@") >/dev/null 2>&1 </dev/null"; }
OPTS=$(cut -d' ' -f2- "$PGD/postmaster.opts" 2>/dev/null)
DOWNNAME="down$SFX"
if [[ -f $PGD/PG_VERSION ]] && as_postgres -m fast -w -t 60 stop; then
	api POST /api/v3/user/repos "{\"name\":\"$DOWNNAME\"}" "$OT"
	DOWN_ID=$REQ_ID
	expect_error 503 'database unavailable' 'database down: POST /user/repos answers 503 database unavailable'
	as_postgres -l "$SANDBOXD_VAR/log/postgres.log" -w -t 60 -o "$OPTS" start
	pg_up() { psql -X -Atq -c 'select 1' >/dev/null 2>&1; }
	check 'PostgreSQL is back' wait_until 20 pg_up
	recovered() { api GET /api/v3/user "" "$OT"; [[ $STATUS == 200 ]]; }
	check 'the service answers again' wait_until 20 recovered
	check_eq 'no repository row was made while it was down' 0 "$(sql "select count(*) from repositories where name = '$DOWNNAME'")"
	check 'no directory either' test ! -e "$REPOS_DIR/$O/$DOWNNAME.git"
	check_eq 'and no audit row claims that request' 0 "$(sql "select count(*) from audit_log where request_id = '$DOWN_ID' or repository = '$O/$DOWNNAME'")"
else
	fail 'stop PostgreSQL for the database-down check' "pg_ctl stop failed (data dir $PGD)"
fi

finish
