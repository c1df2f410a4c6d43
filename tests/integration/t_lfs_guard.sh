#!/usr/bin/env bash
# t_lfs_guard.sh: LFS objects under push protection (issue 32 A.4, decision 0088): a `.env`
# tracked with filter=lfs holding an AWS key is refused by name at its upload, with the
# stock git and git-lfs clients, and never stored; the same file without the key lands. A
# branch pushed without its objects merges through REST (only the pointer moves) while its
# object stays refused. Quotas (decision 0089), per repository and per account (its
# owner's), at the batch and at the upload: 507 naming the one, an upload under them
# taken. The reaper collects an object no ref points at past the grace, keeps one that a
# ref of either namespace points at. A git URL whose ref policies allow no push uploads
# nothing (403 by name); one that allows some does. The key is split across strings so
# that this file, pushed to a sandboxd, does not trip the scanner it tests.
. "$(dirname "$0")/lib.sh"

fails() { ! "$@"; }
O="lfg$SFX"
lfs_repo guarded
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

# --- quotas: per repository and per account ---------------------------------------------------
stack_restart 'tiny LFS quotas (1 MiB a repository, 2 MiB an account), a minute of grace' \
	SANDBOXD_LFS_REPO_QUOTA_MB=1 SANDBOXD_LFS_ACCOUNT_QUOTA_MB=2 SANDBOXD_LFS_GRACE=60
GUARDED=$R GT=$OT
mk_repo "lfq$SFX" q1
Q1=$R QT=$OT QW=$W
for n in q2 q3; do
	api POST /api/v3/user/repos "{\"name\":\"$n\",\"visibility\":\"private\"}" "$QT"
	expect_status 201 "a second and a third repository of the same owner ($n)"
done
head -c 900000 /dev/urandom >"$_T/a.bin"
head -c 900000 /dev/urandom >"$_T/b.bin"
head -c 100000 /dev/urandom >"$_T/c.bin"
head -c 300000 /dev/urandom >"$_T/d.bin"
A=$(lfs_sha "$_T/a.bin") B=$(lfs_sha "$_T/b.bin") C=$(lfs_sha "$_T/c.bin") D=$(lfs_sha "$_T/d.bin")
qbatch() { # REPO OID SIZE
	api POST "/$1.git/info/lfs/objects/batch" "{\"operation\":\"upload\",\"objects\":[{\"oid\":\"$2\",\"size\":$3}]}" "$QT"
}
qfile() { printf '%s/%s.git/lfs/objects/%s/%s/%s' "$REPOS_DIR" "$1" "${2:0:2}" "${2:2:2}" "$2"; }
qbatch "$Q1" "$A" 900000
check_eq 'the batch offers an upload within the quota' '200|true' "$STATUS|$(_json '.objects[0].actions.upload.href != null')"
R=$Q1 put "$A" "$_T/a.bin" "$QT"
check_eq 'which is taken (0.86 MiB of 1)' 200 "$STATUS"
check_eq 'and recorded with its size' "900000|$Q1" \
	"$(sql "select o.size || '|' || a.login || '/' || r.name from lfs_objects o join repositories r on r.id = o.repository_id join accounts a on a.id = r.owner_id where o.oid = '$A'")"
qbatch "$Q1" "$B" 900000
check_eq 'past the repository quota the batch refuses the upload action: 507, named' \
	'507|LFS quota exceeded for this repository: 1 MiB|null' \
	"$(_json '.objects[0].error.code')|$(_json '.objects[0].error.message')|$(_json '.objects[0].actions')"
expect_header_match Content-Type '^application/vnd\.git-lfs\+json' 'in the batch API'"'"'s JSON'
R=$Q1 put "$B" "$_T/b.bin" "$QT"
expect_error 507 'LFS quota exceeded for this repository: 1 MiB' 'a PUT past it: 507, named'
check 'not stored' test ! -e "$(qfile "$Q1" "$B")"
R=$Q1 put "$C" "$_T/c.bin" "$QT"
check_eq 'while an upload under it is taken (0.95 MiB of 1)' 200 "$STATUS"
R=$Q1 put "$A" "$_T/a.bin" "$QT"
check_eq 'and another upload of a stored object adds nothing: taken' 200 "$STATUS"
R=${Q1%/*}/q2 put "$B" "$_T/b.bin" "$QT"
check_eq 'another repository of the owner takes it (1.81 MiB of the account'"'"'s 2)' 200 "$STATUS"
Q3=${Q1%/*}/q3
qbatch "$Q3" "$D" 300000
check_eq 'past the account quota: 507, named, at the batch' '507|LFS quota exceeded for this account: 2 MiB' \
	"$(_json '.objects[0].error.code')|$(_json '.objects[0].error.message')"
R=$Q3 put "$D" "$_T/d.bin" "$QT"
expect_error 507 'LFS quota exceeded for this account: 2 MiB' 'and at the upload'
check 'not stored' test ! -e "$(qfile "$Q3" "$D")"
check_eq 'the refusal is audited' '507|LFS quota exceeded for this account: 2 MiB' \
	"$(sql "select status || '|' || (details->>'quota') from audit_log where action = 'lfs.upload' and details->>'oid' = '$D' order by id desc limit 1")"
(cd "$QW" && git lfs track '*.bin' >/dev/null && head -c 200000 /dev/urandom >e.bin &&
	"${G[@]}" add .gitattributes e.bin && "${G[@]}" commit -qm 'one more object')
OUT=$(git -C "$QW" push "http://t:$QT@$HOSTPORT/$Q1.git" main 2>&1)
RC=$?
check_cond 'git push past the repository quota fails' '((RC != 0))'
check 'and git-lfs shows the refusal' grep -qF 'LFS quota exceeded for this repository: 1 MiB' <<<"$OUT"

# --- the reaper collects what no ref points at ------------------------------------------------
# The clean .env (main of the guarded repository) and an object only an ephemeral branch
# points at are referenced; a and c of q1 are not (uploaded by PUT alone).
R=$GUARDED OT=$GT
(cd "$W2" && "${G[@]}" checkout -q -b session && printf 'SESSION=1\n' >s.env && "${G[@]}" add s.env &&
	"${G[@]}" commit -qm 'an env file of a session')
EPH_OID=$(lfs_sha "$W2/s.env")
put "$EPH_OID" "$W2/s.env"
check_eq 'an object for an ephemeral branch is uploaded' 200 "$STATUS"
api POST "/api/v3/repos/$GUARDED/git-urls" '{"scopes":["git:write"],"kind":"ephemeral"}' "$OT"
EURL=$(_json .url)
check 'its pointer pushed to the ephemeral namespace' env GIT_LFS_SKIP_PUSH=1 git -C "$W2" push -q "$EURL" HEAD:session
check 'the pointer is only there' git --git-dir "$REPOS_DIR/$GUARDED.git" rev-parse -q --verify refs/namespaces/ephemeral/refs/heads/session
sql "update lfs_objects set uploaded_at = now() - interval '2 minutes' where oid in ('$A', '$C', '$CLEAN_OID', '$EPH_OID')" >/dev/null
gone() { [ -z "$(sql "select 1 from lfs_objects where oid = '$1'")" ] && test ! -e "$2"; }
check 'past the grace, an object no ref points at is collected (row and file)' wait_until 60 gone "$A" "$(qfile "$Q1" "$A")"
check 'and the other' wait_until 30 gone "$C" "$(qfile "$Q1" "$C")"
check_eq 'each collection audited by the reaper' '200|reaper|900000' \
	"$(sql "select status || '|' || via || '|' || (details->>'size') from audit_log where action = 'lfs.collect' and repository = '$Q1' and details->>'oid' = '$A'")"
check 'one that main points at stays' test -f "$(object_file "$CLEAN_OID")"
check_eq 'marked referenced' 1 "$(sql "select count(*) from lfs_objects where oid = '$CLEAN_OID' and referenced_at > now() - interval '5 minutes'")"
check 'one that an ephemeral branch points at stays' test -f "$(object_file "$EPH_OID")"
check_eq 'marked referenced too' 1 "$(sql "select count(*) from lfs_objects where oid = '$EPH_OID' and referenced_at is not null")"
check_eq 'the owner'"'"'s quota has the room back' 200 "$(R=$Q1 put "$B" "$_T/b.bin" "$QT"; echo "$STATUS")"

# --- who may upload ---------------------------------------------------------------------------
R=$GUARDED OT=$GT
RD=$(mk_token "$O" read)
batch_as() { # AUTH-URL-OR-TOKEN OP: the batch for a small new object
	local oid
	oid=$(printf 'policy %s' "$SFX" | sha256sum | cut -d' ' -f1)
	STATUS=$(curl -s -o "$_T/batch" -w '%{http_code}' -H 'Content-Type: application/vnd.git-lfs+json' \
		-X POST --data "{\"operation\":\"$2\",\"objects\":[{\"oid\":\"$oid\",\"size\":9}]}" "$1/info/lfs/objects/batch")
	BODY=$(cat "$_T/batch")
}
batch_as "http://t:$RD@$HOSTPORT/$R.git" upload
expect_error 403 'this needs a token with write scope' 'a read-scoped token: no upload (403, named)'
api POST "/api/v3/repos/$R/git-urls" '{"scopes":["git:write"],"ref_policies":[{"pattern":"*","ops":["no-push"]}]}' "$OT"
NOPUSH=$(_json .url)
batch_as "${NOPUSH%/}" upload
expect_error 403 "LFS upload refused: this git URL's ref policies allow no push" 'a git URL whose policies allow no push: no upload (403, named)'
curl -s -o "$_T/put" -w '%{http_code}' -X PUT --data-binary 'policy' "${NOPUSH%/}/info/lfs/objects/$(printf 'policy' | sha256sum | cut -d' ' -f1)" >"$_T/code"
check_eq 'nor a PUT' 403 "$(cat "$_T/code")"
batch_as "${NOPUSH%/}" download
check_eq 'it still downloads' 200 "$STATUS"
api POST "/api/v3/repos/$R/git-urls" '{"scopes":["git:write"],"ref_policies":[{"pattern":"refs/tags/*","ops":["no-push"]}]}' "$OT"
SOME=$(_json .url)
batch_as "${SOME%/}" upload
check_eq 'a git URL whose policies allow some push uploads' '200|true' "$STATUS|$(jq -r '.objects[0].actions.upload.href != null' <<<"$BODY")"
stack_restart 'the suite'"'"'s settings'

finish
