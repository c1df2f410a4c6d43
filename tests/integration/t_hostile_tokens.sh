#!/usr/bin/env bash
# t_hostile_tokens.sh: tokens and access tried as a hostile user would (issue 11, items 1,
# 8, 11 and 13): each attack with the refusal's exact status and text, next to the same
# call made by someone who may, so that a refusal for the wrong reason does not pass.
. "$(dirname "$0")/lib.sh"

export GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=/bin/false
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
HOSTPORT=${SANDBOXD_URL#http://}
WRITE_SCOPE='this needs a token with write scope'
NO_JOB='job and sandbox tokens can'"'"'t start sandboxes'
JOB_ONLY='job tokens can only be used on their repository'

# The newest sandbox token the suite recorded (lib.sh reads it from the container at create).
last_dst() { grep -oE 'dst_[0-9A-Za-z]{42}' "$IT_TOKENS" 2>/dev/null | tail -n 1; }
# push TOKEN REF: a push from W with the token as password; git's stderr in PUSH_ERR.
push() {
	PUSH_ERR=$(git -C "$W" push -q "http://t:$1@$HOSTPORT/$R.git" "HEAD:refs/heads/$2" 2>&1)
}
# refused TEXT: the last push failed, and git said TEXT.
refused() { [[ $PUSH_ERR == *"$1"* ]] || { printf '       git said: %s\n' "$PUSH_ERR"; return 1; }; }
git_refs() { # TOKEN OWNER/NAME: "status body" of info/refs with the token as password
	curl -s -o "$_T/gitbody" -w '%{http_code}' -u "x:$1" \
		"$SANDBOXD_URL/$2.git/info/refs?service=git-upload-pack"
	printf ' %s' "$(head -c 200 "$_T/gitbody" | tr -d '\n')"
}
no_container() { [[ -z $(docker ps -aq --filter "label=sandboxd.sandbox=$(owner_label_of "$1")") ]]; }
git_status() { git_refs "$@" | cut -d' ' -f1; }

O_LOGIN="hto$SFX"
mk_sandbox "$O_LOGIN" app
SBX=$SB/$ID
OREAD=$(mk_token "$O_LOGIN" read)
check 'a read-scoped token of the creator' test -n "$OREAD"
OWNER_T=$OT
check 'the clone is done' wait_until 60 bash -c "curl -s -H 'Authorization: Bearer $OT' '$SANDBOXD_URL$SBX' | grep -q '\"state\":\"done\"'"

# --- item 1: every call on a sandbox needs write scope and the write role ---------------
api GET "$SBX" "" "$OREAD"
expect_error 403 "$WRITE_SCOPE" 'a read-scoped token: GET sandbox 403'
api GET "$SBX" "" "$OT"
expect_status 200 'the same account with a write token: GET sandbox 200'
api GET "$SB" "" "$OREAD"
expect_error 403 "$WRITE_SCOPE" 'a read-scoped token: list sandboxes 403'
api GET "$SB" "" "$OT"
expect_status 200 'a write token: list sandboxes 200'
api POST "$SBX/read" '{"path":".git/config"}' "$OREAD"
expect_error 403 "$WRITE_SCOPE" 'a read-scoped token: read .git/config 403 (it holds the push credential)'
api POST "$SBX/read" '{"path":"x"}' "$OT"
expect_status 200 'a write token: read 200'
api POST "$SBX/write" '{"path":"y","content":"eQ=="}' "$OREAD"
expect_error 403 "$WRITE_SCOPE" 'a read-scoped token: write 403'
api POST "$SBX/exec" '{"cmd":"true"}' "$OREAD"
expect_error 403 "$WRITE_SCOPE" 'a read-scoped token: exec 403'
api POST "$SBX/exec" '{"cmd":"echo hi","detach":true}' "$OT"
expect_status 202 'a write token: detached exec 202'
EXEC=$(_json .execId)
api GET "$SBX/execs/$EXEC" "" "$OREAD"
expect_error 403 "$WRITE_SCOPE" 'a read-scoped token: GET execs/{id} 403'
api GET "$SBX/execs/$EXEC" "" "$OT"
expect_status 200 'a write token: GET execs/{id} 200'
api POST "$SBX/close" '' "$OREAD"
expect_error 403 "$WRITE_SCOPE" 'a read-scoped token: close 403'
api POST "/api/v3/repos/$R/job-tokens" '{"scope":"read"}' "$OT"
JREAD=$(_json .token)
api POST "/api/v3/repos/$R/job-tokens" '{"scope":"write"}' "$OT"
JWRITE=$(_json .token)
JWRITE_ID=$(_json .id)
api POST "$SBX/read" '{"path":".git/config"}' "$JREAD"
expect_error 403 "$NO_JOB" 'a read job token: read 403'
api POST "$SBX/read" '{"path":".git/config"}' "$JWRITE"
expect_error 403 "$NO_JOB" 'a write job token: read 403 (job tokens use no sandbox)'
api GET "$SBX" "" "$JWRITE"
expect_error 403 "$NO_JOB" 'a write job token: GET sandbox 403'
api GET "$SBX" "" "$OT"
expect_json .state ready 'and the sandbox is still there for its creator'

# --- item 11: a sandbox token is for git only; a job token serves one repository -------
DST=$(last_dst)
check 'the sandbox token was read from its container' test -n "$DST"
api GET "/api/v3/repos/$R" "" "$DST"
expect_error 403 'sandbox tokens can only be used for git' 'a sandbox token: GET the repository over REST 403'
api GET "/api/v3/user" "" "$DST"
expect_error 403 'sandbox tokens can only be used for git' 'a sandbox token: GET /user 403 (as before)'
check_eq 'a sandbox token: info/refs of its repository over git 200' 200 "$(git_status "$DST" "$R")"
X="htx$SFX"
mk_user "$X" || exit 1
XT=$LAST_TOKEN
api POST /api/v3/user/repos '{"name":"secret","visibility":"private"}' "$XT"
expect_status 201 "another owner's private repository"
api GET "/api/v3/repos/$R" "" "$JREAD"
expect_status 200 'a job token reads its own repository'
api GET "/api/v3/repos/$X/secret" "" "$JREAD"
expect_error 403 "$JOB_ONLY" "a job token on another owner's private repository: 403"
EXISTING="$STATUS $BODY"
api GET "/api/v3/repos/$X/nothing-here" "" "$JREAD"
expect_error 403 "$JOB_ONLY" 'a job token on a repository that does not exist: the same 403'
check_eq 'REST: the same answer, existing or not' "$EXISTING" "$STATUS $BODY"
check_eq 'git: a job token reads its own repository' 200 "$(git_status "$JREAD" "$R")"
GIT_EXISTING=$(git_refs "$JREAD" "$X/secret")
check_cond "git: a job token on another owner's private repository: 403 ($GIT_EXISTING)" '[[ $GIT_EXISTING == "403 "*"$JOB_ONLY"* ]]'
check_eq 'git: the same answer for a repository that does not exist' "$GIT_EXISTING" "$(git_refs "$JREAD" "$X/nothing-here")"

# --- item 13: job tokens mint no git URLs; repository admins revoke job tokens ---------
api POST "/api/v3/repos/$R/job-tokens" '{"scope":"write","expires_in":60}' "$OT"
JSHORT=$(_json .token)
JSHORT_ID=$(_json .id)
api POST "/api/v3/repos/$R/git-urls" '{"scopes":["git:write"],"ttl":3600}' "$JSHORT"
expect_error 403 "job tokens can't mint git URLs" 'a job token: POST git-urls 403 (a URL would outlive it)'
api POST "/api/v3/repos/$R/git-urls" '{"scopes":["git:write"]}' "$OT"
expect_status 201 'a personal write token: POST git-urls 201'
AD="htad$SFX"
mk_user "$AD" || exit 1
ADT=$LAST_TOKEN
WR="htwr$SFX"
mk_user "$WR" || exit 1
WRT=$LAST_TOKEN
api PUT "/api/v3/repos/$R/collaborators/$AD" '{"role":"admin"}' "$OT"
api PUT "/api/v3/repos/$R/collaborators/$WR" '{"role":"write"}' "$OT"
api DELETE "/api/v3/user/tokens/$JSHORT_ID" '' "$WRT"
expect_error 404 'token not found' "a write collaborator: DELETE another's job token 404"
api DELETE "/api/v3/user/tokens/$JSHORT_ID" '' "$OREAD"
expect_error 403 "$WRITE_SCOPE" 'the maker with a read-scoped token: DELETE its job token 403'
check_eq 'the job token still works' 200 "$(git_status "$JSHORT" "$R")"
api DELETE "/api/v3/user/tokens/$JSHORT_ID" '' "$ADT"
expect_status 204 'another admin of the repository: DELETE the job token 204'
check_eq 'the revoked job token: 401 on git' 401 "$(git_status "$JSHORT" "$R")"
api DELETE "/api/v3/user/tokens/$JWRITE_ID" '' "$OT"
expect_status 204 'the admin who made it: DELETE the job token 204'
api GET "/api/v3/repos/$R" "" "$JWRITE"
expect_error 401 'bad credentials' 'the revoked job token: 401 on REST'

# --- item 13: a read-scoped token revokes nothing --------------------------------------
OW2=$(mk_token "$O_LOGIN" write)
OW2_ID=$(last_token_id)
api DELETE "/api/v3/user/tokens/$OW2_ID" '' "$OREAD"
expect_error 403 "$WRITE_SCOPE" "a read-scoped token: DELETE the account's write token 403"
api GET /api/v3/user "" "$OW2"
expect_status 200 'the write token still works'
api DELETE "/api/v3/user/tokens/$OW2_ID" '' "$OT"
expect_status 204 'a write token: DELETE it 204'
api GET /api/v3/user "" "$OW2"
expect_error 401 'bad credentials' 'and it is revoked'

# --- item 13: default_branch: agents may not change it; it names an existing branch -----
AG="htag$SFX"
mk_user "$AG" --kind agent || exit 1
AGT=$LAST_TOKEN
api PUT "/api/v3/repos/$R/collaborators/$AG" '{"role":"admin"}' "$OT"
git -C "$W" push -q "http://t:$OT@$HOSTPORT/$R.git" main:dev
api PATCH "/api/v3/repos/$R" '{"default_branch":"dev"}' "$AGT"
expect_error 403 "agents may not change the default branch" 'an admin agent: PATCH default_branch 403'
api GET "/api/v3/repos/$R" "" "$OT"
expect_json .default_branch main 'the default branch is unchanged'
api PATCH "/api/v3/repos/$R" '{"default_branch":"main","visibility":"private"}' "$AGT"
expect_status 200 'an admin agent: PATCH other fields (and the same default branch) 200'
api PATCH "/api/v3/repos/$R" '{"default_branch":"no-such-branch"}' "$OT"
expect_error 422 "field 'default_branch' must name an existing branch" 'a branch that does not exist: 422'
api PATCH "/api/v3/repos/$R" '{"default_branch":"dev"}' "$OT"
expect_status 200 'the owner: PATCH default_branch to an existing branch 200'
expect_json .default_branch dev 'and it changed'
api PATCH "/api/v3/repos/$R" '{"default_branch":"main"}' "$OT"
expect_json .default_branch main 'and back'
api POST /api/v3/user/repos '{"name":"empty","visibility":"private"}' "$OT"
api PATCH "/api/v3/repos/$O_LOGIN/empty" '{"default_branch":"trunk"}' "$OT"
expect_status 200 'an empty repository takes any valid name (the first push creates it)'

# --- item 13: the audit row stores the changes applied, bounded -------------------------
head -c 900000 /dev/zero | tr '\0' a >"$_T/pad"
jq -n --rawfile p "$_T/pad" '{visibility: "private", owner: "someone", site_admin: true, padding: $p}' >"$_T/patch.json"
api PATCH "/api/v3/repos/$R" "@$_T/patch.json" "$OT"
expect_status 200 'PATCH with unknown fields and 900 KB of padding: 200'
check_eq 'audit details.changes holds only what was applied' '{"visibility":"private"}' \
	"$(sql "select details->'changes' from audit_log where request_id = '$REQ_ID'" | jq -c .)"
check_cond 'the audit row is small' "(( \$(sql \"select length(details::text) from audit_log where request_id = '$REQ_ID'\") < 4096 ))"
jq -n --rawfile p "$_T/pad" '{disabled: false, login: "root", padding: $p}' >"$_T/acct.json"
api PATCH "/api/v3/admin/accounts/$X" "@$_T/acct.json"
expect_status 200 'PATCH an account with unknown fields and padding: 200'
check_eq 'audit details.changes of an account holds only what was applied' '{"disabled":false}' \
	"$(sql "select details->'changes' from audit_log where request_id = '$REQ_ID'" | jq -c .)"

# --- item 13: keys: proof of the private key, and no kid someone else uses ---------------
KA=$_T/ka.pem
"$SANDBOXCTL" key generate --out "$KA" >"$_T/ka.pub" 2>/dev/null
api POST /api/v3/user/keys "$(jq -n --rawfile k "$_T/ka.pub" '{public_key: $k}')" "$XT"
expect_error 400 "field 'proof' is required" "another account's public key without proof: 400"
PROOF_O=$("$SANDBOXCTL" key proof --key "$KA" --login "$O_LOGIN" 2>/dev/null)
api POST /api/v3/user/keys "$(jq -n --rawfile k "$_T/ka.pub" --arg p "$PROOF_O" '{public_key: $k, proof: $p}')" "$XT"
expect_error 400 "field 'proof' does not prove the key: it was made for another account" "someone else's proof: 400"
KB=$_T/kb.pem
"$SANDBOXCTL" key generate --out "$KB" >/dev/null 2>&1
PROOF_B=$("$SANDBOXCTL" key proof --key "$KB" --login "$X" 2>/dev/null)
api POST /api/v3/user/keys "$(jq -n --rawfile k "$_T/ka.pub" --arg p "$PROOF_B" '{public_key: $k, proof: $p}')" "$XT"
expect_error 400 "field 'proof' does not prove the key: signed by another key" 'a proof signed by another key: 400'
api POST /api/v3/user/keys "$(jq -n --rawfile k "$_T/ka.pub" --arg p "$PROOF_O" '{public_key: $k, proof: $p}')" "$OT"
expect_status 201 'the key holder registers it with a proof: 201'
KID=$(_json .kid)
PROOF_X=$("$SANDBOXCTL" key proof --key "$KA" --login "$X" 2>/dev/null)
api POST /api/v3/user/keys "$(jq -n --rawfile k "$_T/ka.pub" --arg p "$PROOF_X" '{public_key: $k, proof: $p}')" "$XT"
expect_error 409 "key $KID is already registered" 'a key another account registered, even with its private key: 409'
SIGN_KEY=$_T/service.pem
sql "select private_pem from signing_keys order by created_at desc limit 1" >"$SIGN_KEY"
if [[ ! -s $SIGN_KEY ]] && [[ -r $SANDBOXD_VAR/keys/signing.pem ]]; then cp "$SANDBOXD_VAR/keys/signing.pem" "$SIGN_KEY"; fi
openssl pkey -in "$SIGN_KEY" -pubout -out "$_T/service.pub" 2>/dev/null
PROOF_S=$("$SANDBOXCTL" key proof --key "$SIGN_KEY" --login "$X" 2>/dev/null)
api POST /api/v3/user/keys "$(jq -n --rawfile k "$_T/service.pub" --arg p "$PROOF_S" '{public_key: $k, proof: $p}')" "$XT"
expect_json_match .message '^key .* is already registered$' "the service's own signing key: refused"
expect_status 409 "the service's own signing key: 409"
DUP_OUT=$(psql -X -Atq -v ON_ERROR_STOP=1 -c "insert into signing_keys (kid, private_pem, retired_at) values ('$KID', 'x', now())" 2>&1) && DUP_RC=0 || DUP_RC=$?
check_cond 'the database refuses a signing key whose kid an account holds (migration 006)' \
	'[[ $DUP_RC != 0 && $DUP_OUT == *"key $KID is already registered"* ]]'
check 'and takes one whose kid no one holds (rolled back)' \
	sql "begin; insert into signing_keys (kid, private_pem, retired_at) values ('fresh$SFX', 'x', now()); rollback"
api POST /api/v3/repos/$R/git-urls '{"scopes":["git:read"]}' "$OT"
check_eq 'service-minted URLs still verify' 200 "$(git_status "$(_json .url | sed 's/.*x-token:\(.*\)@.*/\1/')" "$R")"

# --- item 8: a sandbox token revoked for lost access stays revoked ----------------------
B="htb$SFX"
mk_user "$B" || exit 1
BT=$LAST_TOKEN
api PUT "/api/v3/repos/$R/collaborators/$B" '{"role":"write"}' "$OT"
api POST "$SB" '{}' "$BT"
expect_status 201 'a write collaborator creates a sandbox'
BID=$(_json .id)
BDST=$(last_dst)
check 'its token was read from its container' test -n "$BDST"
push "$BDST" "b-before-$SFX"
check 'its sandbox token pushes while the role lasts' test -z "$PUSH_ERR"
api DELETE "/api/v3/repos/$R/collaborators/$B" '' "$OT"
expect_status 204 'the creator is removed as collaborator'
push "$BDST" "b-removed-$SFX"
check 'removed: the sandbox token is refused (bad credentials)' refused 'Authentication failed'
REMOVED_ERR=$PUSH_ERR
api PUT "/api/v3/repos/$R/collaborators/$B" '{"role":"write"}' "$OT"
expect_status 204 'the creator is added back'
push "$BDST" "b-back-$SFX"
check 'added back: the old sandbox token is still refused' refused 'Authentication failed'
check_eq 'with the same text' "${REMOVED_ERR//b-removed-/b-X-}" "${PUSH_ERR//b-back-/b-X-}"
check_eq 'no ref was pushed after the removal' '' "$(git --git-dir "$REPOS_DIR/$R.git" for-each-ref "refs/heads/b-back-$SFX" "refs/heads/b-removed-$SFX")"
api GET "$SB/$BID" "" "$BT"
expect_json .state stopped 'the sandbox is stopped'
check_eq 'with its reason' 'the creator lost access' "$(sql "select end_reason from sandboxes where id = '$BID'")"
check 'its container is removed (by the reaper)' wait_until 60 no_container "$BID"
api POST "$SB" '{}' "$BT"
expect_status 201 'added back, the creator makes a new sandbox'
NDST=$(last_dst)
push "$NDST" "b-new-$SFX"
check 'whose token pushes' test -z "$PUSH_ERR"
api PUT "/api/v3/repos/$R/collaborators/$B" '{"role":"read"}' "$OT"
push "$NDST" "b-read-$SFX"
check 'demoted to read: the sandbox token is refused' refused 'Authentication failed'
api PUT "/api/v3/repos/$R/collaborators/$B" '{"role":"write"}' "$OT"
push "$NDST" "b-write-$SFX"
check 'promoted back to write: still refused' refused 'Authentication failed'

# A disabled account: the same, for good.
api POST "$SB" '{}' "$OWNER_T"
expect_status 201 'the owner makes a second sandbox'
ODST=$(last_dst)
push "$ODST" "o-before-$SFX"
check "the owner's sandbox token pushes" test -z "$PUSH_ERR"
ctl account disable "$O_LOGIN"
push "$ODST" "o-disabled-$SFX"
check 'account disabled: the sandbox token is refused' refused 'Authentication failed'
DISABLED_ERR=$PUSH_ERR
ctl account enable "$O_LOGIN"
api GET /api/v3/user "" "$OWNER_T"
expect_status 200 "re-enabled: the owner's personal token works again"
push "$ODST" "o-enabled-$SFX"
check 're-enabled: the old sandbox token is still refused' refused 'Authentication failed'
check_eq 'with the same text' "${DISABLED_ERR//o-disabled-/o-X-}" "${PUSH_ERR//o-enabled-/o-X-}"
api PATCH "/api/v3/admin/accounts/$B" '{"disabled":true}'
expect_status 200 'disabling through the API'
api PATCH "/api/v3/admin/accounts/$B" '{"disabled":false}'
push "$NDST" "b-api-$SFX"
check 'the same through the API (already revoked: still refused)' refused 'Authentication failed'
check_eq 'the revocation is audited with the sandbox it ended' t "$(sql "select details->'sandboxes_ended' ? '$BID' from audit_log where action = 'collaborator.remove' and repository = '$R' order by id limit 1")"
finish
