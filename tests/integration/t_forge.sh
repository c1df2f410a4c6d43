#!/usr/bin/env bash
# t_forge.sh: the everyday routes of a forge (SPEC §4, issue 17): an account's repositories
# listed and paginated as GitHub's (per_page, page, Link), collaborators listed, the
# caller's tokens (never a secret) and keys listed, a key deleted (what it signed fails at
# once), a repository renamed (301 from the old name for REST and git) and deleted (rows,
# refs, objects, its sandboxes closed), and ephemeral refs expired by the reaper after
# SANDBOXD_EPHEMERAL_TTL (the stack restarted with a short one, then with the suite's).
. "$(dirname "$0")/lib.sh"

HOSTPORT=${SANDBOXD_URL#http://}
REPO_KEYS='archived,clone_url,created_at,default_branch,full_name,name,owner,sandbox_image,visibility'
git_url() { printf 'http://t:%s@%s/%s.git' "$1" "$HOSTPORT" "$2"; }
names() { jq -r '[.[].name] | join(",")' <<<"$BODY"; }
link_of() { header Link || true; }

# --- listing an account's repositories ---------------------------------------------------
L="lister$SFX"
mk_user "$L" || exit 1
LT=$LAST_TOKEN
for n in e d c b a; do
	api POST /api/v3/user/repos "{\"name\":\"$n$SFX\",\"visibility\":\"$([[ $n == [bd] ]] && echo public || echo private)\"}" "$LT"
	[[ $STATUS == 201 ]] || fail "repository $n$SFX created" "status $STATUS"
done
O="forgeowner$SFX"
mk_user "$O" || exit 1
OT=$LAST_TOKEN
api POST /api/v3/user/repos "{\"name\":\"shared$SFX\"}" "$OT"
expect_status 201 "$O/shared$SFX created"
api PUT "/api/v3/repos/$O/shared$SFX/collaborators/$L" '{"role":"write"}' "$OT"
expect_status 204 "$L is made a write collaborator of $O/shared$SFX"

api GET /api/v3/user/repos '' "$LT"
expect_status 200 'GET /user/repos: 200'
check_eq 'its own five and the one it collaborates on, by full_name (forgeowner… < lister…)' \
	"shared$SFX,a$SFX,b$SFX,c$SFX,d$SFX,e$SFX" "$(names)"
expect_keys '.[0]' "$REPO_KEYS" 'each is the repository shape'
expect_json '.[0].full_name' "$O/shared$SFX" 'the collaborator repository carries its owner'
check_eq 'everything on one page: no Link header' '' "$(link_of)"

BASE="$SANDBOXD_URL/api/v3/user/repos"
api GET '/api/v3/user/repos?per_page=2' '' "$LT"
check_eq 'per_page=2: the first two' "shared$SFX,a$SFX" "$(names)"
expect_header Link "<$BASE?per_page=2&page=2>; rel=\"next\", <$BASE?per_page=2&page=3>; rel=\"last\"" \
	'page 1 of 3: Link next and last'
api GET '/api/v3/user/repos?per_page=2&page=2' '' "$LT"
check_eq 'page=2: the next two' "b$SFX,c$SFX" "$(names)"
expect_header Link "<$BASE?per_page=2&page=3>; rel=\"next\", <$BASE?per_page=2&page=3>; rel=\"last\", <$BASE?per_page=2&page=1>; rel=\"first\", <$BASE?per_page=2&page=1>; rel=\"prev\"" \
	'page 2 of 3: next, last, first, prev'
api GET '/api/v3/user/repos?page=3&per_page=2' '' "$LT"
check_eq 'page=3: the last two' "d$SFX,e$SFX" "$(names)"
expect_header Link "<$BASE?per_page=2&page=1>; rel=\"first\", <$BASE?per_page=2&page=2>; rel=\"prev\"" \
	'the last page: first and prev only'
api GET '/api/v3/user/repos?per_page=2&page=9' '' "$LT"
expect_status 200 'a page past the end: 200'
check_eq 'and an empty array' 0 "$(jq length <<<"$BODY")"
api GET '/api/v3/user/repos?per_page=1000&page=x' '' "$LT"
check_eq 'per_page over 100 is 100 and a page that is no number is 1 (as GitHub)' 6 "$(jq length <<<"$BODY")"

api GET /api/v3/user/repos '' -
expect_error 401 'authentication required' 'GET /user/repos without a token: 401'
JT=$(api POST "/api/v3/repos/$L/a$SFX/job-tokens" '{"scope":"read"}' "$LT"; _json .token)
api GET /api/v3/user/repos '' "$JT"
expect_error 403 'job tokens can only be used on their repository' 'a job token may not list the account'\''s repositories'
RT=$(mk_token "$L" read)
api GET /api/v3/user/repos '' "$RT"
expect_status 200 'a read-scoped personal token lists them'

api GET "/api/v3/users/$L/repos" '' -
expect_status 200 'GET /users/{login}/repos anonymously: 200'
check_eq 'only the public ones (as GitHub)' "b$SFX,d$SFX" "$(names)"
api GET "/api/v3/users/$L/repos?per_page=1" '' "$OT"
check_eq 'per_page=1: the first' "b$SFX" "$(names)"
expect_header Link "<$SANDBOXD_URL/api/v3/users/$L/repos?per_page=1&page=2>; rel=\"next\", <$SANDBOXD_URL/api/v3/users/$L/repos?per_page=1&page=2>; rel=\"last\"" \
	'its Link header names its own path'
api GET "/api/v3/users/nosuch$SFX/repos" '' "$OT"
expect_error 404 "account 'nosuch$SFX' not found" 'an unknown login: 404'

# --- collaborators ------------------------------------------------------------------------
Rd="rdr$SFX"
mk_user "$Rd" || exit 1
RdT=$LAST_TOKEN
api PUT "/api/v3/repos/$O/shared$SFX/collaborators/$Rd" '{"role":"read"}' "$OT"
expect_status 204 "$Rd is made a read collaborator"
STR="stranger$SFX"
mk_user "$STR" || exit 1
STRT=$LAST_TOKEN
C="/api/v3/repos/$O/shared$SFX/collaborators"
api GET "$C" '' "$OT"
expect_status 200 'GET …/collaborators as the owner: 200'
check_eq 'the owner first, then the collaborators by login' "$O:admin,$L:write,$Rd:read" \
	"$(jq -r '[.[] | "\(.login):\(.role_name)"] | join(",")' <<<"$BODY")"
expect_keys '.[1]' 'created_at,disabled,email,kind,login,name,permissions,role_name,site_admin' \
	'each is the account shape with role_name and permissions'
expect_json '.[1].permissions | "\(.pull) \(.push) \(.admin)"' 'true true false' 'write: pull and push, not admin'
expect_json '.[2].permissions | "\(.pull) \(.push) \(.admin)"' 'true false false' 'read: pull only'
api GET "$C" '' "$LT"
expect_status 200 'a write collaborator lists them'
api GET "$C?per_page=1&page=2" '' "$LT"
check_eq 'paginated too' "$L" "$(jq -r '.[0].login' <<<"$BODY")"
api GET "$C" '' "$RdT"
expect_error 403 "this needs the write role on $O/shared$SFX" 'a read collaborator may not (GitHub asks for push access)'
api GET "$C" '' "$STRT"
expect_error 404 'repository not found' 'a stranger gets the private repository'\''s 404'

# --- tokens and keys ---------------------------------------------------------------------------
T="toks$SFX"
mk_user "$T" || exit 1
TT=$LAST_TOKEN
TT_ID=$LAST_TOKEN_ID
api POST /api/v3/user/tokens '{"scope":"read","note":"ci laptop"}' "$TT"
expect_status 201 'a second token minted'
NEW_ID=$(_json .id)
NEW_TOK=$(_json .token)
api POST /api/v3/user/tokens '{"scope":"write","note":"gone"}' "$TT"
GONE_ID=$(_json .id)
api DELETE "/api/v3/user/tokens/$GONE_ID" '' "$TT"
expect_status 204 'a third one revoked'
api POST /api/v3/user/repos "{\"name\":\"tk$SFX\"}" "$TT"
api POST "/api/v3/repos/$T/tk$SFX/job-tokens" '{"scope":"write"}' "$TT"
JOB_ID=$(_json .id)
api GET /api/v3/user/tokens '' "$TT"
expect_status 200 'GET /user/tokens: 200'
check_eq 'the live ones, newest first (the revoked one not)' "$JOB_ID,$NEW_ID,$TT_ID" \
	"$(jq -r '[.[].id] | join(",")' <<<"$BODY")"
expect_keys '.[1]' 'created_at,expires_at,id,kind,last_used_at,note,repository,scope' \
	'{id, kind, scope, note, repository, created_at, expires_at, last_used_at}'
expect_json '.[1] | "\(.kind) \(.scope) \(.note) \(.repository)"' 'personal read ci laptop null' 'the read token as minted'
expect_json '.[0] | "\(.kind) \(.scope) \(.repository)"' "job write $T/tk$SFX" 'the job token names its repository'
expect_json_match '.[2].last_used_at' "$RFC3339_UTC" 'the calling token has been used'
check 'no secret anywhere in the answer' bash -c '! grep -qE "d(fy|jt)_" <<<"$1" && ! grep -qF "$2" <<<"$1"' _ "$BODY" "$NEW_TOK"
api GET /api/v3/user/tokens '' "$NEW_TOK"
expect_status 200 'a read-scoped token lists them too'
api GET /api/v3/user/tokens '' "$JT"
expect_error 403 'job tokens can only be used on their repository' 'a job token may not list tokens'

KEY=$_T/owner.pem
check 'sandboxctl key generate' "$SANDBOXCTL" key generate --out "$KEY" >"$_T/owner.pub" 2>/dev/null
PROOF=$("$SANDBOXCTL" key proof --key "$KEY" --login "$T")
api GET /api/v3/user/keys '' "$TT"
expect_body '[]' 'GET /user/keys with none: []'
api POST /api/v3/user/keys "$(jq -n --rawfile k "$_T/owner.pub" --arg p "$PROOF" '{public_key: $k, proof: $p}')" "$TT"
expect_status 201 'a key registered'
KID=$(_json .kid)
api GET /api/v3/user/keys '' "$TT"
expect_json '[.[].kid] | join(",")' "$KID" 'GET /user/keys lists it'
expect_keys '.[0]' 'created_at,kid,public_key' '{kid, public_key, created_at}'
check_eq 'public_key is the PEM registered' "$(cat "$_T/owner.pub")" "$(jq -r '.[0].public_key' <<<"$BODY")"
OURL=$("$SANDBOXCTL" git-url --key "$KEY" --repo "$T/tk$SFX" --scope git:read --ttl 600 --url "$SANDBOXD_URL")
refs_code() { curl -s -o /dev/null -w '%{http_code}' "$1/info/refs?service=git-upload-pack"; }
check_eq 'an owner-signed URL works before the delete' 200 "$(refs_code "$OURL")"
api DELETE "/api/v3/user/keys/$KID" '' "$NEW_TOK"
expect_error 403 'this needs a token with write scope' 'a read-scoped token may not delete a key'
api DELETE "/api/v3/user/keys/$KID" '' "$OT"
expect_error 404 'key not found' 'someone else'\''s key: 404'
api DELETE "/api/v3/user/keys/nosuchkid" '' "$TT"
expect_error 404 'key not found' 'an unknown kid: 404'
check_eq 'the URL still works after those refusals' 200 "$(refs_code "$OURL")"
api DELETE "/api/v3/user/keys/$KID" '' "$TT"
expect_status 204 'DELETE /user/keys/{kid}: 204'
RID=$REQ_ID
check_eq 'what it signed stops working at once: 401' 401 "$(refs_code "$OURL")"
check_eq 'a URL signed after the delete: 401 too' 401 \
	"$(refs_code "$("$SANDBOXCTL" git-url --key "$KEY" --repo "$T/tk$SFX" --scope git:read --ttl 600 --url "$SANDBOXD_URL")")"
api DELETE "/api/v3/user/keys/$KID" '' "$TT"
expect_status 204 'deleting it twice: 204 again'
api GET /api/v3/user/keys '' "$TT"
expect_body '[]' 'it is no longer listed'
api POST /api/v3/user/keys "$(jq -n --rawfile k "$_T/owner.pub" --arg p "$PROOF" '{public_key: $k, proof: $p}')" "$TT"
expect_error 409 "key $KID is already registered" 'a deleted kid cannot be registered again (one kid, one key, for ever)'
check_eq 'the delete is audited with its kid' "key.delete|204|$KID" \
	"$(sql "select action, status, details->>'kid' from audit_log where request_id = '$RID'")"

# --- renaming ---------------------------------------------------------------------------------
mk_repo "ren$SFX" "old$SFX"
RO="ren$SFX"
ROT=$OT
OLD="old$SFX" NEW="new$SFX"
api PUT "/api/v3/repos/$RO/$OLD/collaborators/$Rd" '{"role":"read"}' "$ROT"
api PATCH "/api/v3/repos/$RO/$OLD" "{\"name\":\"$NEW\"}" "$RdT"
expect_error 403 "this needs the admin role on $RO/$OLD" 'a read collaborator may not rename'
api PATCH "/api/v3/repos/$RO/$OLD" '{"name":"bad..name"}' "$ROT"
expect_names_field 400 name 'an invalid name: 400 naming the field'
api POST /api/v3/user/repos "{\"name\":\"taken$SFX\"}" "$ROT"
api PATCH "/api/v3/repos/$RO/$OLD" "{\"name\":\"TAKEN$SFX\"}" "$ROT"
expect_error 409 "repository $RO/TAKEN$SFX already exists" 'a name taken (case-insensitively): 409'
check 'the refused renames moved nothing' test -d "$REPOS_DIR/$RO/$OLD.git"
api PATCH "/api/v3/repos/$RO/$OLD" "{\"name\":\"$NEW\"}" "$ROT"
expect_status 200 'PATCH {name}: 200'
RID=$REQ_ID
expect_json '"\(.name) \(.full_name)"' "$NEW $RO/$NEW" 'the answer has the new name'
expect_json .clone_url "$SANDBOXD_URL/$RO/$NEW.git" 'and the new clone_url'
check 'the bare repository moved on disk' test -d "$REPOS_DIR/$RO/$NEW.git"
check 'nothing is left at the old path' test ! -e "$REPOS_DIR/$RO/$OLD.git"
check_eq 'audited: repo.update, the new name, the old one' "repo.update|$RO/$NEW|$NEW|$OLD" \
	"$(sql "select action, repository, details->'changes'->>'name', details->>'renamed_from' from audit_log where request_id = '$RID'")"
api GET "/api/v3/repos/$RO/$OLD" '' "$ROT"
expect_error 301 'Moved Permanently' 'GET the old name: 301'
expect_header Location "/api/v3/repos/$RO/$NEW" 'Location: the new path'
api GET "/api/v3/repos/$RO/$OLD/collaborators?per_page=1" '' "$ROT"
expect_header Location "/api/v3/repos/$RO/$NEW/collaborators?per_page=1" 'a deeper path keeps its rest and query'
api GET "/api/v3/repos/$RO/${OLD^^}" '' "$ROT"
expect_status 301 'the old name in another case: 301 too'
FOLLOWED=$(curl -sS -L -H "Authorization: Bearer $ROT" "$SANDBOXD_URL/api/v3/repos/$RO/$OLD" | jq -r .full_name)
check_eq 'curl -L lands on the repository' "$RO/$NEW" "$FOLLOWED"
RJT=$(api POST "/api/v3/repos/$RO/$NEW/job-tokens" '{"scope":"read"}' "$ROT"; _json .token)
api GET "/api/v3/repos/$RO/$OLD" '' "$RJT"
expect_error 301 'Moved Permanently' "the repository's job token gets the 301 too"
api GET "/api/v3/repos/$RO/$NEW" '' "$RJT"
expect_status 200 'and reads the new name'
api GET "/api/v3/repos/$RO/$OLD" '' "$JT"
expect_error 403 'job tokens can only be used on their repository' "another repository's job token: the same 403 as for any other name"
check_eq 'git ls-remote with the job token through the old URL' \
	"$(git --git-dir "$REPOS_DIR/$RO/$NEW.git" rev-parse refs/heads/main)" \
	"$(git ls-remote "$(git_url "$RJT" "$RO/$OLD")" main 2>/dev/null | cut -f1)"
api GET "/api/v3/repos/$RO/$OLD" '' "$STRT"
expect_error 404 'repository not found' 'a stranger gets 404 for the old name of a private repository (no leak)'
api GET "/api/v3/repos/$RO/$OLD" '' -
expect_error 404 'repository not found' 'so does an anonymous caller'
check 'git clone through the old URL follows the 301' git clone -q "$(git_url "$ROT" "$RO/$OLD")" "$_T/renamed"
check_eq 'and gets the repository' x "$(cat "$_T/renamed/x" 2>/dev/null)"
echo y >"$_T/renamed/y" && git -C "$_T/renamed" add y &&
	git -C "$_T/renamed" -c user.name=t -c user.email=t@t commit -qm y
check 'git push through the old URL lands too' git -C "$_T/renamed" push -q origin main
check_eq 'in the renamed repository' "$(git -C "$_T/renamed" rev-parse HEAD)" \
	"$(git --git-dir "$REPOS_DIR/$RO/$NEW.git" rev-parse refs/heads/main)"
api PATCH "/api/v3/repos/$RO/$NEW" "{\"name\":\"third$SFX\"}" "$ROT"
expect_status 200 'renamed once more'
api GET "/api/v3/repos/$RO/$OLD" '' "$ROT"
expect_header Location "/api/v3/repos/$RO/third$SFX" 'the first name leads to the newest one'
api GET "/api/v3/repos/$RO/$NEW" '' "$ROT"
expect_header Location "/api/v3/repos/$RO/third$SFX" 'and so does the second'
api POST /api/v3/user/repos "{\"name\":\"$OLD\"}" "$ROT"
expect_status 201 'a new repository may take the old name'
api GET "/api/v3/repos/$RO/$OLD" '' "$ROT"
expect_status 200 'the old name is now that repository, not a redirect'
expect_json .default_branch main 'the new one'
api PATCH "/api/v3/repos/$RO/third$SFX" "{\"name\":\"Third$SFX\"}" "$ROT"
expect_json .name "Third$SFX" 'a change of case only: 200'
check 'its directory follows the case' test -d "$REPOS_DIR/$RO/Third$SFX.git"

# --- deleting --------------------------------------------------------------------------------
mk_sandbox "del$SFX" "gone$SFX"
DO="del$SFX" DT=$OT DR0="$DO/gone$SFX"
# Renamed under its live sandbox first: the sandbox's clone names the old URL.
api PATCH "/api/v3/repos/$DR0" "{\"name\":\"gone2$SFX\"}" "$DT"
expect_status 200 "the sandbox's repository renamed"
DR="$DO/gone2$SFX"
api POST "/api/v3/repos/$DR/diffinery/sandboxes/$ID/exec" '{"cmd":"git ls-remote origin main"}' "$DT"
expect_json .exitCode 0 'git in the sandbox, with its own token, follows the 301 from the URL it cloned'
expect_json_match .stdout "^$(git --git-dir "$REPOS_DIR/$DR.git" rev-parse main)[[:space:]]refs/heads/main" \
	'and lists the repository'"'"'s main'
AG="delagent$SFX"
mk_user "$AG" --kind agent || exit 1
AGT=$LAST_TOKEN
api PUT "/api/v3/repos/$DR/collaborators/$AG" '{"role":"admin"}' "$DT"
api PUT "/api/v3/repos/$DR/collaborators/$Rd" '{"role":"write"}' "$DT"
api DELETE "/api/v3/repos/$DR" '' "$RdT"
expect_error 403 "this needs the admin role on $DR" 'a write collaborator may not delete'
api DELETE "/api/v3/repos/$DR" '' "$AGT"
expect_error 403 'agents may not delete repositories' 'an agent, even an admin, may not delete'
api GET "/api/v3/repos/$DR" '' "$DT"
expect_status 200 'after the refusals the repository is there'
STOK=$(sql "select id from tokens where sandbox_id = '$ID'")
CID=$(docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$ID")")
sbtok() { SBTOK=$(box_token_of "$CID"); [[ -n $SBTOK ]]; }
check "the sandbox's token read from its clone" wait_until 60 sbtok
PUB=$(git_url "${SBTOK:-none}" "$L/b$SFX")
check_eq 'the sandbox token reads a public repository before the delete' 200 "$(refs_code "$PUB")"
api DELETE "/api/v3/repos/$DR" '' "$DT"
expect_status 204 'DELETE /repos/{o}/{r} as the owner: 204'
RID=$REQ_ID
api GET "/api/v3/repos/$DR" '' "$DT"
expect_error 404 'repository not found' 'then GET: 404'
check_eq 'its sandbox closed, with the reason' 'closed|repository deleted' \
	"$(sql "select state, end_reason from sandboxes where id = '$ID'")"
check_eq "and the sandbox's token revoked (or gone with the repository's rows)" 0 \
	"$(sql "select count(*) from tokens where id = ${STOK:-0} and revoked_at is null")"
check_eq 'it no longer reads even a public repository: 401' 401 "$(refs_code "$PUB")"
check_eq 'audited: repo.delete with the sandboxes closed' "repo.delete|204|$DR|[\"$ID\"]" \
	"$(sql "select action, status, repository, details->>'sandboxes_closed' from audit_log where request_id = '$RID'")"
check_eq 'collaborators gone with it' 0 \
	"$(sql "select count(*) from collaborators c join accounts a on a.id = c.account_id where a.login = '$AG'")"
check 'the bare repository is gone from its path' test ! -e "$REPOS_DIR/$DR.git"
check 'and the reaper removes its objects (the trash emptied)' \
	wait_until 30 bash -c '! ls "$1"/.trash/*.git >/dev/null 2>&1' _ "$REPOS_DIR"
check_eq 'git finds nothing there any more' 404 \
	"$(curl -s -o /dev/null -w '%{http_code}' "$(git_url "$DT" "$DR")/info/refs?service=git-upload-pack")"
check "the reaper removes the sandbox's container" \
	wait_until 60 bash -c '[[ -z $(docker ps -aq --filter "label=sandboxd.sandbox=$1") ]]' _ "$(owner_label_of "$ID")"
api GET "/api/v3/repos/$DR0" '' "$DT"
expect_error 404 'repository not found' 'its old name went with it (no 301 to nowhere)'
api POST /api/v3/user/repos "{\"name\":\"gone2$SFX\"}" "$DT"
expect_status 201 'the name may be used again'
check_eq 'by an empty repository' '' "$(git --git-dir "$REPOS_DIR/$DR.git" for-each-ref 2>/dev/null)"

# --- ephemeral refs expire ------------------------------------------------------------------
TTL=8
stack_restart "SANDBOXD_EPHEMERAL_TTL=$TTL" SANDBOXD_EPHEMERAL_TTL=$TTL
mk_repo "eph$SFX" "e$SFX"
ER=$R ET=$OT EW=$W EG="$REPOS_DIR/$R.git"
eref() { git --git-dir "$EG" rev-parse -q --verify "refs/namespaces/ephemeral/refs/heads/$1" 2>/dev/null; }
api POST "/api/v3/repos/$ER/git-urls" '{"scopes":["git:write"],"kind":"ephemeral"}' "$ET"
EURL=$(_json .url)
MAIN=$(git --git-dir "$EG" rev-parse refs/heads/main)
git -C "$EW" -c user.name=t -c user.email=t@t commit -q --allow-empty -m s1
check 'push two session branches to the ephemeral namespace' git -C "$EW" push -q "$EURL" HEAD:s1 HEAD:s2
T0=$(date +%s)
S1=$(eref s1)
# Packed: the loose files' times are gone, the audit log's push rows remain.
git --git-dir "$EG" pack-refs --all
# A ref with neither an audit row nor a fresh file: 40 days old on disk.
mkdir -p "$EG/refs/namespaces/ephemeral/refs/heads"
git --git-dir "$EG" rev-parse main >"$EG/refs/namespaces/ephemeral/refs/heads/stale"
touch -d '40 days ago' "$EG/refs/namespaces/ephemeral/refs/heads/stale" "$EG/packed-refs"
chown -R --reference="$EG/config" "$EG"
check 'the 40-day-old ref is deleted at the first sweep' wait_until 20 bash -c '! git --git-dir "$1" rev-parse -q --verify refs/namespaces/ephemeral/refs/heads/stale >/dev/null' _ "$EG"
if (($(date +%s) - T0 < TTL - 1)); then
	check_eq 'while the ones pushed seconds ago stay' "$S1" "$(eref s1)"
fi
sleep 3
git -C "$EW" -c user.name=t -c user.email=t@t commit -q --allow-empty -m s2
check 'update s2 a few seconds later' git -C "$EW" push -q "$EURL" HEAD:s2
T2=$(date +%s)
git --git-dir "$EG" pack-refs --all && chown -R --reference="$EG/config" "$EG"
check 's1, not updated for the TTL, is deleted by the reaper' wait_until 30 bash -c '! git --git-dir "$1" rev-parse -q --verify refs/namespaces/ephemeral/refs/heads/s1 >/dev/null' _ "$EG"
if (($(date +%s) - T2 < TTL - 1)); then
	check 'while s2, updated since, stays' test -n "$(eref s2)"
fi
check_eq 'main (normal, packed, old on disk) is never touched' "$MAIN" \
	"$(git --git-dir "$EG" rev-parse refs/heads/main)"
api GET "/api/v3/repos/$ER/branches?namespace=ephemeral" '' "$ET"
check_cond 'GET branches?namespace=ephemeral no longer lists s1' '[[ $(names) != *s1* ]]'
check_eq 'the expiry is audited: ref.expire by the reaper, with the ref and its value' \
	"200|reaper|$ER|$S1|$TTL" \
	"$(sql "select status, via, repository, details->>'old', details->>'ttl' from audit_log where action = 'ref.expire' and details->>'ref' = 'refs/namespaces/ephemeral/refs/heads/s1' and repository = '$ER'")"
check_eq 'so is the stale one' 1 \
	"$(sql "select count(*) from audit_log where action = 'ref.expire' and details->>'ref' = 'refs/namespaces/ephemeral/refs/heads/stale' and repository = '$ER'")"
check 's2 expires in its turn' wait_until 30 bash -c '! git --git-dir "$1" rev-parse -q --verify refs/namespaces/ephemeral/refs/heads/s2 >/dev/null' _ "$EG"
check 'the repository is still sound (git fsck)' bash -c 'git --git-dir "$1" fsck --no-dangling >/dev/null 2>&1' _ "$EG"
stack_restart 'the suite'\''s settings'

finish
