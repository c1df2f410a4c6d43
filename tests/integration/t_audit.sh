#!/usr/bin/env bash
# t_audit.sh: one audit_log row per request, found by the X-Request-Id of the
# response, with the action, status and login; secrets never in it; the
# service's database role may only append.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_guard.sh"

U="aud$SFX"
mk_user "$U" || exit 1
UT=$LAST_TOKEN
UT_ID=$LAST_TOKEN_ID
UR=$(mk_token "$U" read)

ALL_IDS=()

# audit ACTION STATUS LOGIN LABEL: the last response's request id has exactly one
# audit row, with these values (LOGIN "" means no account).
audit() {
	local action=$1 status=$2 login=$3 label=$4 id=$REQ_ID row n
	if [[ -z $id ]]; then
		fail "$label: audit row" "the response had no X-Request-Id"
		return 1
	fi
	ALL_IDS+=("$id")
	# The row may be written just after the response: give it a moment.
	wait_until 5 has_audit_row "$id" || true
	n=$(sql "select count(*) from audit_log where request_id = '$id'")
	if [[ $n != 1 ]]; then
		fail "$label: exactly one audit row for request $id" "found $n rows"
		return 1
	fi
	row=$(sql "select action || '|' || status || '|' || coalesce(login, '') from audit_log where request_id = '$id'")
	check_eq "$label: audit row (action|status|login)" "$action|$status|$login" "$row"
}
has_audit_row() { [[ $(sql "select count(*) from audit_log where request_id = '$1'") -ge 1 ]]; }
col() { sql "select $2 from audit_log where request_id = '$1'"; }

# --- reads and auth failures -----------------------------------------------------------
api GET /api/v3/user "" "$UT"
expect_status 200 'GET /api/v3/user'
audit user.get 200 "$U" 'GET /user'
ID_GET=$REQ_ID
check_eq 'the audit row names the token used' "$UT_ID" "$(col "$ID_GET" 'token_id::text')"
check_cond 'the audit row has the token kind' "[[ -n \$(col '$ID_GET' 'token_kind') ]]"
check_eq 'the audit row names the account id' "$(sql "select id::text from accounts where login = '$U'")" "$(col "$ID_GET" 'account_id::text')"
check_cond 'the audit row has the remote address' "[[ \$(col '$ID_GET' 'remote_addr::text') == 127.0.0.1* ]]"
check_cond 'the audit row has a duration' "[[ \$(col '$ID_GET' 'duration_ms::text') =~ ^[0-9]+$ ]]"
check_cond 'the audit row has a recent time' "[[ \$(col '$ID_GET' \"(at > now() - interval '5 minutes')::text\") == true ]]"

api GET /api/v3/user "" -
audit auth.required 401 '' 'no Authorization header'
BAD="dfy_${UT:4:30}AAAAAAAAAAAA"
api GET /api/v3/user "" "$BAD"
audit auth.denied 401 '' 'bad token'
check_eq 'the denial audit row does not hold the presented token' 0 \
	"$(sql "select count(*) from audit_log a where request_id = '$REQ_ID' and position('${BAD:4:30}' in a::text) > 0")"
api GET /api/v3/user "" "$(basic wrong "$U")"
audit auth.denied 401 '' 'bad Basic password'
ctl account disable "$U"
api GET /api/v3/user "" "$UT"
check_cond 'disabled account: audit row is auth.denied 401' \
	"wait_until 5 has_audit_row '$REQ_ID'; [[ \$(col '$REQ_ID' \"action || '|' || status\") == 'auth.denied|401' ]]"
ALL_IDS+=("$REQ_ID")
ctl account enable "$U"

api GET /healthz "" -
audit health.get 200 '' 'GET /healthz'

# --- routing errors ------------------------------------------------------------------------
api GET /api/v3/nope "" "$UT"
expect_status 404 'GET /api/v3/nope'
check_cond '404: audit row is route.unknown 404' \
	"wait_until 5 has_audit_row '$REQ_ID'; [[ \$(col '$REQ_ID' \"action || '|' || status\") == 'route.unknown|404' ]]"
ALL_IDS+=("$REQ_ID")
api DELETE /api/v3/user "" "$UT"
check_cond '405: audit row is route.unknown 405' \
	"wait_until 5 has_audit_row '$REQ_ID'; [[ \$(col '$REQ_ID' \"action || '|' || status\") == 'route.unknown|405' ]]"
ALL_IDS+=("$REQ_ID")

# --- repositories ----------------------------------------------------------------------------
R="aud$SFX"
api POST /api/v3/user/repos "{\"name\":\"$R\"}" "$UT"
expect_status 201 'POST /user/repos'
audit repo.create 201 "$U" 'create repository'
check_cond 'repo.create audit row names the repository' "[[ -n \$(col '$REQ_ID' 'repository::text') ]]"
api POST /api/v3/user/repos "{\"name\":\"$R\"}" "$UT"
audit repo.create 409 "$U" 'duplicate repository'
api POST /api/v3/user/repos '{"name":"a/b"}' "$UT"
audit repo.create 400 "$U" 'bad repository name'
api POST /api/v3/user/repos "{\"name\":\"ro$SFX\"}" "$UR"
audit repo.create 403 "$U" 'read token on a write route'
head -c $((${SANDBOXD_BODY_LIMIT:-1048576} + 10)) /dev/zero | tr '\0' ' ' >"$_T/big.json"
api POST /api/v3/user/repos "@$_T/big.json" "$UT"
expect_status 413 'over the body limit'
check_cond '413: one audit row with status 413' \
	"wait_until 5 has_audit_row '$REQ_ID'; [[ \$(col '$REQ_ID' 'status::text') == 413 && \$(sql \"select count(*) from audit_log where request_id = '$REQ_ID'\") == 1 ]]"
ALL_IDS+=("$REQ_ID")
api GET "/api/v3/repos/$U/$R" "" "$UT"
ID_REPO_GET=$REQ_ID
check_cond 'GET repository: one audit row, status 200, login' \
	"wait_until 5 has_audit_row '$REQ_ID'; [[ \$(col '$REQ_ID' \"status || '|' || login\") == '200|$U' ]]"
ALL_IDS+=("$REQ_ID")
api PATCH "/api/v3/repos/$U/$R" '{"visibility":"public"}' "$UT"
audit repo.update 200 "$U" 'PATCH repository'
api PATCH "/api/v3/repos/$U/$R" '{"archived":true}' "$UT"
audit repo.update 200 "$U" 'archive repository'
api PATCH "/api/v3/repos/$U/$R" '{"visibility":"private"}' "$UT"
audit repo.update 403 "$U" 'PATCH refused on an archived repository'
api PATCH "/api/v3/repos/$U/$R" '{"archived":false}' "$UT"
audit repo.update 200 "$U" 'un-archive repository'

# --- collaborators, tokens, accounts -------------------------------------------------------------
C="audc$SFX"
mk_account "$C"
api PUT "/api/v3/repos/$U/$R/collaborators/$C" '{"role":"write"}' "$UT"
audit collaborator.set 204 "$U" 'PUT collaborator'
api DELETE "/api/v3/repos/$U/$R/collaborators/$C" "" "$UT"
audit collaborator.remove 204 "$U" 'DELETE collaborator'

api POST /api/v3/user/tokens '{"scope":"read"}' "$UT"
NEWTOK=$(_json .token)
NEWID=$(_json .id)
audit token.create 201 "$U" 'POST /user/tokens'
check_eq 'token.create audit row does not hold the new token' 0 \
	"$(sql "select count(*) from audit_log a where request_id = '$REQ_ID' and position('${NEWTOK:4:36}' in a::text) > 0")"
api DELETE "/api/v3/user/tokens/$NEWID" "" "$UT"
audit token.revoke 204 "$U" 'DELETE /user/tokens/{id}'
api POST "/api/v3/repos/$U/$R/job-tokens" '{"scope":"read"}' "$UT"
JT=$(_json .token)
audit job_token.create 201 "$U" 'POST job-tokens'
check_eq 'job_token.create audit row does not hold the job token' 0 \
	"$(sql "select count(*) from audit_log a where request_id = '$REQ_ID' and position('${JT:4:30}' in a::text) > 0")"

api POST /api/v3/admin/accounts "{\"login\":\"auda$SFX\"}"
audit account.create 201 admin 'POST /admin/accounts'
api PATCH "/api/v3/admin/accounts/auda$SFX" '{"disabled":true}'
audit account.update 200 admin 'PATCH /admin/accounts/{login}'
api POST /api/v3/admin/accounts "{\"login\":\"audb$SFX\"}" "$UT"
audit account.create 403 "$U" 'POST /admin/accounts by a non-admin'
api POST "/api/v3/admin/accounts/auda$SFX/tokens" '{"scope":"read"}'
AT=$(_json .token)
check_cond 'admin token mint: audit row status 201, login admin' \
	"wait_until 5 has_audit_row '$REQ_ID'; [[ \$(col '$REQ_ID' \"status || '|' || login\") == '201|admin' ]]"
ALL_IDS+=("$REQ_ID")
check_eq 'admin token mint audit row does not hold the token' 0 \
	"$(sql "select count(*) from audit_log a where request_id = '$REQ_ID' and position('${AT:4:36}' in a::text) > 0")"

# --- one row per request, over everything above ---------------------------------------------------
dups=0 missing=0
for id in "${ALL_IDS[@]}"; do
	n=$(sql "select count(*) from audit_log where request_id = '$id'")
	((n == 0)) && missing=$((missing + 1))
	((n > 1)) && dups=$((dups + 1))
done
check_eq "every one of ${#ALL_IDS[@]} requests has an audit row" 0 "$missing"
check_eq 'no request has two audit rows' 0 "$dups"
check_eq 'request ids are unique' "${#ALL_IDS[@]}" "$(printf '%s\n' "${ALL_IDS[@]}" | sort -u | wc -l)"

# --- append-only for the service's database role ----------------------------------------------------
svc_sql() { # in a transaction rolled back; psql's errors in $_T/svc.err
	psql -X -Atq -v ON_ERROR_STOP=1 "$SANDBOXD_DATABASE_URL" -c 'begin' -c "$1" -c 'rollback' >/dev/null 2>"$_T/svc.err"
}
svc_read() { psql -X -Atq -v ON_ERROR_STOP=1 "$SANDBOXD_DATABASE_URL" -c "select count(*) from audit_log where request_id = '$ID_GET'" >/dev/null 2>&1; }
check "the service's role can read audit_log" svc_read
# Refused by the database for that reason: a connection that fails is no refusal.
check "the service's role cannot UPDATE audit_log: permission denied" refused_saying \
	'ERROR:  permission denied for table audit_log' "$_T/svc.err" svc_sql "update audit_log set status = 0 where request_id = '$ID_GET'"
check "the service's role cannot DELETE from audit_log: permission denied" refused_saying \
	'ERROR:  permission denied for table audit_log' "$_T/svc.err" svc_sql "delete from audit_log where request_id = '$ID_REPO_GET'"
check_eq 'the audit rows are intact' '200' "$(col "$ID_GET" 'status::text')"

finish
