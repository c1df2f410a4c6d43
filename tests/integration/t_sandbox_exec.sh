#!/usr/bin/env bash
# t_sandbox_exec.sh: exec, read and write in a sandbox on the real Docker engine: exit
# codes and separate streams, cwd and env, calls that do not carry over, time limits that
# end a whole process tree, capped output, masked credentials, files byte for byte.
. "$(dirname "$0")/lib.sh"

HOSTPORT=${SANDBOXD_URL#http://}
fails() { ! "$@"; }
O="sbe$SFX"
mk_user "$O" || exit 1
OT=$LAST_TOKEN
R="$O/exec"
api POST /api/v3/user/repos '{"name":"exec","visibility":"private"}' "$OT"
W=$_T/w
git init -q -b main "$W"
echo hello >"$W/README" && git -C "$W" add README && git -C "$W" -c user.name=t -c user.email=t@t commit -qm one
git -C "$W" push -q "http://t:$OT@$HOSTPORT/$R.git" main
SB=/api/v3/repos/$R/diffinery/sandboxes
api POST "$SB" '{}' "$OT"
expect_status 201 'sandbox created'
ID=$(_json .id)
run() { # JSON: an exec; sets STATUS and BODY
	api POST "$SB/$ID/exec" "$1" "$OT"
}

# --- results -------------------------------------------------------------------------------
run '{"cmd":"cat README; echo to-err >&2; exit 3"}'
expect_status 200 'a non-zero exit is a normal result: 200 (it waited for the clone)'
expect_keys . 'durationMs,exitCode,stderr,stderrBytes,stdout,stdoutBytes,timedOut,truncated' 'the exec result shape'
expect_json .exitCode 3 'exitCode'
expect_json .stdout 'hello' 'stdout apart'
expect_json .stderr 'to-err' 'stderr apart'
expect_json .stdoutBytes 6 'stdoutBytes'
expect_json .timedOut false 'timedOut false'
run '{"cmd":"cd /tmp && export X=1"}'
run '{"cmd":"pwd; echo \"${X:-unset}\""}'
expect_json .stdout $'/workspace/repo\nunset' 'cd and export do not carry over'
run '{"cmd":"pwd; echo $FOO","cwd":"sub","env":{"FOO":"bar baz"}}'
expect_status 400 'a cwd that does not exist: 400'
run '{"cmd":"mkdir -p sub"}'
run '{"cmd":"pwd; echo $FOO","cwd":"sub","env":{"FOO":"bar baz"}}'
expect_json .stdout $'/workspace/repo/sub\nbar baz' 'cwd (relative to the repository) and env'
run '{"cmd":"echo $SANDBOX_ID $SANDBOX_REPOSITORY $HOME"}'
expect_json .stdout "$ID $R $BOX_HOME" 'SANDBOX_* and HOME in the environment'
run '{}'
expect_error_field() { [ "$STATUS" = "$1" ] && [ "$(_json .error)" = "$2" ]; }
check 'a missing cmd: 400 {"error": "field '"'"'cmd'"'"' is required"}' expect_error_field 400 "field 'cmd' is required"
run '{"cmd":"true","timeoutMs":3600001}'
check 'timeoutMs over an hour: 400 naming it' expect_error_field 400 "field 'timeoutMs' must be an integer between 1 and 3600000"
run '{"cmd":"true","env":{"1BAD":"x"}}'
expect_status 400 'a bad env name: 400'

# --- time limits ----------------------------------------------------------------------------
run '{"cmd":"sleep 300 & (trap \"\" TERM; sleep 301) & wait","timeoutMs":1000}'
expect_json .exitCode 124 'past the limit: exitCode 124'
expect_json .timedOut true 'timedOut true'
run '{"cmd":"pgrep -f \"sleep 30[01]\" || echo none"}'
expect_json .stdout none 'nothing of the tree runs afterwards, not even what ignored SIGTERM'
run '{"cmd":"nohup sleep 120 >/dev/null 2>&1 &"}'
run '{"cmd":"pgrep -f \"sleep 120\" >/dev/null && echo alive"}'
expect_json .stdout alive 'a background job outlives its call'

# --- output caps and masking ----------------------------------------------------------------
run '{"cmd":"head -c 3000000 /dev/zero | tr \"\\0\" a; echo; echo THE-END"}'
expect_json .truncated true '3 MB of output: truncated'
expect_json .stdoutBytes 3000009 'stdoutBytes counts all of it'
expect_json_match .stdout '\[… 1951433 bytes omitted …\]' 'one marker line naming the omitted bytes'
expect_json_match .stdout 'THE-END$' 'the last 512 KiB are kept'
check 'and stay within 1 MiB and the marker' [ "$(_json '.stdout | length')" -lt 1048700 ]
TOK=$(box_token_of "$(docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$ID")")")
# The header in the clone's config, decoded: the token in its raw form.
DEC="git config --get-regexp extraheader | awk '{print \$NF}' | base64 -d"
check 'the test found the sandbox token' grep -q '^dst_' <<<"$TOK"
for c in 'cat .git/config' 'git config --list' 'env' "$DEC" "$DEC | base64 -w0" \
	"$DEC | sed 's/_/%5F/'"; do
	run "$(jq -n --arg c "$c" '{cmd: $c}')"
	check "$c never shows the token" fails grep -qF "$TOK" <<<"$BODY"
done
run "$(jq -n --arg c "$DEC; echo" '{cmd: $c}')"
expect_json_match .stdout '^x-access-token:\*\*\*$' 'the token is replaced with ***'
run "$(jq -n --arg c "$DEC | base64 -w0" '{cmd: $c}')"
check 'the token in base64 of an auth header is masked' fails grep -qF "$(printf 'x-access-token:%s' "$TOK" | base64 -w0 | head -c 40)" <<<"$BODY"
check_eq 'the audit row holds the command, masked' 1 "$(sql "select count(*) from audit_log where sandbox_id = '$ID' and action = 'sandbox.exec' and details->>'cmd' like 'git config --get-regexp extraheader | awk %| base64 -d; echo' and (details->>'exit_code')::int = 0")"
check_eq 'no audit row holds the token' 0 "$(sql "select count(*) from audit_log where details::text like '%$TOK%'")"

# --- files ---------------------------------------------------------------------------------------
head -c 70000 /dev/urandom >"$_T/bin"
api POST "$SB/$ID/write" "$(jq -n --arg c "$(base64 -w0 "$_T/bin")" '{path: "data/deep/blob.bin", content: $c}')" "$OT"
expect_status 200 'write a binary file (parents created)'
expect_json .size 70000 'write answers the size'
api POST "$SB/$ID/read" '{"path":"data/deep/blob.bin"}' "$OT"
expect_status 200 'read it back'
_json .content | base64 -d >"$_T/back"
check 'bytes round-trip exactly' cmp -s "$_T/bin" "$_T/back"
run '{"cmd":"stat -c %u:%g:%a data/deep/blob.bin data/deep"}'
expect_json .stdout "$BOX_USER:644"$'\n'"$BOX_USER:755" 'the file belongs to the sandbox user, mode 0644'
run '{"cmd":"stat -c %u:%a /tmp"}'
expect_json .stdout '0:1777' 'an existing directory keeps its owner and mode'
api POST "$SB/$ID/write" "$(jq -n --arg c "$(printf '#!/bin/sh\necho script-ran\n' | base64 -w0)" '{path: "/workspace/repo/run.sh", content: $c, mode: 493}')" "$OT"
run '{"cmd":"./run.sh"}'
expect_json .stdout script-ran 'mode 0755 (493): the script runs'
api POST "$SB/$ID/read" '{"path":"missing.txt"}' "$OT"
check 'a missing file: 404 {"error": "no such file: missing.txt"}' expect_error_field 404 'no such file: missing.txt'
api POST "$SB/$ID/read" '{"path":"data"}' "$OT"
expect_status 400 'a directory: 400'
head -c 1100000 /dev/zero >"$_T/big"
jq -n --rawfile c <(base64 -w0 "$_T/big") '{path: "big", content: $c}' >"$_T/big.json"
api POST "$SB/$ID/write" "@$_T/big.json" "$OT"
check 'a file over the limit (1 MiB in the tests): 413 {"error": "file too large"}' expect_error_field 413 'file too large'
run '{"cmd":"head -c 1100000 /dev/zero > big.bin"}'
api POST "$SB/$ID/read" '{"path":"big.bin"}' "$OT"
check 'reading a file over the limit: 413' expect_error_field 413 'file too large'
api POST "$SB/$ID/write" '{"path":"x","content":"not base64!"}' "$OT"
expect_status 400 'bad base64: 400'
api POST "$SB/$ID/write" '{"content":"eA=="}' "$OT"
check 'a missing path: 400 with an error' expect_error_field 400 "field 'path' is required"

# --- what a DBA sees -------------------------------------------------------------------------------
check_eq 'audit_running_sandboxes lists it, for the auditor' "$ID|$R|ready" "$(sql "set role sandboxd_auditor; select id || '|' || repository || '|' || state from audit_running_sandboxes where id = '$ID'")"
check_eq 'audit_sandbox_commands has its commands in order' 'cat README; echo to-err >&2; exit 3|3' "$(sql "set role sandboxd_auditor; select cmd || '|' || exit_code from audit_sandbox_commands where sandbox_id = '$ID' and seq = 1")"

# --- the end ---------------------------------------------------------------------------------
api POST "$SB/$ID/close" "" "$OT"
expect_status 204 'closed'
run '{"cmd":"true"}'
expect_error 410 'sandbox is closed' 'exec on a closed sandbox: 410'
api POST "$SB/$ID/read" '{"path":"README"}' "$OT"
expect_error 410 'sandbox is closed' 'read on a closed sandbox: 410'
finish
