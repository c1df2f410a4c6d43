#!/usr/bin/env bash
# t_lfs_guard.sh: LFS objects under push protection (issue 32 A.4, decision 0088): a `.env`
# tracked with filter=lfs holding an AWS key is refused by name at its upload, with the
# stock git and git-lfs clients, and never stored; the same file without the key lands. A
# branch pushed without its objects merges through REST (only the pointer moves) while its
# object stays refused. The key is split across strings so that this file, pushed to a
# sandboxd, does not trip the scanner it tests.
. "$(dirname "$0")/lib.sh"

fails() { ! "$@"; }
O="lfg$SFX"
mk_repo "$O" guarded
HOSTPORT=${SANDBOXD_URL#http://}
URL="http://t:$OT@$HOSTPORT/$R.git"
G=(git -c user.name=t -c user.email=t@t -c lfs.locksverify=false)
export GIT_TERMINAL_PROMPT=0 GIT_LFS_SKIP_PUSH=0 HOME=$_T/home
mkdir -p "$HOME"
git lfs install --skip-repo >/dev/null
lfs_sha() { sha256sum "$1" | cut -d' ' -f1; }
object_file() { # OID: where the service keeps it
	printf '%s/%s/guarded.git/lfs/objects/%s/%s/%s' "$REPOS_DIR" "$O" "${1:0:2}" "${1:2:2}" "$1"
}
put() { # OID FILE [TOKEN]: a basic-transfer upload; STATUS and BODY
	STATUS=$(curl -s -o "$_T/put" -w '%{http_code}' -X PUT -H "Authorization: Bearer ${3:-$OT}" \
		-H 'Content-Type: application/octet-stream' --data-binary "@$2" \
		"$SANDBOXD_URL/$R.git/info/lfs/objects/$1")
	BODY=$(cat "$_T/put")
}
AKEY="AKIA""QZ7X2MLP4RT6VW3Y"

# --- a secret in an LFS object is refused by name, and not stored -------------------------
W2=$_T/w
git clone -q "$URL" "$W2"
(cd "$W2" && printf '*.env filter=lfs diff=lfs merge=lfs -text\n' >.gitattributes &&
	printf 'REGION=eu-west-1\nAWS_ACCESS_KEY_ID=%s\n' "$AKEY" >.env &&
	"${G[@]}" add .gitattributes .env && "${G[@]}" commit -qm 'an env file in LFS')
SECRET_OID=$(lfs_sha "$W2/.env")
check 'the commit holds a pointer to the .env, not its bytes' grep -q "oid sha256:$SECRET_OID" <<<"$(git -C "$W2" cat-file -p HEAD:.env)"
OUT=$(git -C "$W2" push origin main 2>&1)
RC=$?
check_cond 'git push of an LFS-tracked .env holding an AWS key fails' '((RC != 0))'
check 'naming the rule and the object' grep -qF "push refused: AWS access key id found in LFS object ${SECRET_OID:0:12} (line 2)" <<<"$OUT"
check 'the object is not stored' test ! -e "$(object_file "$SECRET_OID")"
check_eq 'nor left half-written' '' "$(find "$REPOS_DIR/$O/guarded.git/lfs/tmp" -type f 2>/dev/null)"
check_eq 'the refusal is audited, with the rule' "403|AWS access key id" \
	"$(sql "select status || '|' || (details->>'rule') from audit_log where repository = '$R' and action = 'lfs.upload' and details->>'oid' = '$SECRET_OID' order by id desc limit 1")"
put "$SECRET_OID" "$W2/.env"
expect_error 403 "push refused: AWS access key id found in LFS object ${SECRET_OID:0:12} (line 2); remove it from the history and push again" 'a direct PUT of it: 403, the same words'
# A key split over the scanner's windows (64 KiB): 70000 bytes of text before it.
(cd "$W2" && { head -c 65530 /dev/zero | tr '\0' 'x'; printf '\n%s\n' "$AKEY"; } >big.env)
BIG_OID=$(lfs_sha "$W2/big.env")
put "$BIG_OID" "$W2/big.env"
expect_error 403 "push refused: AWS access key id found in LFS object ${BIG_OID:0:12} (line 2); remove it from the history and push again" 'a key across the first window boundary: found'
check 'and not stored' test ! -e "$(object_file "$BIG_OID")"
# UTF-16 text (as Windows tools write it): scanned as text too.
printf 'AWS_ACCESS_KEY_ID=%s\n' "$AKEY" | iconv -f UTF-8 -t UTF-16 >"$_T/u16.env"
U16_OID=$(lfs_sha "$_T/u16.env")
put "$U16_OID" "$_T/u16.env"
check_eq 'a key in UTF-16 text: 403 naming it' "403|AWS access key id" "$STATUS|$(_json .message | sed -n 's/^push refused: \(.*\) found in LFS.*/\1/p')"

# --- the same file without the key lands ----------------------------------------------------
(cd "$W2" && "${G[@]}" reset -q --hard HEAD~1 && printf '*.env filter=lfs diff=lfs merge=lfs -text\n' >.gitattributes &&
	printf 'REGION=eu-west-1\nAWS_ACCESS_KEY_ID=from-the-vault\n' >.env &&
	"${G[@]}" add .gitattributes .env && "${G[@]}" commit -qm 'an env file in LFS, no key')
CLEAN_OID=$(lfs_sha "$W2/.env")
check 'git push of a clean LFS-tracked .env works' git -C "$W2" push -q origin main
check 'its object is stored' test -f "$(object_file "$CLEAN_OID")"
check_eq 'whole' "$CLEAN_OID" "$(lfs_sha "$(object_file "$CLEAN_OID")")"
check_eq 'audited as an upload: 200' 200 \
	"$(sql "select status from audit_log where repository = '$R' and action = 'lfs.upload' and details->>'oid' = '$CLEAN_OID' order by id desc limit 1")"
put "$BIG_OID" <(head -c 70000 /dev/zero | tr '\0' 'x') 2>/dev/null
check_eq 'a big clean object whose bytes are not its oid: still 422, not a secret' 422 "$STATUS"

# --- a REST merge moves pointers; the object stays refused ------------------------------------
(cd "$W2" && "${G[@]}" checkout -q -b withkey && printf 'AWS_ACCESS_KEY_ID=%s\n' "$AKEY" >.env &&
	"${G[@]}" add .env && "${G[@]}" commit -qm 'the key again')
KEY_OID=$(lfs_sha "$W2/.env")
check 'a branch with the pointer pushed without its object (GIT_LFS_SKIP_PUSH)' \
	env GIT_LFS_SKIP_PUSH=1 git -C "$W2" push -q origin withkey
api POST "/api/v3/repos/$R/merges" '{"base":"main","head":"withkey"}' "$OT"
expect_status 201 'merges through REST (the pointer holds no secret)'
check 'while the object was never stored' test ! -e "$(object_file "$KEY_OID")"
OUT=$(git -C "$W2" lfs push --object-id origin "$KEY_OID" 2>&1)
check 'and its upload is still refused by name' grep -qF "push refused: AWS access key id found in LFS object ${KEY_OID:0:12}" <<<"$OUT"
check 'still not stored' test ! -e "$(object_file "$KEY_OID")"

finish
