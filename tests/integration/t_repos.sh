#!/usr/bin/env bash
# t_repos.sh: POST /api/v3/user/repos, GET and PATCH /api/v3/repos/{owner}/{repo}:
# shapes, the bare repository on disk, duplicates, name validation, archiving.
. "$(dirname "$0")/lib.sh"

REPO_KEYS='owner,name,full_name,visibility,default_branch,archived,clone_url,created_at,sandbox_image'

git_head() { git --git-dir "$1" symbolic-ref HEAD 2>/dev/null; }

O="repo$SFX"
mk_user "$O" || exit 1
OT=$LAST_TOKEN
OTHER="repoother$SFX"
mk_user "$OTHER" || exit 1
XT=$LAST_TOKEN

# --- create with defaults ----------------------------------------------------
N="web$SFX"
api POST /api/v3/user/repos "{\"name\":\"$N\"}" "$OT"
expect_status 201 'POST /user/repos {name}: 201'
expect_keys . "$REPO_KEYS" 'repository shape {owner, name, full_name, visibility, default_branch, archived, clone_url, created_at, sandbox_image}'
expect_json .owner "$O" 'owner is the caller'
expect_json .name "$N" 'name as given'
expect_json .full_name "$O/$N" 'full_name is owner/name'
expect_json_match .visibility '^(public|private)$' 'visibility is public or private'
expect_json .archived false 'a new repository is not archived'
expect_json_match .default_branch '^[A-Za-z0-9._/-]+$' 'default_branch is set'
expect_json_match .clone_url "^https?://.*/$O/$N\\.git\$" 'clone_url ends in /owner/name.git'
expect_json .clone_url "$SANDBOXD_URL/$O/$N.git" 'clone_url is the public URL + /owner/name.git'
expect_json_match .created_at "$RFC3339_UTC" 'created_at is RFC 3339 UTC'
DEF=$(_json .default_branch)
CREATED=$(_json .created_at)
GITDIR="$REPOS_DIR/$O/$N.git"
check "bare repository created at \$REPOS_DIR/$O/$N.git" test -d "$GITDIR"
check 'it is a bare repository' [ "$(git --git-dir "$GITDIR" rev-parse --is-bare-repository 2>/dev/null)" = true ]
check_eq 'HEAD points at the default branch' "refs/heads/$DEF" "$(git_head "$GITDIR")"

# --- create with every field -------------------------------------------------
P="pub$SFX"
api POST /api/v3/user/repos "{\"name\":\"$P\",\"visibility\":\"public\",\"default_branch\":\"trunk\",\"ignored\":{\"x\":1}}" "$OT"
expect_status 201 'POST /user/repos {name, visibility: public, default_branch: trunk}: 201'
expect_json .visibility public 'visibility public as asked'
expect_json .default_branch trunk 'default_branch trunk as asked'
check_eq 'HEAD of the new repository is refs/heads/trunk' refs/heads/trunk "$(git_head "$REPOS_DIR/$O/$P.git")"

V="priv$SFX"
api POST /api/v3/user/repos "{\"name\":\"$V\",\"visibility\":\"private\"}" "$OT"
expect_status 201 'POST /user/repos {visibility: private}: 201'
expect_json .visibility private 'visibility private as asked'

api POST /api/v3/user/repos "{\"name\":\"Mixed.Case_name-$SFX\"}" "$OT"
expect_status 201 'letters, digits, dot, underscore and hyphen are valid in a name'

# --- duplicate: 409, nothing changed ----------------------------------------------
echo "marker $SFX" >"$REPOS_DIR/$O/$P.git/description.it-marker" 2>/dev/null
api POST /api/v3/user/repos "{\"name\":\"$P\",\"visibility\":\"private\",\"default_branch\":\"other\"}" "$OT"
expect_error 409 "repository $O/$P already exists" 'duplicate name: 409 repository … already exists'
api GET "/api/v3/repos/$O/$P" "" "$OT"
expect_json .visibility public 'after the 409 the visibility is unchanged'
expect_json .default_branch trunk 'after the 409 the default branch is unchanged'
check_eq 'after the 409 HEAD on disk is unchanged' refs/heads/trunk "$(git_head "$REPOS_DIR/$O/$P.git")"
check 'after the 409 the repository directory was not replaced' test -f "$REPOS_DIR/$O/$P.git/description.it-marker"

# names are unique without regard to case
api POST /api/v3/user/repos "{\"name\":\"${P^^}\"}" "$OT"
expect_error 409 "repository $O/${P^^} already exists" 'the same name in other case: 409'
check 'the 409 in other case made no directory' test ! -e "$REPOS_DIR/$O/${P^^}.git"

# a directory already on disk with no repository behind it (a crash, a hand-made copy)
# is not adopted: the create fails and leaves the directory as it was
mkdir -p "$REPOS_DIR/$O/stray$SFX.git"
echo "not a repository" >"$REPOS_DIR/$O/stray$SFX.git/marker"
api POST /api/v3/user/repos "{\"name\":\"stray$SFX\"}" "$OT"
check_cond 'a stray directory at the path: the create is refused (409/500/503)' '[[ $STATUS == 409 || $STATUS == 5?? ]]'
check_eq 'the stray directory is left as it was' 'marker' "$(ls "$REPOS_DIR/$O/stray$SFX.git" 2>&1 | tr '\n' ' ' | sed 's/ $//')"
api GET "/api/v3/repos/$O/stray$SFX" "" "$OT"
expect_error 404 'repository not found' 'no repository row remains after the refused create'

# racing creates of one name: exactly one wins, the others get 409
RACE="race$SFX"
for i in 1 2 3 4 5 6; do
	curl -sS -o /dev/null -w '%{http_code}\n' --max-time 30 -H "Authorization: Bearer $OT" \
		-H 'Content-Type: application/json' --data-binary "{\"name\":\"$RACE\"}" \
		"$SANDBOXD_URL/api/v3/user/repos" >"$_T/race.$i" 2>/dev/null &
done
wait
codes=$(cat "$_T"/race.* | sort | tr '\n' ' ')
LAST_REQ="6 parallel POST /api/v3/user/repos {\"name\":\"$RACE\"}"
BODY="statuses: $codes"
check_eq '6 racing creates of one name: one 201, five 409' '201 409 409 409 409 409 ' "$codes"
check_eq 'the race left one repository row' 1 "$(sql "select count(*) from repositories where lower(name) = lower('$RACE')")"
check_eq 'the race left a valid bare repository' true "$(git --git-dir "$REPOS_DIR/$O/$RACE.git" rev-parse --is-bare-repository 2>/dev/null)"

# the same name under another owner is a different repository
api POST /api/v3/user/repos "{\"name\":\"$P\"}" "$XT"
expect_status 201 'the same name under another owner: 201'
expect_json .full_name "$OTHER/$P" 'it belongs to the other owner'

# --- validation ---------------------------------------------------------------
bad_name() { # JSON-encoded name, label
	api POST /api/v3/user/repos "{\"name\":$1}" "$OT"
	expect_names_field 400 name "name $2: 400 naming 'name'"
}
bad_name '".."' '..'
bad_name '"a..b"' 'a..b'
bad_name '"a/b"' 'a/b'
bad_name '"../escape"' '../escape'
bad_name '"/abs"' '/abs'
bad_name '"a\\b"' 'a\b'
bad_name '""' '(empty)'
bad_name '"has space"' 'has space'
bad_name '"semi;colon"' 'semi;colon'
bad_name '"dollar$x"' 'dollar$x'
bad_name '"new\nline"' 'with a newline'
bad_name '"nul\u0000byte"' 'with a NUL byte'
bad_name '"ünïcode"' 'with non-ASCII letters'
bad_name '"."' '.'
bad_name "\"$(printf 'a%.0s' {1..300})\"" '300 characters long'
check 'no directory was made for any refused name' test ! -e "$REPOS_DIR/escape.git"
check 'no directory a/b.git' test ! -e "$REPOS_DIR/$O/a/b.git"

api POST /api/v3/user/repos '{}' "$OT"
expect_error 400 "field 'name' is required" 'missing name: 400'
api POST /api/v3/user/repos '{"name":123}' "$OT"
expect_error 400 "field 'name' must be a string" 'name of the wrong type: 400'
api POST /api/v3/user/repos '{"name":null}' "$OT"
expect_names_field 400 name 'name null: 400 naming name'
api POST /api/v3/user/repos "{\"name\":\"vis$SFX\",\"visibility\":\"secret\"}" "$OT"
expect_error 400 "field 'visibility' must be 'public' or 'private'" "visibility secret: 400"
api POST /api/v3/user/repos "{\"name\":\"vis$SFX\",\"visibility\":true}" "$OT"
expect_error 400 "field 'visibility' must be a string" 'visibility of the wrong type: 400'
api POST /api/v3/user/repos "{\"name\":\"br$SFX\",\"default_branch\":\"a..b\"}" "$OT"
expect_names_field 400 default_branch 'default_branch a..b: 400 naming default_branch'
api POST /api/v3/user/repos "{\"name\":\"br$SFX\",\"default_branch\":\"has space\"}" "$OT"
expect_names_field 400 default_branch 'default_branch with a space: 400 naming default_branch'
api POST /api/v3/user/repos "{\"name\":\"br$SFX\",\"default_branch\":\"\"}" "$OT"
expect_names_field 400 default_branch 'empty default_branch: 400 naming default_branch'
api POST /api/v3/user/repos "{\"name\":\"br$SFX\",\"default_branch\":5}" "$OT"
expect_error 400 "field 'default_branch' must be a string" 'default_branch of the wrong type: 400'
check 'refused creates left nothing on disk' test ! -e "$REPOS_DIR/$O/vis$SFX.git" -a ! -e "$REPOS_DIR/$O/br$SFX.git"
api GET "/api/v3/repos/$O/br$SFX" "" "$OT"
expect_error 404 'repository not found' 'refused creates left no repository row'

# --- GET -------------------------------------------------------------------------
api GET "/api/v3/repos/$O/$N" "" "$OT"
expect_status 200 'GET /repos/{owner}/{repo} by the owner: 200'
expect_keys . "$REPO_KEYS" 'GET returns the repository shape'
expect_json .created_at "$CREATED" 'GET returns the same created_at'

api GET "/api/v3/repos/$O/$V" "" "$XT"
expect_error 404 'repository not found' "someone else's private repository: 404"
api GET "/api/v3/repos/$O/nosuch$SFX" "" "$OT"
expect_error 404 'repository not found' 'a repository that does not exist: 404'
api GET "/api/v3/repos/nosuchowner$SFX/$N" "" "$OT"
expect_error 404 'repository not found' 'an owner that does not exist: 404'
api GET "/api/v3/repos/$O/$P" "" "$XT"
expect_status 200 "someone else's public repository: 200"
api GET "/api/v3/repos/$O/$P" "" -
expect_status 200 'a public repository without a token: 200'
expect_json .full_name "$O/$P" 'anonymous read returns the repository'
api GET "/api/v3/repos/$O/$V" "" -
expect_error 404 'repository not found' 'a private repository without a token: 404, as one that does not exist'
api GET "/api/v3/repos/$O/$V" ""
expect_status 200 "a site admin reads any private repository"

# --- PATCH -----------------------------------------------------------------------
api PATCH "/api/v3/repos/$O/$N" '{"default_branch":"develop"}' "$OT"
expect_status 200 'PATCH {default_branch} by the owner: 200'
expect_keys . "$REPO_KEYS" 'PATCH returns the repository shape'
expect_json .default_branch develop 'default_branch changed'
check_eq 'HEAD on disk follows the new default branch' refs/heads/develop "$(git_head "$GITDIR")"
api GET "/api/v3/repos/$O/$N" "" "$OT"
expect_json .default_branch develop 'GET shows the new default branch'

api PATCH "/api/v3/repos/$O/$N" '{"visibility":"public"}' "$OT"
expect_status 200 'PATCH {visibility: public}: 200'
expect_json .visibility public 'visibility changed to public'
api GET "/api/v3/repos/$O/$N" "" "$XT"
expect_status 200 'now public: another account reads it at once'
api PATCH "/api/v3/repos/$O/$N" '{"visibility":"private"}' "$OT"
expect_json .visibility private 'visibility changed back to private'
api GET "/api/v3/repos/$O/$N" "" "$XT"
expect_error 404 'repository not found' 'private again: the other account gets 404 at once'

api PATCH "/api/v3/repos/$O/$N" '{}' "$OT"
expect_status 200 'PATCH {} changes nothing: 200'
expect_json .default_branch develop 'PATCH {} kept the default branch'

api PATCH "/api/v3/repos/$O/$N" '{"archived":"yes"}' "$OT"
expect_error 400 "field 'archived' must be a boolean" 'archived of the wrong type: 400'
api PATCH "/api/v3/repos/$O/$N" '{"visibility":"internal"}' "$OT"
expect_error 400 "field 'visibility' must be 'public' or 'private'" 'PATCH visibility internal: 400'
api PATCH "/api/v3/repos/$O/$N" '{"default_branch":"bad..name"}' "$OT"
expect_names_field 400 default_branch 'PATCH default_branch bad..name: 400 naming default_branch'
api PATCH "/api/v3/repos/$O/$N" '{"default_branch":7}' "$OT"
expect_error 400 "field 'default_branch' must be a string" 'PATCH default_branch of the wrong type: 400'
api GET "/api/v3/repos/$O/$N" "" "$OT"
expect_json .default_branch develop 'refused PATCHes changed nothing'

api PATCH "/api/v3/repos/$O/$P" '{"visibility":"private"}' "$XT"
expect_error 403 "this needs the admin role on $O/$P" 'PATCH of a public repository without a role: 403 needs admin'
api PATCH "/api/v3/repos/$O/$V" '{"visibility":"public"}' "$XT"
expect_error 404 'repository not found' 'PATCH of an unreadable private repository: 404'
api PATCH "/api/v3/repos/$O/nosuch$SFX" '{"archived":true}' "$OT"
expect_error 404 'repository not found' 'PATCH of a repository that does not exist: 404'
api PATCH "/api/v3/repos/$O/$V" '{"default_branch":"admin-set"}'
expect_status 200 'a site admin PATCHes any repository'

# --- archived: read-only for everyone, PATCH {archived:false} un-archives ----------
A="arch$SFX"
api POST /api/v3/user/repos "{\"name\":\"$A\"}" "$OT"
expect_status 201 'create a repository to archive'
api PATCH "/api/v3/repos/$O/$A" '{"archived":true}' "$OT"
expect_status 200 'PATCH {archived: true}: 200'
expect_json .archived true 'archived is true'
api GET "/api/v3/repos/$O/$A" "" "$OT"
expect_status 200 'an archived repository can still be read'
expect_json .archived true 'GET shows archived true'
ARCH='repository is archived (read-only)'
api PATCH "/api/v3/repos/$O/$A" '{"default_branch":"x"}' "$OT"
expect_error 403 "$ARCH" 'archived: PATCH default_branch 403'
api PATCH "/api/v3/repos/$O/$A" '{"visibility":"public"}' "$OT"
expect_error 403 "$ARCH" 'archived: PATCH visibility 403'
api PATCH "/api/v3/repos/$O/$A" '{"visibility":"public"}'
expect_error 403 "$ARCH" 'archived: refused for a site admin too'
api PUT "/api/v3/repos/$O/$A/collaborators/$OTHER" '{"role":"read"}' "$OT"
expect_error 403 "$ARCH" 'archived: PUT collaborator 403'
api DELETE "/api/v3/repos/$O/$A/collaborators/$OTHER" "" "$OT"
expect_error 403 "$ARCH" 'archived: DELETE collaborator 403'
api PATCH "/api/v3/repos/$O/$A" '{"archived":true}' "$OT"
check_cond 'archived: PATCH {archived: true} again: 200 or 403 archived' \
	'[[ $STATUS == 200 || ( $STATUS == 403 && $(_json .message) == "$ARCH" ) ]]'
api GET "/api/v3/repos/$O/$A" "" "$OT"
expect_json .visibility private 'archived: refused PATCHes changed nothing'
api PATCH "/api/v3/repos/$O/$A" '{"archived":false}' "$OT"
expect_status 200 'PATCH {archived: false}: 200'
expect_json .archived false 'un-archived'
api PUT "/api/v3/repos/$O/$A/collaborators/$OTHER" '{"role":"read"}' "$OT"
expect_status 204 'un-archived: writes work again'
api PATCH "/api/v3/repos/$O/$A" '{"archived":true,"visibility":"public"}' "$OT"
check_cond 'PATCH {archived: true, visibility} archives (and does not half-apply)' \
	'[[ $STATUS == 200 && $(_json .archived) == true && $(_json .visibility) == public ]] || [[ $STATUS == 403 ]]'
api PATCH "/api/v3/repos/$O/$A" '{"archived":false}' "$OT"
expect_status 200 'PATCH {archived: false} again: 200'
expect_json .archived false 'un-archived again'

finish
