#!/usr/bin/env bash
# t_files_raw.sh: raw file transfer (SPEC §4 "Files, raw"): PUT and GET
# …/sandboxes/{id}/files/{path} with the bytes as the body, streamed both ways: binary bytes
# back as they went in (hashes), modes in octal and decimal, relative and absolute paths
# (%2F), a chunked upload, a file of exactly the limit read back, over it refused (a PUT by
# nginx before any byte, a GET by the service), a client that leaves mid-body and a full
# disk leaving nothing under the name, bad paths and modes, who may call, the audit rows.
# With SANDBOXD_AGENT=0 (the Makefile's AGENT_OFF_SUITES) the same answers come from the
# engine's archive API and Docker exec, and the rows say so.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_guard.sh"

WANT=agent
[ "${SANDBOXD_AGENT:-1}" = 0 ] && WANT=docker
LIMIT=$((1 << 30))

mk_sandbox "fr$SFX" rawfiles
AT_EXIT+=("api POST '$SB/$ID/close' '' '$OT' >/dev/null 2>&1")
BASE=$SANDBOXD_URL$SB/$ID/files
run() { api POST "$SB/$ID/exec" "$(jq -nc --arg c "$1" '{cmd: $c}')" "$OT"; }

# put URLPATH FILE [CURL ARGS…]: STATUS and BODY (the JSON answer).
put() {
	local p=$1 f=$2
	shift 2
	LAST_REQ="PUT files/$p"
	STATUS=$(curl -sS -T "$f" -H "Authorization: Bearer ${TOKEN:-$OT}" -H 'Expect:' \
		-H 'Content-Type: application/octet-stream' -o "$_T/body" -w '%{http_code}' \
		--max-time 300 "$@" "$BASE/$p" 2>"$_T/curl.err") || STATUS=000
	BODY=$(cat "$_T/body")
}
# get URLPATH OUT: STATUS; the headers in HEADERS, the bytes in OUT.
get() {
	LAST_REQ="GET files/$1"
	STATUS=$(curl -sS -H "Authorization: Bearer ${TOKEN:-$OT}" -o "$2" -D "$_T/headers" \
		-w '%{http_code}' --max-time 300 "$BASE/$1" 2>"$_T/curl.err") || STATUS=000
	HEADERS=$(tr -d '\r' <"$_T/headers")
	BODY=$(head -c 2000 "$2")
}
# {"error": TEXT} and nothing else, with STATUS.
expect_box() { # STATUS TEXT [NAME]
	local name=${3:-"$LAST_REQ -> $1 {\"error\": \"$2\"}"}
	if [[ $STATUS == "$1" && $(_json .error) == "$2" && $(_json 'keys | join(",")') == error ]]; then
		ok "$name"
	else
		fail "$name" "expected $1 {\"error\": \"$2\"}, got $STATUS $BODY"
	fi
}
sha() { sha256sum "$1" | cut -d' ' -f1; }
inside_sha() { run "sha256sum -- '$1' | cut -d' ' -f1"; printf '%s' "$(_json .stdout | tr -d '\n')"; }

# --- binary bytes both ways --------------------------------------------------------------------
head -c $((5 << 20)) /dev/urandom >"$_T/blob"
put blob.bin "$_T/blob"
expect_status 201 'PUT 5 MiB of random bytes: 201'
expect_schema sandbox.file_put 201
expect_keys . 'path,size' 'the answer: {path, size}'
expect_json '[.path, (.size | tostring)] | join("|")' "blob.bin|$((5 << 20))" 'path as asked, size in bytes'
check_eq 'the bytes in the sandbox are the bytes sent (sha256)' "$(sha "$_T/blob")" "$(inside_sha /workspace/repo/blob.bin)"
run 'stat -c "%a %u" blob.bin'
expect_json .stdout "644 $BOX_UID" "mode 0644 by default, the sandbox user's (uid $BOX_UID)"
get blob.bin "$_T/back"
expect_status 200 'GET it: 200'
check_eq 'Content-Type: application/octet-stream' 'application/octet-stream' "$(header Content-Type)"
check_eq "Content-Length: $((5 << 20))" "$((5 << 20))" "$(header Content-Length)"
check_eq 'the bytes back are the bytes sent' "$(sha "$_T/blob")" "$(sha "$_T/back")"
printf '' >"$_T/empty"
put empty.txt "$_T/empty"
expect_json '[.path, (.size | tostring)] | join("|")' 'empty.txt|0' 'an empty file: 201, size 0'
get empty.txt "$_T/back"
check_eq 'and an empty file reads back empty: 200, Content-Length 0, no byte' '200|0|0' \
	"$STATUS|$(header Content-Length)|$(stat -c %s "$_T/back")"

# --- modes and paths ---------------------------------------------------------------------------
echo '#!/bin/sh' >"$_T/script"
put 'bin/run.sh?mode=0755' "$_T/script"
expect_status 201 'mode=0755 (octal), in a folder that did not exist: 201'
run 'stat -c %a bin/run.sh'
expect_json .stdout '755' 'the file has mode 755'
put 'bin/run2.sh?mode=493' "$_T/script"
run 'stat -c %a bin/run2.sh'
expect_json .stdout '755' 'mode=493 (decimal) is 0755 too'
put '%2Ftmp%2Fraw%2Fabs.bin' "$_T/blob"
expect_json .path '/tmp/raw/abs.bin' 'a path that starts with %2F is absolute'
check_eq 'and it is there, not under /workspace/repo' "$(sha "$_T/blob")" "$(inside_sha /tmp/raw/abs.bin)"
get '%2Ftmp/raw%2fabs.bin' "$_T/back"
check_eq '/ and %2F (either case) both separate: GET of the absolute path' "$(sha "$_T/blob")" "$(sha "$_T/back")"
put 'sp%20ace/d%C3%A9j%C3%A0.txt' "$_T/script"
expect_json .path 'sp ace/déjà.txt' 'percent-escapes are decoded (a space, UTF-8)'
run 'cat "sp ace/déjà.txt"'
expect_json .stdout '#!/bin/sh' 'and the file has that name'
put 'a/./b/../c.txt' "$_T/script"
run 'test -f a/c.txt && echo yes'
expect_json .stdout 'yes' '. and .. resolved lexically: a/c.txt'
put 'chunked.bin' "$_T/blob" -H 'Transfer-Encoding: chunked'
expect_json .size "$((5 << 20))" 'a chunked upload (no Content-Length from the client): nginx gives the length, 201'

# --- the limit ---------------------------------------------------------------------------------
run "truncate -s $LIMIT at-limit && truncate -s $((LIMIT + 1)) over-limit && echo ok"
expect_json .stdout 'ok' 'sparse files of the limit (1 GiB) and one byte more, made in the sandbox'
LAST_REQ='GET files/at-limit'
got=$(curl -sS -H "Authorization: Bearer $OT" -o >(sha256sum | cut -d' ' -f1 >"$_T/limit.sha") \
	-w '%{http_code} %{size_download}' --max-time 300 "$BASE/at-limit" 2>"$_T/curl.err") || got=000
want_sha=$(head -c $LIMIT /dev/zero | sha256sum | cut -d' ' -f1)
check_eq 'GET of a file of exactly the limit: 200, 1 GiB streamed' "200 $LIMIT" "$got"
wait_until 10 test -s "$_T/limit.sha"
check_eq 'and every byte of it (sha256 of 1 GiB of zeros)' "$want_sha" "$(cat "$_T/limit.sha")"
get over-limit "$_T/back"
expect_box 413 'file too large' 'GET of a file one byte over the limit: 413'
LAST_REQ='PUT files/too-big (Content-Length: limit + 1)'
STATUS=$(curl -sS -X PUT -H "Authorization: Bearer $OT" -H "Content-Length: $((LIMIT + 1))" \
	--data-binary 'x' -o "$_T/body" -w '%{http_code}' --max-time 30 "$BASE/too-big" 2>/dev/null) || true
BODY=$(cat "$_T/body")
expect_box 413 'file too large' 'PUT over the limit: 413 at once, from its Content-Length'
run 'test -e too-big && echo there || echo absent'
expect_json .stdout 'absent' 'and nothing was written'

# --- nothing under the name unless whole -------------------------------------------------------
# A client that announces 1 MiB, sends 1000 bytes and leaves.
python3 - "${SANDBOXD_URL#http://}" "$SB/$ID/files/left.bin" "$OT" <<'EOF'
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)))
s.sendall(("PUT %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"
           "Content-Length: 1048576\r\n\r\n" % (sys.argv[2], host, sys.argv[3])).encode() + b"x" * 1000)
s.close()
EOF
put left.bin "$_T/script"
expect_status 201 'meanwhile a whole PUT of the same name works'
run 'cat left.bin; ls -a | grep -c sandboxd-write'
expect_json .stdout $'#!/bin/sh\n0' 'a client that left mid-body left nothing: the name holds the whole file only, no temporary file'
run 'df -k --output=size /dev/shm | tail -1'
SHM_KB=$(_json .stdout | tr -d ' \n')
head -c $(((SHM_KB + 1024) * 1024)) /dev/zero >"$_T/shmfull"
put '%2Fdev%2Fshm%2Ffull.bin' "$_T/shmfull"
# The words are the writer's: the agent's "write: …", cat's "cat: write error: …".
check_eq "a file larger than the sandbox's /dev/shm ($SHM_KB KiB) put there: 400 naming the full disk" \
	'400|error|yes' "$STATUS|$(_json 'keys | join(",")')|$(_json '.error | test("^cannot write /dev/shm/full.bin: (write|cat: write error): No space left on device$") | if . then "yes" else "no" end')"
run 'ls -A /dev/shm | wc -l'
expect_json .stdout '0' 'and /dev/shm holds nothing: no partial file, no temporary one'
# The staging directory (1733) is not listable by the sandbox's user: count as root, through
# the engine; a directory that is not there, or an engine that does not answer, fails.
staged=$(box_root "$(box_cid "$ID")" 'test -d /.sandboxd-stage && ls -A /.sandboxd-stage | wc -l') || staged="(no answer: exit $?)"
check_eq 'nothing stays staged (/.sandboxd-stage listed as root)' 0 "$staged"

# --- bad input ---------------------------------------------------------------------------------
get missing.bin "$_T/back"
expect_box 404 'no such file: missing.bin' 'GET of a missing file: 404'
get bin "$_T/back"
expect_box 400 'bin is not a regular file (a directory)' 'GET of a directory: 400'
put bin "$_T/script"
expect_box 400 'bin is a directory' 'PUT onto a directory: 400'
put 'blob.bin/x' "$_T/script"
expect_box 400 'blob.bin/x: a parent is not a directory' 'PUT under a file: 400'
put 'x.bin?mode=0999' "$_T/script"
expect_box 400 "query 'mode' must be a file mode: octal with a leading 0 (0755) or decimal (493), at most 07777" 'mode=0999: 400'
put 'x.bin?mode=10000' "$_T/script"
expect_box 400 "query 'mode' must be a file mode: octal with a leading 0 (0755) or decimal (493), at most 07777" 'mode=10000 (over 07777): 400'
put 'x.bin?mode=rw' "$_T/script"
expect_box 400 "query 'mode' must be a file mode: octal with a leading 0 (0755) or decimal (493), at most 07777" 'mode=rw: 400'
put 'a%zzb' "$_T/script"
expect_error 400 'bad request' 'a bad %-escape: 400 (nginx refuses it before the service)'
put 'a%00b' "$_T/script"
expect_error 400 'bad request' 'an escaped NUL: 400 (nginx too)'
put "$(printf 'n%.0s' $(seq 4200))" "$_T/script"
expect_box 400 'the file'"'"'s path in the URL is not a path (bad %-escape, a NUL, or longer than 4096 bytes)' 'a path longer than 4096 bytes: 400'
put '%2F' "$_T/script"
expect_box 400 'the path must name a file' 'the root: 400'
run 'ls -A x.bin 2>&1 >/dev/null | grep -c "No such file"'
expect_json .stdout '1' 'none of the refused writes left x.bin'

# --- who may call ------------------------------------------------------------------------------
RD=$(mk_token "fr$SFX" read)
TOKEN=$RD put x.bin "$_T/script"
expect_error 403 'this needs a token with write scope' 'PUT with a read-scoped token: 403'
TOKEN=$RD get blob.bin "$_T/back"
expect_error 403 'this needs a token with write scope' 'GET with a read-scoped token: 403'
OTHER="fro$SFX"
mk_user "$OTHER" || exit 1
XT=$LAST_TOKEN
api PUT "/api/v3/repos/$R/collaborators/$OTHER" '{"role":"write"}' "$OT"
TOKEN=$XT put x.bin "$_T/script"
expect_error 403 'not your sandbox' "PUT in another user's sandbox: 403"
TOKEN=$XT get blob.bin "$_T/back"
expect_error 403 'not your sandbox' "GET in another user's sandbox: 403"

# --- the audit rows ----------------------------------------------------------------------------
check_eq 'the PUT of blob.bin: its row names the file, the size and the backend' \
	"/workspace/repo/blob.bin|$((5 << 20))|$WANT|" \
	"$(sql "select concat_ws('|', details->>'file', details->>'size', details->>'backend', coalesce(details->>'agent_error', '')) from audit_log where sandbox_id = '$ID' and action = 'sandbox.file_put' and status = 201 order by id limit 1")"
check_eq 'the GET of the file at the limit: 200 with its size' "200|$LIMIT|$WANT" \
	"$(sql "select concat_ws('|', status, details->>'size', details->>'backend') from audit_log where sandbox_id = '$ID' and action = 'sandbox.file_get' and details->>'file' = '/workspace/repo/at-limit'")"
check_eq 'the refused GET of a directory has its row too' 1 \
	"$(sql "select count(*) from audit_log where sandbox_id = '$ID' and action = 'sandbox.file_get' and status = 400 and details->>'file' = '/workspace/repo/bin'")"

# --- a closed sandbox --------------------------------------------------------------------------
api POST "$SB/$ID/close" '' "$OT"
expect_status 204 'close'
put x.bin "$_T/script"
expect_error 410 'sandbox is closed' 'PUT on a closed sandbox: 410'
get blob.bin "$_T/back"
expect_error 410 'sandbox is closed' 'GET on a closed sandbox: 410'

finish
