#!/usr/bin/env bash
# t_hostile_exec.sh: the security review's attacks on exec, detached output, the audit log,
# the clone and the file API (issue 11 items 1, 6, 7, 9, 10 and 11), each with the check a
# user would make and a positive check beside it.
. "$(dirname "$0")/lib.sh"

export GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=/bin/false
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
HOSTPORT=${SANDBOXD_URL#http://}
# Prints the clone's credential decoded: x-access-token:<the token>, raw.
DEC="git config --get-regexp extraheader | awk '{print \$NF}' | base64 -d"

mk_sandbox "hx$SFX" box
AT_EXIT+=("api POST '$SB/$ID/close' '' '$OT' >/dev/null")
CID=$(docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$ID")")
cloned() { api GET "$SB/$ID" "" "$OT"; [ "$(_json .clone.state)" = "done" ]; }
check 'the clone is done' wait_until 60 cloned
run() { api POST "$SB/$ID/exec" "$1" "$OT"; }
# exec, read and write name their errors in {"error": …}
expect_err() { # STATUS TEXT NAME
	if [[ $STATUS == "$1" && $(_json .error) == "$2" ]]; then ok "$3"; else fail "$3" "expected $1 {\"error\":\"$2\"}, got $STATUS $BODY"; fi
}
# How many processes of the container match a pattern (pgrep -c prints 0 when none).
count_procs() { docker exec "$CID" pgrep -c -f "$1"; }

# --- 9: a command that ignores SIGTERM, and one that leaves its session ----------------------
run '{"cmd":"echo ok"}'
expect_json .exitCode 0 'a plain command: 0'
run '{"cmd":"trap \"\" TERM; sleep 100","timeoutMs":2000}'
expect_json .exitCode 124 'past its limit, a command that ignores SIGTERM: 124'
expect_json .timedOut true 'and timedOut'
expect_json .stderr '' 'and nothing of the service in stderr'
check_cond 'it was killed 5 s after its limit' "(( $(_json .durationMs) >= 6500 && $(_json .durationMs) < 30000 ))"
run '{"cmd":"setsid sleep 301 & sleep 302","timeoutMs":1500}'
expect_json .exitCode 124 'a tree with a setsid child: 124'
check_eq 'the setsid child is dead with the tree' 0 "$(count_procs 'sleep 30[12]')"
run '{"cmd":"nohup sleep 303 >/dev/null 2>&1 & echo started"}'
expect_json .stdout started 'a command that ends by itself'
check_eq 'leaves its background job running' 1 "$(count_procs 'sleep 303')"
docker exec "$CID" pkill -f 'sleep 303'

# --- 1: the token is in no URL and no argument ------------------------------------------------
check_eq "the clone's remote URL holds no credential" "http://sandboxd.internal:${HOSTPORT##*:}/$R.git" \
	"$(docker exec -u "$BOX_USER" -w /workspace/repo "$CID" git config remote.origin.url)"
api POST "$SB/$ID/exec" '{"detach":true,"cmd":"for i in $(seq 400); do git ls-remote origin >/dev/null; done"}' "$OT"
expect_status 202 'a detached loop of git ls-remote'
seen=$(for _ in $(seq 30); do docker top "$CID" -o pid,args 2>/dev/null; sleep 0.1; done)
check 'the host saw git talk to the service' grep -q 'remote-http origin http://sandboxd.internal' <<<"$seen"
check 'and never a token in a process argument' eval '! grep -q "dst_" <<<"$seen"'

# --- 6: every token of ours typed into a command is masked in the audit row -------------------
DST=$(box_token_of "$CID")
check 'the test has the sandbox token' grep -q '^dst_' <<<"$DST"
api POST "/api/v3/repos/$R/job-tokens" '{"scope":"read"}' "$OT"
expect_status 201 'a job token'
DJT=$(_json .token)
api POST "/api/v3/repos/$R/git-urls" '{"scopes":["git:read"]}' "$OT"
expect_status 201 'a git URL'
JWT=$(_json .url | sed -n 's|.*://[^:]*:\([^@]*\)@.*|\1|p')
check 'the URL holds a JWT' grep -qE '^eyJ[^.]+\.eyJ[^.]+\.[A-Za-z0-9_-]+$' <<<"$JWT"
run "$(jq -nc --arg c "echo $DST $OT $DJT $JWT" '{cmd: $c}')"
expect_json .exitCode 0 'an exec that echoes four tokens'
check_eq 'its audit row stores every one masked' 'echo *** *** *** ***' \
	"$(sql "select details->>'cmd' from audit_log where sandbox_id = '$ID' and action = 'sandbox.exec' and details->>'cmd' like 'echo ***%' order by id desc limit 1")"
check_eq 'no audit row holds any of them' 0 \
	"$(sql "select count(*) from audit_log where details::text like '%$DST%' or details::text like '%$OT%' or details::text like '%$DJT%' or details::text like '%$JWT%'")"

# --- 7: a detached exec's output read from every offset across the secret -------------------
api POST "$SB/$ID/exec" "$(jq -nc --arg c "$DEC; echo; echo after" '{detach: true, cmd: $c}')" "$OT"
expect_status 202 'a detached exec that prints the credential'
XID=$(_json .execId)
ended() { api GET "$SB/$ID/execs/$XID" "" "$OT"; [ "$(_json .state)" = exited ]; }
check 'it ends' wait_until 20 ended
RAW=$(docker exec -u "$BOX_USER" -w /workspace/repo "$CID" sh -c "$DEC")
PRE=${RAW%%dst_*}
TS=${#PRE}           # where the token starts in the output
TE=$((TS + 46))      # and ends
check_eq 'offset 0 shows the line masked' "${PRE}***${RAW:$TE}" "$(_json .stdout | head -n 1)"
leaks=0 masked=0
for ((o = TS - 1; o <= TE; o++)); do
	api GET "$SB/$ID/execs/$XID?stdoutOffset=$o" "" "$OT"
	out=$(_json .stdout)
	if [[ $out == *"${DST:20:8}"* || $out == *"${DST: -8}"* || $out == *"${DST:1:8}"* ]]; then
		leaks=$((leaks + 1))
	fi
	if ((o > TS && o < TE)); then [[ $out == '***'* ]] && masked=$((masked + 1)); fi
done
check_eq 'no offset across the token returns any part of it' 0 "$leaks"
check_eq 'each offset inside it starts with ***' 45 "$masked"
api GET "$SB/$ID/execs/$XID?stdoutOffset=$TE" "" "$OT"
check_eq 'the offset just past the token shows what follows' '|after||' "$(_json .stdout | tr '\n' '|')"

# --- 10: odd ref names --------------------------------------------------------------------------
for b in -dash HEAD --track=x 'q"uote'; do
	git -C "$W" checkout -q -B "tmp$SFX" main
	echo "on $b" >"$W/which" && git -C "$W" add which && git -C "$W" commit -qm "$b"
	git -C "$W" push -q "http://t:$OT@$HOSTPORT/$R.git" "HEAD:refs/heads/$b"
done
check_eq 'the four branches are in the repository' 4 \
	"$(git --git-dir "$REPOS_DIR/$R.git" for-each-ref refs/heads/-dash refs/heads/HEAD 'refs/heads/--track=x' 'refs/heads/q"uote' | wc -l)"
# clone.sh writes the clone's configuration itself, quoted: an author whose name has quotes
# and a backslash (newlines the service takes out) keeps them.
ODD_NAME='Ann "Q" O\Brien; #1'
sql "update accounts set name = \$n\$$ODD_NAME\$n\$ where login = 'hx$SFX'" >/dev/null
try_ref() { # REF WANT_BRANCH WANT_FILE_TEXT
	api POST "$SB" "$(jq -nc --arg r "$1" '{ref: $r}')" "$OT"
	expect_status 201 "a sandbox on ref '$1'"
	local id cid
	id=$(_json .id)
	cid=$(docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$id")")
	check "its clone of '$1' is done" wait_until 60 eval "api GET '$SB/$id' '' '$OT'; [ \"\$(_json .clone.state)\" = done ]"
	check_eq "HEAD is on '$2'" "$2" "$(docker exec -u "$BOX_USER" -w /workspace/repo "$cid" git symbolic-ref -q --short HEAD)"
	check_eq "the work tree holds '$1''s files" "$3" "$(docker exec -w /workspace/repo "$cid" sh -c 'cat which 2>/dev/null || echo none; cat x')"
	check_eq "its upstream is origin/$2" "origin/$2" \
		"$(docker exec -u "$BOX_USER" -w /workspace/repo "$cid" git rev-parse --abbrev-ref '@{upstream}')"
	# git clone already gives the remote's default branch an upstream: one, not two (a
	# plain `git push` refuses a branch with two).
	check_eq "'$2' has exactly one upstream" "refs/heads/$2" \
		"$(docker exec -u "$BOX_USER" -w /workspace/repo "$cid" git config --get-all "branch.$2.merge")"
	check_eq "the author's name, quotes and backslash kept" "$ODD_NAME" \
		"$(docker exec -u "$BOX_USER" -w /workspace/repo "$cid" git config user.name)"
	api POST "$SB/$id/close" '' "$OT"
}
try_ref -dash -dash $'on -dash\nx'
try_ref --track=x --track=x $'on --track=x\nx'
try_ref 'q"uote' 'q"uote' $'on q"uote\nx'
try_ref refs/heads/-dash -dash $'on -dash\nx'
try_ref HEAD main $'none\nx'
# A commit whose tree git refuses to check out (a .git directory in it), put in place with
# plumbing: the clone says failed and why.
BARE=$REPOS_DIR/$R.git
blob=$(echo evil | git --git-dir "$BARE" hash-object -w --stdin)
sub=$(printf '100644 blob %s\tconfig\n' "$blob" | git --git-dir "$BARE" mktree)
top=$(printf '040000 tree %s\t.git\n' "$sub" | git --git-dir "$BARE" mktree)
bad=$(git --git-dir "$BARE" commit-tree -m bad "$top")
git --git-dir "$BARE" update-ref refs/heads/badtree "$bad"
api POST "$SB" '{"ref":"badtree"}' "$OT"
expect_status 201 'a sandbox on a ref that cannot be checked out'
BID=$(_json .id)
check 'its clone fails' wait_until 60 eval "api GET '$SB/$BID' '' '$OT'; [ \"\$(_json .clone.state)\" = failed ]"
expect_json_match .clone.error 'Could not reset index|invalid path' "and says why, in git's words"
CERR=$(_json .clone.error)
api POST "$SB/$BID/exec" '{"cmd":"true"}' "$OT"
expect_err 409 "clone failed: $CERR" 'an exec on it: 409 clone failed, with the reason'
api POST "$SB/$BID/close" '' "$OT"

# --- 11: smaller ones -------------------------------------------------------------------------
api POST "$SB/$ID/exec" '{"cmd":"true","env":{"A\u0000B=C":"x"}}' "$OT"
expect_error 400 "field 'env' has a name inside it that contains a NUL character" 'an env name with a NUL: 400 naming env'
api POST "$SB/$ID/exec" '{"cmd":"printf %s \"$AB\"","env":{"AB":"x"}}' "$OT"
expect_json .stdout x 'a plain env name still works'
LONG=$(printf 'n%.0s' $(seq 256))
api POST "$SB/$ID/write" "$(jq -nc --arg p "$LONG" '{path: $p, content: "eA=="}')" "$OT"
expect_err 400 "field 'path' has a component longer than 255 bytes" 'a 256-byte path component: 400 naming the path'
api POST "$SB/$ID/write" "$(jq -nc --arg p "${LONG:1}" '{path: $p, content: "eA=="}')" "$OT"
expect_status 200 'a 255-byte one is written'

# --- 11: the file API acts as the exec's user ----------------------------------------------------
if [[ $BOX_UID == 0 ]]; then
	# Root inside (an engine that remaps it, t_root_inside): what the exec's root may, the
	# file API may; the refusals of the fallback user are t_root_inside's second stack's.
	api POST "$SB/$ID/read" '{"path":"/etc/shadow"}' "$OT"
	expect_status 200 "reading /etc/shadow: 200, as for the exec's user (root inside)"
	api POST "$SB/$ID/write" '{"path":"/etc/newfile","content":"eA=="}' "$OT"
	expect_status 200 'creating a file in /etc: 200 (root inside)'
	check_eq 'it is there, root'"'"'s' '0:0' "$(docker exec "$CID" stat -c %u:%g /etc/newfile)"
else
	api POST "$SB/$ID/read" '{"path":"/etc/shadow"}' "$OT"
	expect_err 403 'cannot read /etc/shadow: permission denied' "reading /etc/shadow: 403, as for the exec's user"
	api POST "$SB/$ID/write" '{"path":"/etc/passwd","content":"eA=="}' "$OT"
	expect_err 403 'cannot write /etc/passwd: permission denied' 'writing /etc/passwd: 403'
	api POST "$SB/$ID/write" '{"path":"/etc/newfile","content":"eA=="}' "$OT"
	expect_err 403 'cannot write /etc/newfile: permission denied' 'creating a file in /etc: 403'
	check_eq 'nothing was created there' no "$(docker exec "$CID" sh -c 'test -e /etc/newfile && echo yes || echo no')"
fi
check 'and /etc/passwd is as it was' docker exec "$CID" grep -q '^root:x:0:0:' /etc/passwd
api POST "$SB/$ID/write" '{"path":"own/deep/f.txt","content":"aGVsbG8=","mode":416}' "$OT"
expect_status 200 'a file of its own is written (parents made)'
check_eq "it is the exec user's, with its mode" "$BOX_USER 640" \
	"$(docker exec "$CID" stat -c '%u:%g %a' /workspace/repo/own/deep/f.txt)"
api POST "$SB/$ID/read" '{"path":"own/deep/f.txt"}' "$OT"
expect_json .content aGVsbG8= 'and reads back'
docker exec -u "$BOX_USER" "$CID" sh -c 'echo secret > /workspace/repo/own/locked && chmod 000 /workspace/repo/own/locked'
api POST "$SB/$ID/read" '{"path":"own/locked"}' "$OT"
if [[ $BOX_UID == 0 ]]; then
	expect_json .content c2VjcmV0Cg== "a file made unreadable (mode 000): root reads it, as its exec would"
else
	expect_err 403 'cannot read own/locked: permission denied' "a file its user made unreadable: 403"
fi
# As root: the sandbox's user cannot list it (that is the point).
check_eq 'nothing is left in the staging folder' 0 \
	"$(docker exec -u 0 "$CID" sh -c 'test -d /.sandboxd-stage && find /.sandboxd-stage -mindepth 1 | wc -l')"

# --- 13: an exec racing a close -------------------------------------------------------------
api POST "$SB" '{}' "$OT"
expect_status 201 'a sandbox to close under an exec'
RID=$(_json .id)
RCID=$(docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$RID")")
check 'its clone is done' wait_until 60 eval "api GET '$SB/$RID' '' '$OT'; [ \"\$(_json .clone.state)\" = done ]"
curl -s -o "$_T/race.body" -w '%{http_code}' --max-time 60 -H "Authorization: Bearer $OT" \
	-H 'Content-Type: application/json' -d '{"cmd":"sleep 20"}' \
	"$SANDBOXD_URL$SB/$RID/exec" >"$_T/race.status" 2>/dev/null &
RACER=$!
check 'the exec runs' wait_until 20 eval '[ "$(docker exec "$RCID" pgrep -c -f "^sleep 20$")" = 1 ]'
api POST "$SB/$RID/close" '' "$OT"
expect_status 204 'the sandbox is closed under it'
wait "$RACER"
LAST_REQ="POST $SB/$RID/exec (closed while it ran)"
STATUS=$(cat "$_T/race.status") BODY=$(cat "$_T/race.body")
expect_error 410 'sandbox is closed' 'the exec answers 410 sandbox is closed, no engine text'

# --- masking does not take the sandbox's word for its token ---------------------------------------
# Its user rewrites the clone's config before any exec (no worker has seen the token yet):
# the token is still masked, from its sealed copy in the sandbox's row (sql/023).
api POST "$SB" '{}' "$OT"
expect_status 201 'a sandbox whose config is rewritten'
MID=$(_json .id)
AT_EXIT+=("api POST '$SB/$MID/close' '' '$OT' >/dev/null 2>&1")
MCID=$(docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$MID")")
check 'its clone is done' wait_until 60 eval "api GET '$SB/$MID' '' '$OT'; [ \"\$(_json .clone.state)\" = done ]"
MTOK=$(docker exec -u "$BOX_USER" -w /workspace/repo "$MCID" sh -c "$DEC")
MTOK=dst_${MTOK#*dst_}
check_eq 'its token is read from its config (by the test)' 46 "${#MTOK}"
docker exec -u "$BOX_USER" -w /workspace/repo "$MCID" sh -c 'git config --unset-all "$(git config --name-only --get-regexp extraheader)"'
check_eq 'the config holds it no more' '' \
	"$(docker exec -u "$BOX_USER" -w /workspace/repo "$MCID" git config --get-regexp extraheader)"
check_eq 'its row holds it sealed, not as text' '1|0' \
	"$(sql "select count(*), count(*) filter (where token_sealed like '%dst_%') from sandboxes where id = '$MID' and length(token_sealed) > 100")"
api POST "$SB/$MID/exec" "$(jq -nc --arg t "$MTOK" '{cmd: ("echo " + $t + "; echo " + $t + " | base64")}')" "$OT"
check_eq 'printed as is and in base64, it comes out masked' $'***\n***' "$(_json .stdout | head -c 7)"
check_eq 'and nothing of it is in the answer' 0 "$(grep -c "${MTOK:4:20}" <<<"$BODY")"
api POST "$SB/$MID/close" '' "$OT"
expect_status 204 'closed'
check_eq 'its sealed token is gone from the row' '' "$(sql "select coalesce(token_sealed, '') from sandboxes where id = '$MID'")"

api POST "$SB/$ID/close" '' "$OT"
expect_status 204 'the sandbox is closed'
finish
