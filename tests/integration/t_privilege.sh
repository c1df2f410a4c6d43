#!/usr/bin/env bash
# t_privilege.sh: least privilege (issue 7). sandboxd's master and workers run as the
# service's own user with no capability, its signing key is that user's alone (and
# sandboxd refuses one that is not), what it writes is its own, and nginx answers 429
# past the per-address rate limit (tuned small for a moment through local-stack.sh,
# then put back, so that no other test meets it).
. "$(dirname "$0")/lib.sh"

: "${SANDBOXD_PID_FILE:?local.env has no SANDBOXD_PID_FILE}"
SVC=${SANDBOXD_USER:-sandboxd}
KEY=${SANDBOXD_SIGNING_KEY_FILE:-$SANDBOXD_VAR/keys/signing.pem}

if [ "$(id -u)" -ne 0 ]; then
	# Not root: the stack runs as the caller; there is nothing to drop.
	skip 'not run as root: privilege checks'
	finish
fi

SVC_UID=$(id -u "$SVC" 2>/dev/null)
check "the service user $SVC exists" [ -n "$SVC_UID" ]
check "$SVC is a system user (uid below 1000)" [ "${SVC_UID:-0}" -gt 0 -a "${SVC_UID:-1000}" -lt 1000 ]
check "$SVC is in group docker (the Engine API socket)" grep -qx docker < <(id -nG "$SVC" | tr ' ' '\n')
check "$SVC is not in group root or sudo" eval "! id -nG '$SVC' | tr ' ' '\n' | grep -qxE 'root|sudo|adm'"

status_field() { awk -v k="$2:" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "/proc/$1/status" 2>/dev/null; }
# Real, effective, saved and filesystem uids are all the service's.
uids_are() { [ "$(status_field "$1" Uid | tr -s ' \t' ' ')" = "$2 $2 $2 $2" ]; }

M=$(cat "$SANDBOXD_PID_FILE" 2>/dev/null)
check 'the master runs' [ -n "$M" ] && kill -0 "$M" 2>/dev/null
check_eq 'the master is sandboxd' sandboxd "$(cat "/proc/$M/comm" 2>/dev/null)"
check "the master runs as $SVC (every uid), not root" uids_are "$M" "$SVC_UID"
check "the master's groups hold docker's" grep -qw "$(getent group docker | cut -d: -f3)" <<<"$(status_field "$M" Groups)"
check_eq 'the master has no effective capability' 0000000000000000 "$(status_field "$M" CapEff)"
check_eq 'the master has an empty bounding set' 0000000000000000 "$(status_field "$M" CapBnd)"
check_eq 'the master runs with no_new_privs' 1 "$(status_field "$M" NoNewPrivs)"

KIDS=$(pgrep -P "$M" 2>/dev/null | sort -n)
check 'the master has workers' [ -n "$KIDS" ]
nw=0
for p in $KIDS; do
	comm=$(cat "/proc/$p/comm" 2>/dev/null) || continue   # a worker that just ended
	nw=$((nw + 1))
	check "$comm $p runs as $SVC" uids_are "$p" "$SVC_UID"
	check_eq "$comm $p: CapEff 0" 0000000000000000 "$(status_field "$p" CapEff)"
	check_eq "$comm $p: CapPrm 0" 0000000000000000 "$(status_field "$p" CapPrm)"
	check_eq "$comm $p: CapBnd 0" 0000000000000000 "$(status_field "$p" CapBnd)"
done
check "every worker and the reaper checked ($nw)" [ "$nw" -ge 2 ]

# --- what it owns ---------------------------------------------------------------------------
owner_mode() { stat -c '%U %a' "$1" 2>/dev/null; }
check_eq 'the signing key is 0600 and owned by the service' "$SVC 600" "$(owner_mode "$KEY")"
check_eq 'the repositories folder is owned by the service' "$SVC" "$(stat -c %U "$REPOS_DIR")"
check 'the repositories folder is closed to others' [ $((0$(stat -c %a "$REPOS_DIR") & 07)) -eq 0 ]
SOCK=$(dirname "$SANDBOXD_PID_FILE")/fcgi.sock
check_eq 'the FastCGI socket: the service, group www-data, 0660' "$SVC www-data 660" "$(stat -c '%U %G %a' "$SOCK" 2>/dev/null)"

O="pv$SFX"
mk_user "$O" || exit 1
OT=$LAST_TOKEN
api POST /api/v3/user/repos '{"name":"viaapi"}' "$OT"
expect_status 201 'a repository through the API'
check_eq 'a repository made by the service is its own' "$SVC" "$(stat -c %U "$REPOS_DIR/$O/viaapi.git" 2>/dev/null)"
ctl repo create "$O/viactl"
check_eq 'sandboxctl repo create run as root: exit 0' 0 "$CTL_RC"
check_eq 'a repository made by sandboxctl as root belongs to the service too' "$SVC" \
	"$(stat -c %U "$REPOS_DIR/$O/viactl.git/HEAD" 2>/dev/null)"
check 'and nothing in it is root'"'"'s' test -z "$(find "$REPOS_DIR/$O/viactl.git" ! -user "$SVC" -print -quit)"
# The service can write to it: a push runs the hook (as the service) and updates the ref.
export GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=/bin/false
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
git init -q -b main "$_T/w" && echo x >"$_T/w/f" && git -C "$_T/w" add f && git -C "$_T/w" commit -qm x
check 'a push into the sandboxctl-made repository works (hook and database as the service)' \
	git -C "$_T/w" push -q "http://t:$OT@${SANDBOXD_URL#http://}/$O/viactl.git" main
check_eq 'the hook audited the push' 1 "$(sql "SELECT count(*) FROM audit_log WHERE action = 'git.push.ref' AND repository = '$O/viactl'")"

# --- the signing key file ---------------------------------------------------------------------
api POST "/api/v3/repos/$O/viaapi/git-urls" '{"scopes":["git:read"]}' "$OT"
expect_status 201 'a git URL is minted'
JWT=$(_json .url | sed 's/.*x-token:\([^@]*\)@.*/\1/')
KID=$(cut -d. -f1 <<<"$JWT" | tr '_-' '/+' | { b=$(cat); while (( ${#b} % 4 )); do b+='='; done; base64 -d <<<"$b"; } 2>/dev/null | jq -r .kid)
check 'its kid is set' [ -n "$KID" -a "$KID" != null ]
check_eq 'it is signed by the key file, not by a key kept in the database' 0 \
	"$(sql "SELECT count(*) FROM signing_keys WHERE kid = '$KID'")"
check_eq 'and it is accepted' 200 "$(curl -s -o /dev/null -w '%{http_code}' -u "x:$JWT" \
	"$SANDBOXD_URL/$O/viaapi.git/info/refs?service=git-upload-pack")"

# sandboxd refuses to start with a key that others may read, or that is not its own. It
# stops before it binds anything: the running stack is not touched.
start_with_key() { # KEYFILE: sandboxd's exit code and message, as the service user
	timeout -k 5 10 env -i PATH=/usr/bin:/bin SANDBOXD_DATABASE_URL="$SANDBOXD_DATABASE_URL" \
		SANDBOXD_SOCKET="$_T/never.sock" SANDBOXD_SIGNING_KEY_FILE="$1" \
		setpriv --reuid="$SVC" --regid="$(id -g "$SVC")" --init-groups --no-new-privs -- \
		"$SANDBOXD_VAR/bin/sandboxd" 2>&1 </dev/null
}
chmod 0711 "$_T"   # the service's user must reach the files below
install -d -m 0755 "$_T/keys"
install -m 0644 -o "$SVC" "$KEY" "$_T/keys/open.pem"
out=$(start_with_key "$_T/keys/open.pem"); rc=$?
check_eq 'a key readable by others: sandboxd exits 2' 2 "$rc"
check 'naming the setting and the mode' grep -q 'SANDBOXD_SIGNING_KEY_FILE.*readable by its owner only (mode 0644' <<<"$out"
# Root's, and readable by the service through its group: only the ownership check can refuse
# it (a key the service cannot open fails earlier, with "cannot open", for another reason).
install -m 0640 -o root -g "$(id -g "$SVC")" "$KEY" "$_T/keys/root.pem"
out=$(start_with_key "$_T/keys/root.pem"); rc=$?
check_eq "a key of another user (root's): sandboxd exits 2" 2 "$rc"
check 'naming the file and its owner' grep -qF \
	"'$_T/keys/root.pem' must be owned by the service's user (uid $SVC_UID), not uid 0" <<<"$out"
rm -rf "$_T/keys"

# Nor without both git hooks: git would take pushes unchecked, or audit every ref as failed.
install -d -m 0755 "$_T/hooks"
install -m 0755 "$SANDBOXD_VAR/bin/hooks/pre-receive" "$_T/hooks/pre-receive"
out=$(timeout -k 5 10 env -i PATH=/usr/bin:/bin SANDBOXD_DATABASE_URL="$SANDBOXD_DATABASE_URL" \
	SANDBOXD_SOCKET="$_T/never.sock" SANDBOXD_HOOKS_DIR="$_T/hooks" \
	setpriv --reuid="$SVC" --regid="$(id -g "$SVC")" --init-groups --no-new-privs -- \
	"$SANDBOXD_VAR/bin/sandboxd" 2>&1 </dev/null); rc=$?
check_eq 'no post-receive in SANDBOXD_HOOKS_DIR: sandboxd exits 2' 2 "$rc"
check 'naming the hook' grep -q "SANDBOXD_HOOKS_DIR: $_T/hooks/post-receive is not an executable file" <<<"$out"
check 'and it bound nothing' test ! -e "$_T/never.sock"
rm -rf "$_T/hooks"

# --- nginx's rate limit ------------------------------------------------------------------------
# The stack's limit is generous; for this check local-stack.sh re-renders nginx's
# configuration with 1 request a second and a burst of 3 (nginx reloads; sandboxd is not
# restarted), and puts the stack's own values back afterwards, also when this test fails.
NGX_CONF=$SANDBOXD_VAR/nginx/nginx.conf
restore_rate() { stack_up || tail -n 20 "$_T/up.log"; }
AT_EXIT+=(restore_rate)
M_BEFORE=$M
check 'local-stack.sh up with SANDBOXD_RATE_LIMIT=1r/s SANDBOXD_RATE_BURST=3' \
	stack_up SANDBOXD_RATE_LIMIT=1r/s SANDBOXD_RATE_BURST=3
check 'nginx runs with that rate' grep -q 'limit_req_zone $binary_remote_addr zone=sandboxd_api:10m rate=1r/s;' "$NGX_CONF"
check_eq 'sandboxd was not restarted for it' "$M_BEFORE" "$(cat "$SANDBOXD_PID_FILE")"
# 30 requests at once: at most 3 + 1 a second can pass.
for i in $(seq 30); do
	curl -s -o "$_T/rl.$i" -w '%{http_code}\n' --max-time 20 "$SANDBOXD_URL/healthz" >"$_T/rl.$i.code" &
done
wait
n429=$(cat "$_T"/rl.*.code | grep -c '^429$')
n200=$(cat "$_T"/rl.*.code | grep -c '^200$')
check "past the burst nginx answers 429 ($n429 of 30; $n200 were 200)" [ "$n429" -ge 20 ]
check 'some got through' [ "$n200" -ge 1 ]
f429=$(grep -l '^429$' "$_T"/rl.*.code | head -n 1)
BODY=$(cat "${f429%.code}" 2>/dev/null); STATUS=429; LAST_REQ='GET /healthz (30 at once)'
expect_body '{"message": "too many requests"}' 'the 429 has a JSON body'
check 'the rejections are in nginx error log at warn' grep -q '\[warn\].*limiting requests' "$SANDBOXD_VAR/log/nginx-error.log"

check "the stack's own limit is back" stack_up
AT_EXIT=("${AT_EXIT[@]/restore_rate/}")
check 'nginx no longer has the 1r/s rate' eval "! grep -q 'rate=1r/s' '$NGX_CONF'"
codes=''
for i in $(seq 10); do codes+=$(curl -s -o /dev/null -w '%{http_code} ' "$SANDBOXD_URL/healthz"); done
check_eq 'ten requests in a row: all 200 again' "$(printf '200 %.0s' $(seq 10))" "$codes"

finish
