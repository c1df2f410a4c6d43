#!/usr/bin/env bash
# t_secrets.sh: sandbox secrets (SPEC.md §4 "Secrets"): PUT (admin) / GET (names and dates,
# never values) / DELETE; the table holds ciphertext only and the auditor cannot read it; a
# create asks for some by name; every exec of that sandbox has them in its environment and
# every way its output comes back shows them masked (attached, streamed, detached, the audit
# row's command); other sandboxes never get them; bad input refused by name; no value in
# any log.
. "$(dirname "$0")/lib.sh"

fails() { ! "$@"; }
O="sbs$SFX"
mk_repo "$O" secrets
BASE=/api/v3/repos/$R/sandbox-secrets
VALUE="npm_s3cr3t-$SFX-value"
put() { api PUT "$BASE/$1" "$(jq -nc --arg v "$2" '{value: $v}')" "${3:-$OT}"; }

# --- the routes -----------------------------------------------------------------------------------
api GET "$BASE" '' "$OT"
expect_status 200 'GET …/sandbox-secrets: 200'
check_eq 'none yet' '0|0' "$(_json '.total_count')|$(_json '.secrets | length')"
put NPM_TOKEN "$VALUE"
expect_status 201 'PUT a new secret: 201'
check_eq 'the answer names it, with its dates and no value' 'created_at,name,updated_at|NPM_TOKEN' "$(_json 'keys | join(",")')|$(_json .name)"
put NPM_TOKEN "$VALUE"
expect_status 204 'PUT it again: 204 (changed)'
put OTHER_SECRET "another-value-$SFX"
expect_status 201 'a second one'
api GET "$BASE" '' "$OT"
check_eq 'the list: names in order, dates, nothing else' '2|NPM_TOKEN,OTHER_SECRET|created_at,name,updated_at' \
	"$(_json '.total_count')|$(_json '.secrets | map(.name) | join(",")')|$(_json '.secrets[0] | keys | join(",")')"
check 'no value in the list' fails grep -qF "$VALUE" <<<"$BODY"
check_eq 'the table holds no value in clear' 0 \
	"$(sql "select count(*) from sandbox_secrets where position(convert_to('$VALUE', 'UTF8') in value_enc) > 0")"
check_eq "but a sealed value for each: version, nonce, tag and the value's ${#VALUE} bytes" "t" \
	"$(sql "select octet_length(value_enc) = 1 + 12 + 16 + ${#VALUE} from sandbox_secrets s join repositories r on r.id = s.repository_id join accounts a on a.id = r.owner_id where a.login = '$O' and s.name = 'NPM_TOKEN'")"
check 'the auditor role cannot read the sealed values' grep -q 'permission denied' <<<"$(sql "set role sandboxd_auditor; select value_enc from sandbox_secrets" 2>&1)"
check_eq 'while it reads the names' 'NPM_TOKEN,OTHER_SECRET' "$(sql "set role sandboxd_auditor; select string_agg(s.name, ',' order by s.name) from sandbox_secrets s join repositories r on r.id = s.repository_id where r.name = 'secrets'")"

# --- bad input, permissions ---------------------------------------------------------------------
put 1BAD "$VALUE"
expect_error 422 "secret names are letters, digits and '_', not starting with a digit, at most 128" 'a bad name: 422'
put SHORT short
expect_error 422 "field 'value' must be 8 to 4096 bytes" 'a value under 8 bytes: 422 (it could not be masked)'
put LONG "$(head -c 4097 /dev/zero | tr '\0' a)"
expect_error 422 "field 'value' must be 8 to 4096 bytes" 'over 4096 bytes: 422'
api PUT "$BASE/NOVALUE" '{}' "$OT"
expect_error 400 "field 'value' is required" 'no value: 400'
api PUT "$BASE/NUMBER" '{"value": 12345678}' "$OT"
expect_names_field 400 value 'a number: 400 naming value'
RD=$(mk_token "$O" read)
put NPM_TOKEN "$VALUE" "$RD"
expect_error 403 'this needs a token with write scope' 'a read-scoped token cannot set one'
WRITER="sbsw$SFX"
mk_user "$WRITER" || exit 1
WT=$LAST_TOKEN
api PUT "/api/v3/repos/$R/collaborators/$WRITER" '{"role":"write"}' "$OT"
put NPM_TOKEN "$VALUE" "$WT"
expect_error 403 "this needs the admin role on $R" 'a write collaborator cannot set one'
api DELETE "$BASE/OTHER_SECRET" '' "$WT"
expect_error 403 "this needs the admin role on $R" 'nor delete one'
api GET "$BASE" '' "$WT"
check_eq 'but lists the names (to ask for them)' '200|2' "$STATUS|$(_json .total_count)"

# --- a sandbox that asks for one ----------------------------------------------------------------
api POST "$SB" '{"secrets":["NOPE"]}' "$OT"
expect_error 422 'unknown secret: NOPE' 'asking for a secret the repository lacks: 422'
api POST "$SB" '{"secrets":"NPM_TOKEN"}' "$OT"
expect_names_field 400 secrets 'secrets as a string: 400'
api POST "$SB" '{"secrets":["NPM_TOKEN","NPM_TOKEN"]}' "$OT"
expect_error 400 "field 'secrets' names 'NPM_TOKEN' twice" 'twice: 400'
api POST "$SB" '{"secrets":["NPM_TOKEN"]}' "$OT"
expect_status 201 'a sandbox with NPM_TOKEN'
ID=$(_json .id)
AT_EXIT+=("api POST '$SB/$ID/close' '' '$OT' >/dev/null 2>&1")
check_eq 'its create is audited with the names asked for' '["NPM_TOKEN"]' "$(sql "select details->'secrets' from audit_log where action = 'sandbox.create' and sandbox_id = '$ID'")"
run() { api POST "$SB/$ID/exec" "$(jq -nc --arg c "$1" '{cmd: $c}')" "$OT"; }
run "[ \"\$NPM_TOKEN\" = '$VALUE' ] && echo same; printenv OTHER_SECRET || echo not-asked"
expect_json .stdout $'same\nnot-asked' 'the exec has it in its environment (and not the one it did not ask for)'
run 'echo "token=$NPM_TOKEN"; echo "$NPM_TOKEN" >&2'
check_eq 'attached: masked in stdout and stderr' 'token=***|***' "$(_json .stdout)|$(_json .stderr)"
check 'no byte run of it in the answer' fails grep -qF "$VALUE" <<<"$BODY"
curl -sSN --max-time 30 -H "Authorization: Bearer $OT" -H 'Accept: application/x-ndjson' \
	-H 'Content-Type: application/json' --data-binary '{"cmd":"echo \"$NPM_TOKEN\"; sleep 0.2; echo \"$NPM_TOKEN\" | rev | rev"}' \
	"$SANDBOXD_URL$SB/$ID/exec" >"$_T/lines"
check_eq 'streamed: masked on every line' '***|***' "$(jq -rs 'map(.stdout // empty) | join("") | split("\n") | map(select(length > 0)) | join("|")' "$_T/lines")"
check 'no byte run of it in the stream' fails grep -qF "$VALUE" "$_T/lines"
api POST "$SB/$ID/exec" '{"cmd":"echo \"d:$NPM_TOKEN\"","detach":true}' "$OT"
D=$(_json .execId)
check 'detached: it ends' wait_until 20 eval 'api GET "$SB/$ID/execs/$D" "" "$OT"; [ "$(_json .state)" = exited ]'
check_eq 'detached: masked in its output' 'd:***' "$(_json .stdout)"
run "echo $VALUE | wc -c"
check_eq 'a command that holds the value runs' "$((${#VALUE} + 1))" "$(_json .stdout | tr -d ' ')"
check_eq 'its audit row holds the command masked' 'echo *** | wc -c' \
	"$(sql "select details->>'cmd' from audit_log where sandbox_id = '$ID' and action = 'sandbox.exec' order by id desc limit 1")"
# A detached exec whose command holds the value itself: its row keeps the command masked.
api POST "$SB/$ID/exec" "$(jq -nc --arg c "echo $VALUE | wc -c" '{cmd: $c, detach: true}')" "$OT"
DV=$(_json .execId)
check_eq 'a detached exec whose command holds the value: its row has the command masked' \
	'echo *** | wc -c' "$(sql "select cmd from detached_execs where sandbox_id = '$ID' and id = '$DV'")"
api POST "$SB/$ID/exec" "$(jq -nc '{cmd: "printf %s \"$NPM_TOKEN\"", env: {NPM_TOKEN: "the-caller-wins"}}')" "$OT"
check_eq "the caller's env overrides it" 'the-caller-wins' "$(_json .stdout)"
check_eq 'no audit row holds the value' 0 "$(sql "select count(*) from audit_log where details::text like '%$VALUE%'")"
check_eq 'nor a detached exec row' 0 "$(sql "select count(*) from detached_execs where cmd like '%$VALUE%'")"

# Another sandbox of the same repository that asked for none.
api POST "$SB" '{}' "$OT"
expect_status 201 'a sandbox without secrets'
B=$(_json .id)
AT_EXIT+=("api POST '$SB/$B/close' '' '$OT' >/dev/null 2>&1")
api POST "$SB/$B/exec" '{"cmd":"printenv NPM_TOKEN || echo unset"}' "$OT"
expect_json .stdout unset 'does not get it'

# --- delete ----------------------------------------------------------------------------------------
api DELETE "$BASE/NPM_TOKEN" '' "$OT"
expect_status 204 'DELETE: 204'
api DELETE "$BASE/NPM_TOKEN" '' "$OT"
expect_error 404 'secret not found' 'again: 404'
run 'printenv NPM_TOKEN || echo gone'
expect_json .stdout gone 'a deleted secret is gone from the next exec'
api GET "$BASE" '' "$OT"
check_eq 'and from the list' 'OTHER_SECRET' "$(_json '.secrets | map(.name) | join(",")')"
check_eq 'the routes are audited by name, never value' 'secret.delete:NPM_TOKEN secret.put:NPM_TOKEN secret.put:OTHER_SECRET' \
	"$(sql "select string_agg(distinct action || ':' || (details->>'secret'), ' ') from audit_log where repository = '$R' and action in ('secret.put', 'secret.delete') and status in (201, 204)")"
# grep -r on a directory that is not there (or unreadable) exits 2: only 1, "read and not
# found", passes; and the logs must be there, sandboxd's with lines in it.
no_value_in_logs() {
	[[ -s $SANDBOXD_VAR/log/sandboxd.log ]] || { printf '       no %s\n' "$SANDBOXD_VAR/log/sandboxd.log"; return 1; }
	grep -rqF -- "$VALUE" "$SANDBOXD_VAR/log"
	[[ $? == 1 ]]
}
check 'no log of the stack holds the value' no_value_in_logs
finish
