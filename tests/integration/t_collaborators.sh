#!/usr/bin/env bash
# t_collaborators.sh: PUT/DELETE …/collaborators/{login}, roles applied at once
# (re-read on every request), job tokens limited to their repository.
. "$(dirname "$0")/lib.sh"

O="collabowner$SFX"
mk_user "$O" || exit 1
OT=$LAST_TOKEN
B="collabbob$SFX"
mk_user "$B" || exit 1
BT=$LAST_TOKEN
C="collabcarol$SFX"
mk_user "$C" || exit 1
CT=$LAST_TOKEN
OREAD=$(mk_token "$O" read)

R="team$SFX"
api POST /api/v3/user/repos "{\"name\":\"$R\",\"visibility\":\"private\"}" "$OT"
expect_status 201 'owner creates a private repository'
P="open$SFX"
api POST /api/v3/user/repos "{\"name\":\"$P\",\"visibility\":\"public\"}" "$OT"
expect_status 201 'owner creates a public repository'
BASE="/api/v3/repos/$O/$R"
NEEDS_ADMIN="this needs the admin role on $O/$R"

# --- no role ---------------------------------------------------------------------
api GET "$BASE" "" "$BT"
expect_error 404 'repository not found' 'no role: private repository is 404'

# --- read ------------------------------------------------------------------------
api PUT "$BASE/collaborators/$B" '{"role":"read"}' "$OT"
expect_status 204 'PUT collaborator {role: read}: 204'
expect_empty_body 'PUT collaborator answers with no body'
api GET "$BASE" "" "$BT"
expect_status 200 'read role: GET works at once'
api PATCH "$BASE" '{"visibility":"public"}' "$BT"
expect_error 403 "$NEEDS_ADMIN" 'read role: PATCH 403 needs the admin role'
api PUT "$BASE/collaborators/$C" '{"role":"read"}' "$BT"
expect_error 403 "$NEEDS_ADMIN" 'read role: PUT collaborator 403 needs the admin role'

# --- write -------------------------------------------------------------------------
api PUT "$BASE/collaborators/$B" '{"role":"write"}' "$OT"
expect_status 204 'PUT collaborator {role: write} (a change of role): 204'
api GET "$BASE" "" "$BT"
expect_status 200 'write role: GET works'
api PATCH "$BASE" '{"archived":true}' "$BT"
expect_error 403 "$NEEDS_ADMIN" 'write role: PATCH 403 needs the admin role'
api POST "$BASE/job-tokens" '{"scope":"read"}' "$BT"
expect_error 403 "$NEEDS_ADMIN" 'write role: POST job-tokens 403 needs the admin role'

# --- admin: applies between two requests -------------------------------------------
api PATCH "$BASE" '{"default_branch":"bob-was-here"}' "$BT"
expect_error 403 "$NEEDS_ADMIN" 'before the role change: PATCH refused'
api PUT "$BASE/collaborators/$B" '{"role":"admin"}' "$OT"
expect_status 204 'PUT collaborator {role: admin}: 204'
api PATCH "$BASE" '{"default_branch":"bob-was-here"}' "$BT"
expect_status 200 'admin role: the very next PATCH works'
expect_json .default_branch bob-was-here 'the PATCH by the new admin applied'
api PUT "$BASE/collaborators/$C" '{"role":"read"}' "$BT"
expect_status 204 'admin role: PUT collaborator works'
api GET "$BASE" "" "$CT"
expect_status 200 "the collaborator added by an admin collaborator reads the repository"

# --- removal applies at once ---------------------------------------------------------
api DELETE "$BASE/collaborators/$B" "" "$OT"
expect_status 204 'DELETE collaborator: 204'
expect_empty_body 'DELETE collaborator answers with no body'
api GET "$BASE" "" "$BT"
expect_error 404 'repository not found' 'removed collaborator: the very next GET is 404'
api PATCH "$BASE" '{"default_branch":"main"}' "$BT"
expect_error 404 'repository not found' 'removed collaborator: PATCH is 404'

# --- the same through sandboxctl, between two requests -------------------------------
ctl collaborator set "$O/$R" "$B" write
check_eq 'sandboxctl collaborator set … write: exit 0' 0 "$CTL_RC"
api GET "$BASE" "" "$BT"
expect_status 200 'sandboxctl collaborator set: applies to the next request'
ctl collaborator set "$O/$R" "$B" none
check_eq 'sandboxctl collaborator set … none: exit 0' 0 "$CTL_RC"
api GET "$BASE" "" "$BT"
expect_error 404 'repository not found' 'sandboxctl collaborator set none: the next request is 404'

# a role on a public repository
api PATCH "/api/v3/repos/$O/$P" '{"visibility":"public"}' "$BT"
expect_error 403 "this needs the admin role on $O/$P" 'public repository, no role: PATCH 403'
ctl collaborator set "$O/$P" "$B" admin
api PATCH "/api/v3/repos/$O/$P" '{"visibility":"public"}' "$BT"
expect_status 200 'public repository, admin role via sandboxctl: PATCH works at once'

# --- validation and errors -------------------------------------------------------------
api PUT "$BASE/collaborators/$B" '{}' "$OT"
expect_error 400 "field 'role' is required" 'PUT collaborator without role: 400'
api PUT "$BASE/collaborators/$B" '{"role":3}' "$OT"
expect_error 400 "field 'role' must be a string" 'PUT collaborator role of the wrong type: 400'
api PUT "$BASE/collaborators/$B" '{"role":"owner"}' "$OT"
expect_names_field 400 role 'PUT collaborator role owner: 400 naming role'
api PUT "$BASE/collaborators/$B" '' "$OT"
check_cond 'PUT collaborator with no body: 400' '[[ $STATUS == 400 ]]'
api PUT "$BASE/collaborators/nosuch$SFX" '{"role":"read"}' "$OT"
expect_error 404 "account 'nosuch$SFX' not found" 'PUT collaborator for an unknown account: 404'
api PUT "/api/v3/repos/$O/nosuch$SFX/collaborators/$B" '{"role":"read"}' "$OT"
expect_error 404 'repository not found' 'PUT collaborator on an unknown repository: 404'
api PUT "$BASE/collaborators/$B" '{"role":"read"}' "$OREAD"
expect_error 403 'this needs a token with write scope' 'owner read-scoped token: PUT collaborator 403'
api DELETE "$BASE/collaborators/$C" "" "$OREAD"
expect_error 403 'this needs a token with write scope' 'owner read-scoped token: DELETE collaborator 403'
api PATCH "$BASE" '{"visibility":"public"}' "$OREAD"
expect_error 403 'this needs a token with write scope' 'owner read-scoped token: PATCH 403'
api GET "$BASE" "" "$OREAD"
expect_status 200 'owner read-scoped token: GET works'
api PUT "$BASE/collaborators/$C" '{"role":"read"}' "$CT"
expect_error 403 "$NEEDS_ADMIN" 'read collaborator: PUT collaborator 403'
api PUT "$BASE/collaborators/$B" '{"role":"read"}' -
check_cond 'PUT collaborator without a token: 401' '[[ $STATUS == 401 ]]'
api PUT "$BASE/collaborators/$B" '{"role":"read"}'
expect_status 204 'a site admin sets collaborators on any repository'
api DELETE "$BASE/collaborators/$B"
expect_status 204 'a site admin removes collaborators on any repository'

# --- job tokens ----------------------------------------------------------------------------
api POST "$BASE/job-tokens" '{"scope":"write"}' "$OT"
expect_status 201 'POST job-tokens {scope: write} by the owner: 201'
expect_keys . 'id,token,scope,expires_at' 'job token shape {id, token, scope, expires_at}'
expect_json_match .id '^[0-9]+$' 'job token id is a string of digits'
expect_json_match .token '^djt_' 'job token starts with djt_'
expect_json .scope write 'job token scope write'
JT=$(_json .token)
exp=$(epoch "$(_json .expires_at)")
now=$(date -u +%s)
check_cond 'job token default expiry is 86400 s' "[[ -n '$exp' ]] && (( $exp - $now >= 86400 - 120 && $exp - $now <= 86400 + 120 ))"
api POST "$BASE/job-tokens" '{"scope":"read","expires_in":600}' "$OT"
expect_status 201 'POST job-tokens {scope: read, expires_in: 600}: 201'
JR=$(_json .token)
exp=$(epoch "$(_json .expires_at)")
check_cond 'job token expires_in 600 is honoured' "[[ -n '$exp' ]] && (( $exp - $now >= 600 - 120 && $exp - $now <= 600 + 120 ))"
api POST "$BASE/job-tokens" '{"scope":"all"}' "$OT"
expect_names_field 400 scope 'job token scope all: 400 naming scope'
api POST "$BASE/job-tokens" '{"scope":"read","expires_in":10}' "$OT"
expect_names_field 400 expires_in 'job token expires_in 10: 400 naming expires_in'

JOB_ONLY='job tokens can only be used on their repository'
api GET "$BASE" "" "$JT"
expect_status 200 'job token: GET its repository'
expect_json .full_name "$O/$R" 'job token reads its repository'
api GET "$BASE" "" "$(basic "$JT")"
expect_status 200 'job token over Basic auth: GET its repository'
api GET "/api/v3/repos/$O/$P" "" "$JT"
expect_error 403 "$JOB_ONLY" 'job token on another repository (even a public one): 403'
api POST /api/v3/user/repos "{\"name\":\"other$SFX\"}" "$OT"
api GET "/api/v3/repos/$O/other$SFX" "" "$JT"
expect_error 403 "$JOB_ONLY" "job token on another private repository of the same owner: 403"
api PATCH "/api/v3/repos/$O/$P" '{"visibility":"public"}' "$JT"
expect_error 403 "$JOB_ONLY" 'job token PATCH on another repository: 403'
api POST /api/v3/user/repos "{\"name\":\"byjob$SFX\"}" "$JT"
expect_error 403 "$JOB_ONLY" 'job token on POST /user/repos: 403'
check 'job token left nothing on disk' test ! -e "$REPOS_DIR/$O/byjob$SFX.git"
api POST /api/v3/user/tokens '{"scope":"write"}' "$JT"
expect_error 403 "$JOB_ONLY" 'job token on POST /user/tokens: 403'
api POST /api/v3/admin/accounts "{\"login\":\"byjob$SFX\"}" "$JT"
expect_error 403 "$JOB_ONLY" 'job token on POST /admin/accounts: 403'
api PATCH "$BASE" '{"visibility":"public"}' "$JR"
expect_error 403 'this needs a token with write scope' 'read job token: PATCH its repository 403'

api DELETE "/api/v3/user/tokens/1" "" "$JT"
expect_error 403 "$JOB_ONLY" 'job token on DELETE /user/tokens/{id}: 403'

# a job token acts for the admin who made it: disabling that account stops it at once
ctl account disable "$O"
api GET "$BASE" "" "$JT"
expect_error 401 'bad credentials' "the job token's account disabled: 401 at once"
ctl account enable "$O"
api GET "$BASE" "" "$JT"
expect_status 200 "the job token's account enabled again: 200"

# the job token's repository access follows the repository (archived: read-only)
api PATCH "$BASE" '{"archived":true}' "$OT"
api GET "$BASE" "" "$JT"
expect_status 200 'job token still reads its archived repository'
api PATCH "$BASE" '{"archived":false}' "$OT"

finish
