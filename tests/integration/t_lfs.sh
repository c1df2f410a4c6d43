#!/usr/bin/env bash
# t_lfs.sh: Git LFS (SPEC.md §4 "Git LFS") with the stock `git lfs` client: a push stores
# the object by oid in the repository's folder, a clone smudges it back byte for byte; the
# batch API's answers (actions with their hrefs, a missing object's 404, nothing to do for
# an object already there); a read-scoped token refused on upload and allowed to download;
# an archived repository read-only; an object whose bytes are not its oid refused and not
# stored; from inside a sandbox, the clone smudges and a push of a new object lands.
. "$(dirname "$0")/lib.sh"

fails() { ! "$@"; }
O="lfs$SFX"
lfs_repo media

# --- a push stores the object; a clone smudges it ------------------------------------------------
W2=$_T/w
git clone -q "$URL" "$W2"
(cd "$W2" && git lfs track '*.bin' >/dev/null && head -c 3145728 /dev/urandom >big.bin &&
	"${G[@]}" add .gitattributes big.bin && "${G[@]}" commit -qm 'an LFS object')
OID=$(lfs_sha "$W2/big.bin")
check 'git push with an LFS object' git -C "$W2" push -q origin main
check "the object is stored by its oid in the repository's folder" test -f "$(object_file "$OID")"
check_eq 'whole and exact' "$OID" "$(lfs_sha "$(object_file "$OID")")"
check 'the commit holds a pointer, not the bytes' grep -q "oid sha256:$OID" <<<"$(git -C "$W2" cat-file -p HEAD:big.bin)"
C=$_T/clone
check 'a clone' git clone -q "$URL" "$C"
check_eq 'smudges the object back byte for byte' "$OID" "$(lfs_sha "$C/big.bin")"
check_eq 'the pushes were audited as LFS uploads' "lfs.upload|$OID|3145728|200" \
	"$(sql "select action || '|' || (details->>'oid') || '|' || (details->>'size') || '|' || status from audit_log where repository = '$R' and action = 'lfs.upload' order by id desc limit 1")"

# --- the batch API ---------------------------------------------------------------------------------
batch() { # OP OID SIZE [TOKEN]
	api POST "/$R.git/info/lfs/objects/batch" "{\"operation\":\"$1\",\"transfers\":[\"basic\"],\"objects\":[{\"oid\":\"$2\",\"size\":$3}]}" "${4:-$OT}"
}
batch download "$OID" 3145728
expect_status 200 'batch download: 200'
expect_header_match Content-Type '^application/vnd\.git-lfs\+json' 'as application/vnd.git-lfs+json'
check_eq 'a download action to the object on this host, basic transfer' "http://$HOSTPORT/$R.git/info/lfs/objects/$OID|basic" \
	"$(_json '.objects[0].actions.download.href')|$(_json .transfer)"
check_eq 'carrying the credential the client sent' "Bearer $OT" "$(_json '.objects[0].actions.download.header.Authorization')"
MISSING=$(printf 'never stored %s' "$SFX" | sha256sum | cut -d' ' -f1)
batch download "$MISSING" 5
check_eq "a missing object: its own 404 in the answer" '404|Object does not exist' "$(_json '.objects[0].error.code')|$(_json '.objects[0].error.message')"
batch upload "$OID" 3145728
check_eq 'an upload of an object already there: nothing to do' 'null|true' "$(_json '.objects[0].actions')|$(_json '.objects[0].authenticated')"
api POST "/$R.git/info/lfs/objects/batch" '{"operation":"delete","objects":[]}' "$OT"
expect_error 422 'field '"'"'operation'"'"' must be "download" or "upload"' 'a bad operation: 422'
api POST "/$R.git/info/lfs/objects/batch" '{"operation":"download","objects":[{"oid":"ABC","size":1}]}' "$OT"
expect_error 422 "objects[0]: 'oid' must be 64 lower-case hex digits" 'a bad oid: 422'
api POST "/$R.git/info/lfs/objects/batch" '{"operation":"download","transfers":["ssh"],"objects":[{"oid":"'"$OID"'","size":1}]}' "$OT"
expect_error 422 "field 'transfers' must offer \"basic\"" 'no basic transfer: 422'

# --- who may ---------------------------------------------------------------------------------------
RD=$(mk_token "$O" read)
batch download "$OID" 3145728 "$RD"
check_eq 'a read-scoped token downloads' '200|true' "$STATUS|$(_json '.objects[0].actions.download.href != null')"
batch upload "$MISSING" 5 "$RD"
expect_error 403 'this needs a token with write scope' 'but may not upload'
OTHER="lfso$SFX"
mk_user "$OTHER" || exit 1
batch download "$OID" 3145728 "$LAST_TOKEN"
expect_error 404 'repository not found' "another user: the repository is not there for them"
api GET "/$R.git/info/lfs/objects/$OID" '' -
check_eq 'no credential: 401 with the challenge' 401 "$STATUS"
W3=$_T/w3
git clone -q "http://t:$RD@$HOSTPORT/$R.git" "$W3"
(cd "$W3" && head -c 1000 /dev/urandom >small.bin && "${G[@]}" add small.bin && "${G[@]}" commit -qm small) >/dev/null
check 'git lfs push with a read token fails' fails git -C "$W3" lfs push origin main
check 'naming the scope' grep -q 'this needs a token with write scope' <<<"$(git -C "$W3" lfs push origin main 2>&1)"

# --- an object whose bytes are not its oid -----------------------------------------------------------
BAD=$(printf 'something else' | sha256sum | cut -d' ' -f1)
curl -s -o "$_T/put" -w '%{http_code}' -X PUT -H "Authorization: Bearer $OT" \
	-H 'Content-Type: application/octet-stream' --data-binary 'not what the oid says' \
	"$SANDBOXD_URL/$R.git/info/lfs/objects/$BAD" >"$_T/code"
check_eq 'a PUT whose bytes are not its oid: 422' 422 "$(cat "$_T/code")"
check 'saying so' grep -q "the object's content does not match its oid" "$_T/put"
check 'and nothing is stored under that oid' test ! -e "$(object_file "$BAD")"
check_eq 'nor left half-written' '' "$(find "$REPOS_DIR/$O/media.git/lfs/tmp" -type f 2>/dev/null)"
GOOD=$(printf 'something else' | sha256sum | cut -d' ' -f1)
curl -s -o /dev/null -w '%{http_code}' -X PUT -H "Authorization: Bearer $OT" --data-binary 'something else' \
	"$SANDBOXD_URL/$R.git/info/lfs/objects/$GOOD" >"$_T/code"
check_eq 'while the right bytes are taken: 200' 200 "$(cat "$_T/code")"
check_eq 'and served back' 'something else' "$(curl -s -H "Authorization: Bearer $OT" "$SANDBOXD_URL/$R.git/info/lfs/objects/$GOOD")"

# --- archived: read-only ----------------------------------------------------------------------------
api PATCH "/api/v3/repos/$R" '{"archived":true}' "$OT"
expect_status 200 'the repository archived'
batch upload "$MISSING" 5
expect_error 403 'repository is archived (read-only)' 'an upload to an archived repository: 403'
batch download "$OID" 3145728
expect_status 200 'downloads still work'
C2=$_T/clone2
check 'and so does a clone' git clone -q "$URL" "$C2"
check_eq 'with the object' "$OID" "$(lfs_sha "$C2/big.bin")"
api PATCH "/api/v3/repos/$R" '{"archived":false}' "$OT"

# --- from a sandbox ---------------------------------------------------------------------------------
api POST "$SB" '{}' "$OT"
expect_status 201 'a sandbox on the repository'
ID=$(_json .id)
AT_EXIT+=("api POST '$SB/$ID/close' '' '$OT' >/dev/null 2>&1")
run() { api POST "$SB/$ID/exec" "$(jq -nc --arg c "$1" '{cmd: $c, timeoutMs: 120000}')" "$OT"; }
run 'sha256sum big.bin | cut -d" " -f1'
check_eq "inside: the sandbox's clone smudged the object through its credential" "$OID" "$(_json .stdout)"
run 'head -c 200000 /dev/urandom >inside.bin && git add inside.bin && git commit -qm inside && git push -q origin HEAD:main 2>&1; echo "rc=$?"; sha256sum inside.bin | cut -d" " -f1'
INSIDE=$(_json .stdout | grep -E '^[0-9a-f]{64}$')
check_eq 'and pushes a new one' 'rc=0' "$(_json .stdout | grep '^rc=')"
check 'its oid read back' grep -qE '^[0-9a-f]{64}$' <<<"$INSIDE"
check 'which the service stores' test -f "$(object_file "$INSIDE")"
check_eq 'whole' "$INSIDE" "$(lfs_sha "$(object_file "$INSIDE")")"
check_eq "audited as the sandbox's creator, by its sandbox token" "$O|sandbox" "$(sql "select a.login || '|' || t.kind from audit_log l join accounts a on a.id = l.account_id join tokens t on t.id = l.token_id where l.action = 'lfs.upload' and l.details->>'oid' = '$INSIDE' and l.status = 200")"
finish
