#!/usr/bin/env bash
# t_files_list.sh: listing and removing files in a sandbox (SPEC §4 "Files, raw": POST
# …/list, …/remove) and keeping it alive (PATCH …/sandboxes/{id}, POST …/keepalive): a tree
# to a depth, the types, a symbolic link listed and never followed, the 10,000-entry cut,
# removes of a file, a directory, a tree, a link, something missing, a non-empty directory;
# paths outside the rules, the permissions, the idle deadline moved, the audit rows. With
# SANDBOXD_AGENT=0 (the Makefile's AGENT_OFF_SUITES) the same answers come from Docker exec
# and the rows say so.
. "$(dirname "$0")/lib.sh"

WANT=agent
[ "${SANDBOXD_AGENT:-1}" = 0 ] && WANT=docker
# {"error": TEXT} and nothing else, with STATUS.
expect_box() { # STATUS TEXT [NAME]
	local name=${3:-"$LAST_REQ -> $1 {\"error\": \"$2\"}"}
	if [[ $STATUS == "$1" && $(_json .error) == "$2" && $(_json 'keys | join(",")') == error ]]; then
		ok "$name"
	else
		fail "$name" "expected $1 {\"error\": \"$2\"}"
	fi
}
mk_sandbox "fl$SFX" files
AT_EXIT+=("api POST '$SB/$ID/close' '' '$OT' >/dev/null 2>&1")
run() { api POST "$SB/$ID/exec" "$(jq -nc --arg c "$1" '{cmd: $c}')" "$OT"; }
list() { api POST "$SB/$ID/list" "$1" "$OT"; }
remove() { api POST "$SB/$ID/remove" "$1" "$OT"; }
# The entries as "name|type|size|mode" lines, sorted as answered.
rows() { _json '.entries[] | [.name, .type, (.size | tostring), (.mode | tostring)] | join("|")'; }
paths() { _json '[.entries[].path] | join(" ")'; }

run 'set -e; mkdir -p t/a/b/c/d; echo hi > t/f.txt; chmod 640 t/f.txt; touch -d @1700000000 t/f.txt
ln -s f.txt t/link; ln -s /etc t/dirlink; mkfifo t/fifo; echo deep > t/a/b/c/d/deep.txt
printf "%s %s" "$(id -u)" "$(stat -c %s t/a)"'
expect_json .exitCode 0 'a tree made in the sandbox'
# A directory's size is its filesystem's (4096 on ext4, tens of bytes on XFS): as stat says.
read -r UID_IN DIR_SIZE <<<"$(_json .stdout)"

# --- list --------------------------------------------------------------------------------------
list '{"path":"t"}'
expect_status 200 'list t: 200'
expect_schema sandbox.list_files 200
expect_keys . 'path,entries,truncated' 'the answer: {path, entries, truncated}'
check_eq 'depth 1 by default: each entry with its type, size and mode, sorted by path' \
	"a|dir|$DIR_SIZE|493"$'\ndirlink|symlink|4|511\nf.txt|file|3|416\nfifo|other|0|420\nlink|symlink|5|511' "$(rows)"
expect_json '[.path, .truncated] | map(tostring) | join("|")' 't|false' 'path as asked, not truncated'
expect_json '.entries[] | select(.name == "f.txt") | [.path, .mtime] | join("|")' \
	'/workspace/repo/t/f.txt|2023-11-14T22:13:20Z' 'an entry: its absolute path and its mtime (RFC 3339)'
expect_json '[.entries[] | keys | join(",")] | unique | join(" ")' 'mode,mtime,name,path,size,type' \
	'every entry has exactly name, path, type, size, mode, mtime'
list '{"path":"t","depth":2}'
check_eq 'depth 2: the children of a too' \
	'/workspace/repo/t/a /workspace/repo/t/a/b /workspace/repo/t/dirlink /workspace/repo/t/f.txt /workspace/repo/t/fifo /workspace/repo/t/link' "$(paths)"
list '{"path":"/workspace/repo/t/a","depth":8}'
check_eq 'depth 8, an absolute path: the whole tree' \
	'/workspace/repo/t/a/b /workspace/repo/t/a/b/c /workspace/repo/t/a/b/c/d /workspace/repo/t/a/b/c/d/deep.txt' "$(paths)"
list '{"path":"t","depth":8}'
check_eq 'the symbolic link to /etc is listed, never entered' '0' "$(_json '[.entries[].path | select(startswith("/workspace/repo/t/dirlink/"))] | length')"
list '{"path":"/etc"}'
check_eq 'an absolute path outside the repository: /etc has hostname' 'file' "$(_json '.entries[] | select(.name == "hostname") | .type')"
list '{"path":"./t/../t/a//"}'
expect_json '.entries[0].path' '/workspace/repo/t/a/b' 'a path with ., .. and empty components, resolved lexically'

# Refusals, each with its exact text, beside the positive checks above.
list '{"path":"t","depth":0}'
expect_box 400 "field 'depth' must be an integer between 1 and 8" 'depth 0: 400 naming it'
list '{"path":"t","depth":9}'
expect_box 400 "field 'depth' must be an integer between 1 and 8" 'depth 9: 400 naming it'
list '{"path":"t","depth":"2"}'
expect_box 400 "field 'depth' must be an integer" 'depth as a string: 400 naming it'
list '{}'
expect_box 400 "field 'path' is required" 'no path: 400'
list '{"path":""}'
expect_box 400 "field 'path' must be 1 to 4096 bytes" 'an empty path: 400'
list "{\"path\":\"$(head -c 4097 /dev/zero | tr '\0' a)\"}"
expect_box 400 "field 'path' must be at most 4096 bytes" 'a path of 4097 bytes: 400'
list "{\"path\":\"t/$(head -c 256 /dev/zero | tr '\0' a)\"}"
expect_box 400 "field 'path' has a component longer than 255 bytes" 'a component of 256 bytes: 400'
list '{"path":7}'
expect_box 400 "field 'path' must be a string" 'a path that is not a string: 400'
list '{"path":"nope"}'
expect_box 404 'no such file: nope' 'a missing directory: 404'
list '{"path":"t/f.txt"}'
expect_box 400 't/f.txt is not a directory' 'a file: 400'
list '{"path":"t/dirlink"}'
expect_box 400 't/dirlink is not a directory' 'a symbolic link to a directory is not followed: 400'
list '{"path":"t/f.txt/x"}'
expect_box 400 't/f.txt/x is not a directory' 'a path through a file: 400'
if [ "$UID_IN" != 0 ]; then
	list '{"path":"/root"}'
	expect_box 403 'cannot list /root: permission denied' 'a directory the user may not read: 403'
	list '{"path":"/root/x"}'
	expect_box 403 'cannot list /root/x: permission denied' 'below a directory the user may not search: 403'
else
	skip 'commands run as root in this engine: no directory is out of reach (permission checks)'
fi

# The cut: 10,001 files give 10,000 entries and truncated; 10,000 are whole.
run 'mkdir many && cd many && seq -f "f%05g" 10001 | xargs touch && ls | wc -l'
expect_json .stdout $'10001' '10,001 files made in one exec'
list '{"path":"many"}'
check_eq 'past 10,000 entries: 10,000 and truncated' '10000|true' "$(_json '[(.entries | length), .truncated] | map(tostring) | join("|")')"
run 'rm many/f10001'
list '{"path":"many"}'
check_eq 'exactly 10,000: all of them, not truncated' '10000|false|f00001|f10000' \
	"$(_json '[(.entries | length), .truncated, .entries[0].name, .entries[-1].name] | map(tostring) | join("|")')"

# --- remove ------------------------------------------------------------------------------------
remove '{"path":"t/f.txt"}'
expect_status 204 'remove a file: 204'
expect_empty_body 'and no body'
list '{"path":"t"}'
check_eq 'it is gone, the link to it stays' 'a dirlink fifo link' "$(_json '[.entries[].name] | join(" ")')"
remove '{"path":"t/f.txt"}'
expect_box 404 'no such file: t/f.txt' 'remove it again: 404'
remove '{"path":"t/f.txt/x"}'
expect_box 404 'no such file: t/f.txt/x' 'a path through a missing file: 404'
remove '{"path":"t/a"}'
expect_box 400 'cannot remove t/a: directory not empty (remove it with recursive)' 'a non-empty directory without recursive: 400'
remove '{"path":"t/a","recursive":"yes"}'
expect_box 400 "field 'recursive' must be a boolean" 'recursive not a boolean: 400'
remove '{"path":"t/a/b/c/d/deep.txt","recursive":false}'
expect_status 204 'a file inside it: 204'
remove '{"path":"t/a/b/c/d"}'
expect_status 204 'an empty directory without recursive: 204'
remove '{"path":"t/a","recursive":true}'
expect_status 204 'the rest of the tree with recursive: 204'
remove '{"path":"t/dirlink","recursive":true}'
expect_status 204 'a symbolic link to a directory: 204'
run 'ls t; test -f /etc/hostname && echo etc-intact'
expect_json .stdout $'fifo\nlink\netc-intact' 'the tree and the link are gone, /etc (its target) is not'
remove '{"path":"/"}'
expect_box 400 "field 'path' must not be /" 'remove /: 400'
remove '{"path":"../../../.."}'
expect_box 400 "field 'path' must not be /" 'a path that resolves to /: 400'
remove '{}'
expect_box 400 "field 'path' is required" 'remove without a path: 400'
if [ "$UID_IN" != 0 ]; then
	remove '{"path":"/etc/passwd"}'
	expect_box 403 'cannot remove /etc/passwd: permission denied' 'a file the user may not remove: 403'
	run 'test -f /etc/passwd && echo kept'
	expect_json .stdout kept 'and it is still there'
fi
remove '{"path":"many","recursive":true}'
expect_status 204 'a directory of 10,000 files with recursive: 204'
list '{"path":"many"}'
expect_box 404 'no such file: many' 'and it is gone'

# --- who may call ------------------------------------------------------------------------------
RD=$(mk_token "fl$SFX" read)
api POST "$SB/$ID/list" '{"path":"."}' "$RD"
expect_error 403 'this needs a token with write scope' 'list with a read-scoped token: 403'
api POST "$SB/$ID/remove" '{"path":"t/link"}' "$RD"
expect_error 403 'this needs a token with write scope' 'remove with a read-scoped token: 403'
OTHER="flo$SFX"
mk_user "$OTHER" || exit 1
XT=$LAST_TOKEN
api PUT "/api/v3/repos/$R/collaborators/$OTHER" '{"role":"write"}' "$OT"
api POST "$SB/$ID/list" '{"path":"."}' "$XT"
expect_error 403 'not your sandbox' "list in another user's sandbox: 403"
api POST "$SB/$ID/remove" '{"path":"t/link"}' "$XT"
expect_error 403 'not your sandbox' "remove in another user's sandbox: 403"
list '{"path":"t"}'
expect_json '[.entries[].name] | join(" ")' 'fifo link' 'their removes removed nothing'

# --- keep-alive --------------------------------------------------------------------------------
stop_at() { epoch "$(sql "select rfc3339(idle_stop_at) from sandboxes where id = '$ID'")"; }
near() { # WANT GOT: within 5 s
	[[ $2 =~ ^[0-9]+$ ]] && (($2 >= $1 - 5 && $2 <= $1 + 5))
}
api PATCH "$SB/$ID" '{"idle_timeout_seconds":86400}' "$OT"
expect_status 200 'PATCH idle_timeout_seconds 86400: 200'
expect_keys . "$(api GET "$SB/$ID" '' "$OT" >/dev/null; _json 'keys | join(",")')" 'the answer has the shape of GET'
api PATCH "$SB/$ID" '{"idle_timeout_seconds":86400}' "$OT"
check 'its idle_stop_at is a day from now' near "$(($(date +%s) + 86400))" "$(epoch "$(_json .idle_stop_at)")"
api POST "$SB/$ID/list" '{"path":"t"}' "$OT"
check 'a later call keeps the sandbox'"'"'s own limit' near "$(($(date +%s) + 86400))" "$(stop_at)"
api PATCH "$SB/$ID" '{"idle_timeout_seconds":59}' "$OT"
expect_error 400 "field 'idle_timeout_seconds' must be an integer between 60 and 86400" '59 s: 400 naming the field'
api PATCH "$SB/$ID" '{"idle_timeout_seconds":86401}' "$OT"
expect_error 400 "field 'idle_timeout_seconds' must be an integer between 60 and 86400" '86401 s: 400 naming the field'
api PATCH "$SB/$ID" '{"idle_timeout_seconds":"600"}' "$OT"
expect_error 400 "field 'idle_timeout_seconds' must be an integer" 'a string: 400 naming the field'
check 'refused PATCHes change nothing' near "$(($(date +%s) + 86400))" "$(stop_at)"
api PATCH "$SB/$ID" '{"idle_timeout_seconds":600}' "$OT"
check 'PATCH 600: idle_stop_at 10 minutes from now' near "$(($(date +%s) + 600))" "$(epoch "$(_json .idle_stop_at)")"
api PATCH "$SB/$ID" '{}' "$OT"
expect_status 200 'PATCH {}: 200, nothing changed but activity'
check 'the limit stays 600 s' near "$(($(date +%s) + 600))" "$(epoch "$(_json .idle_stop_at)")"
api PATCH "$SB/$ID" '{"idle_timeout_seconds":600}' "$RD"
expect_error 403 'this needs a token with write scope' 'PATCH with a read-scoped token: 403'
api PATCH "$SB/$ID" '{"idle_timeout_seconds":600}' "$XT"
expect_error 403 'not your sandbox' "PATCH of another user's sandbox: 403"
sql "update sandboxes set idle_stop_at = now() + interval '100 seconds' where id = '$ID'" >/dev/null
api POST "$SB/$ID/keepalive" '' "$OT"
expect_status 204 'keepalive: 204'
expect_empty_body 'and no body'
check 'keepalive moved idle_stop_at to 600 s from now' near "$(($(date +%s) + 600))" "$(stop_at)"
sql "update sandboxes set idle_stop_at = now() + interval '100 seconds' where id = '$ID'" >/dev/null
api POST "$SB/$ID/keepalive" '' "$RD"
expect_error 403 'this needs a token with write scope' 'keepalive with a read-scoped token: 403'
api POST "$SB/$ID/keepalive" '' "$XT"
expect_error 403 'not your sandbox' "keepalive of another user's sandbox: 403"
check 'refused keepalives moved nothing' near "$(($(date +%s) + 100))" "$(stop_at)"

# --- audit -------------------------------------------------------------------------------------
row() { # ACTION STATUS FIELDS: the newest row's details fields, joined by |
	sql "select $3 from audit_log where sandbox_id = '$ID' and action = '$1' and status = $2 order by id desc limit 1"
}
check_eq 'a list is audited with its path, depth, count and backend' \
	"/workspace/repo/many|1|10000|false|$WANT|" \
	"$(sql "select concat_ws('|', details->>'file', details->>'depth', details->>'entries', details->>'truncated', details->>'backend', coalesce(details->>'agent_error', '')) from audit_log where sandbox_id = '$ID' and action = 'sandbox.list_files' and status = 200 and details->>'file' = '/workspace/repo/many' order by id desc limit 1")"
check_eq 'the truncated one says so' 1 "$(sql "select count(*) from audit_log where sandbox_id = '$ID' and action = 'sandbox.list_files' and details->>'truncated' = 'true'")"
check_eq 'a refused list is audited with its status' "404|$WANT" "$(row sandbox.list_files 404 "concat_ws('|', status, details->>'backend')")"
check_eq 'a remove is audited with its path, recursive and backend' "/workspace/repo/many|true|$WANT" \
	"$(row sandbox.remove 204 "concat_ws('|', details->>'file', details->>'recursive', details->>'backend')")"
check_eq 'the non-empty refusal too' "400|false" "$(sql "select concat_ws('|', status, details->>'recursive') from audit_log where sandbox_id = '$ID' and action = 'sandbox.remove' and details->>'file' = '/workspace/repo/t/a' order by id limit 1")"
check_eq "every served row names its backend ($WANT), none an agent_error" "0" \
	"$(sql "select count(*) from audit_log where sandbox_id = '$ID' and action in ('sandbox.list_files', 'sandbox.remove') and details ? 'backend' and (details->>'backend' <> '$WANT' or details ? 'agent_error')")"
check_eq 'PATCH is audited with its change and the new deadline' '600|t' "$(sql "select concat_ws('|', details->'changes'->>'idle_timeout_seconds', details ? 'idle_stop_at') from audit_log where sandbox_id = '$ID' and action = 'sandbox.update' and status = 200 and details ? 'changes' order by id desc limit 1")"
check_eq 'keepalive is audited' '1' "$(sql "select count(*) from audit_log where sandbox_id = '$ID' and action = 'sandbox.keepalive' and status = 204")"

# --- the same answers from both backends -------------------------------------------------------
# With the agent on: the same listings through it, then (its process killed) through Docker
# exec, byte for byte, the fallback audited with its reason.
if [ "$WANT" = agent ]; then
	run 'mkdir -p same/d && echo x > same/d/f && ln -s d same/l && mkfifo same/p'
	list '{"path":"same","depth":3}'
	AGENT_BODY=$BODY
	list '{"path":"/etc","depth":2}'
	AGENT_ETC=$BODY
	run 'kill -9 $(cat /workspace/.sandboxd/agent.pid); echo killed'
	expect_json .stdout killed 'the agent killed'
	list '{"path":"same","depth":3}'
	check_eq 'a tree listed through Docker exec: the same answer as through the agent' "$AGENT_BODY" "$BODY"
	list '{"path":"/etc","depth":2}'
	check_eq '/etc to depth 2 too' "$AGENT_ETC" "$BODY"
	check_eq 'served by docker, the reason audited' 'docker|t' "$(sql "select concat_ws('|', details->>'backend', details ? 'agent_error') from audit_log where sandbox_id = '$ID' and action = 'sandbox.list_files' order by id desc limit 1")"
	remove '{"path":"same","recursive":true}'
	expect_status 204 'a remove through Docker exec after the agent died: 204'
	check_eq 'audited as docker' 'docker' "$(sql "select details->>'backend' from audit_log where sandbox_id = '$ID' and action = 'sandbox.remove' order by id desc limit 1")"
fi

# --- a closed sandbox --------------------------------------------------------------------------
api POST "$SB/$ID/close" '' "$OT"
expect_status 204 'closed'
list '{"path":"t"}'
expect_error 410 'sandbox is closed' 'list on a closed sandbox: 410'
expect_schema sandbox.list_files 410
remove '{"path":"t/link"}'
expect_error 410 'sandbox is closed' 'remove on a closed sandbox: 410'
api PATCH "$SB/$ID" '{"idle_timeout_seconds":600}' "$OT"
expect_error 410 'sandbox is closed' 'PATCH on a closed sandbox: 410'
api POST "$SB/$ID/keepalive" '' "$OT"
expect_error 410 'sandbox is closed' 'keepalive on a closed sandbox: 410'
finish
