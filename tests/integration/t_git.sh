#!/usr/bin/env bash
# t_git.sh: git over smart HTTP with the stock git client through nginx and sandboxd:
# clone, fetch, push with each opaque token kind, anonymous reads, refusals, branch
# protection, push protection (secret scanning), and the audit rows of pushes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_guard.sh"

export GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=/bin/false
git config --global --get user.name >/dev/null 2>&1 || export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
HOSTPORT=${SANDBOXD_URL#http://}
url() { # TOKEN OWNER/NAME: an http URL with the token as Basic password ("-" for none)
	if [ "$1" = - ]; then printf 'http://%s/%s.git' "$HOSTPORT" "$2"; else printf 'http://t:%s@%s/%s.git' "$1" "$HOSTPORT" "$2"; fi
}
W=$_T/work
mkdir -p "$W"
g() { git -C "$W/$1" "${@:2}"; }
commit() { # DIR FILE CONTENT
	printf '%s\n' "$3" >"$W/$1/$2" && g "$1" add "$2" && g "$1" commit -qm "add $2"
}
fails() { ! "$@"; }
bare_ref() { git --git-dir "$REPOS_DIR/$1.git" rev-parse -q --verify "$2" 2>/dev/null; }
# gpush DIR ARGS…: git push in DIR, what it says on stderr in $_T/push.err (for refused_saying)
gpush() { g "$1" push "${@:2}" >/dev/null 2>"$_T/push.err"; }

O="git$SFX"
mk_user "$O" || exit 1
OT=$LAST_TOKEN
RD=$(mk_token "$O" read) || exit 1
R="$O/code"
api POST /api/v3/user/repos '{"name":"code","visibility":"private"}' "$OT"
expect_status 201 'private repository created'
P="$O/open"
api POST /api/v3/user/repos '{"name":"open","visibility":"public"}' "$OT"
expect_status 201 'public repository created'

# --- push, clone, fetch with a personal token ----------------------------------
git init -q -b main "$W/a"
commit a README "hello"
check 'personal write token pushes a new default branch' g a push -q "$(url "$OT" "$R")" main
check_eq 'the bare repository has main at the pushed commit' "$(g a rev-parse HEAD)" "$(bare_ref "$R" refs/heads/main)"
check 'personal token clones the private repository' git clone -q "$(url "$OT" "$R")" "$W/b"
check_eq 'the clone has the pushed file' hello "$(cat "$W/b/README" 2>/dev/null)"
check 'a read token clones too' git clone -q "$(url "$RD" "$R")" "$W/b2"
check 'shallow single-branch clone (protocol v2)' git -c protocol.version=2 clone -q --depth 1 --single-branch "$(url "$OT" "$R")" "$W/shallow"
check_eq 'the shallow clone has one commit' 1 "$(g shallow rev-list --count HEAD 2>/dev/null)"
check 'protocol v0 clone works' git -c protocol.version=0 clone -q "$(url "$OT" "$R")" "$W/v0"
commit a two "second"
g a push -q "$(url "$OT" "$R")" main
SHA=$(g a rev-parse HEAD~1)
check 'fetch of a reachable commit by SHA' g shallow fetch -q --depth 1 origin "$SHA"

# --- streaming: a chunked push, a gzip request body ---------------------------------
head -c 1500000 /dev/urandom >"$W/a/blob.bin"
g a add blob.bin && g a commit -qm blob
check 'a chunked push (http.postBuffer 64 KiB, no Content-Length)' g a -c http.postBuffer=65536 push -q "$(url "$OT" "$R")" main
check_eq 'it landed' "$(g a rev-parse HEAD)" "$(bare_ref "$R" refs/heads/main)"
TIP=$(g a rev-parse HEAD)
# An upload-pack request (protocol v0) compressed with gzip, as git sends large ones.
printf '0032want %s\n00000009done\n' "$TIP" | gzip -c >"$_T/req.gz"
curl -s -o "$_T/pack" -u "t:$OT" -H 'Content-Type: application/x-git-upload-pack-request' \
	-H 'Content-Encoding: gzip' --data-binary @"$_T/req.gz" "$SANDBOXD_URL/$R.git/git-upload-pack"
check 'a gzip request body is inflated: the answer carries a pack' grep -q PACK "$_T/pack"

# --- refusals --------------------------------------------------------------------
check 'anonymous clone of a private repository is refused' fails git clone -q "$(url - "$R")" "$W/anon" 2>/dev/null
STATUS=$(curl -s -o /dev/null -w '%{http_code}' "$SANDBOXD_URL/$R.git/info/refs?service=git-upload-pack")
check_eq 'anonymous info/refs of a private repository: 401' 401 "$STATUS"
CH=$(curl -s -D - -o /dev/null "$SANDBOXD_URL/$R.git/info/refs?service=git-upload-pack" | tr -d '\r' | grep -i '^www-authenticate:')
check_eq 'the 401 carries a Basic challenge' 'WWW-Authenticate: Basic realm="sandboxd"' "$CH"
STATUS=$(curl -s -o /dev/null -w '%{http_code}' "$SANDBOXD_URL/$O/nothere.git/info/refs?service=git-upload-pack")
check_eq 'anonymous info/refs of a missing repository: 401 too (nothing leaks)' 401 "$STATUS"
STATUS=$(curl -s -o /dev/null -w '%{http_code}' -u "t:dfy_notatoken" "$SANDBOXD_URL/$R.git/info/refs?service=git-upload-pack")
check_eq 'a bad token: 401' 401 "$STATUS"
commit a three "third"
MAIN_NOW=$(bare_ref "$R" refs/heads/main)
audit_mark
check 'a read token cannot push: git shows the 403' \
	refused_saying 'The requested URL returned error: 403' "$_T/push.err" gpush a -q "$(url "$RD" "$R")" main
check_eq 'main is unchanged' "$MAIN_NOW" "$(bare_ref "$R" refs/heads/main)"
check 'audited with why: this needs a token with write scope' \
	audited_since git.refs.push 403 error 'this needs a token with write scope' "$R"
STATUS=$(curl -s -o /dev/null -w '%{http_code}' -u "t:$RD" "$SANDBOXD_URL/$R.git/info/refs?service=git-receive-pack")
check_eq 'read token on receive-pack: 403' 403 "$STATUS"

# --- anonymous public clone ---------------------------------------------------
g a push -q "$(url "$OT" "$P")" main
check 'anonymous clone of a public repository' git clone -q "$(url - "$P")" "$W/pub"
audit_mark
# The 401 with its Basic challenge makes git ask for a user name, which nothing gives it here.
check 'anonymous push to a public repository is refused: git is asked to authenticate' \
	refused_saying "could not read Username for 'http://$HOSTPORT'" "$_T/push.err" gpush a -q "$(url - "$P")" main:other
check_eq 'no branch other' '' "$(bare_ref "$P" refs/heads/other)"
check 'audited: authentication required' audited_since auth.required 401 error 'authentication required' "$P"

# --- a job token -------------------------------------------------------------
api POST "/api/v3/repos/$R/job-tokens" '{"scope":"write"}' "$OT"
expect_status 201 'job token minted'
JOB=$(_json .token)
check 'a job token pushes to its repository' g a push -q "$(url "$JOB" "$R")" main:refs/heads/job
audit_mark
check 'a job token cannot push to another repository: git shows the 403' \
	refused_saying 'The requested URL returned error: 403' "$_T/push.err" gpush a -q "$(url "$JOB" "$P")" main:refs/heads/job
check_eq 'no branch job there' '' "$(bare_ref "$P" refs/heads/job)"
check 'audited with why: job tokens can only be used on their repository' \
	audited_since git.refs.push 403 error 'job tokens can only be used on their repository'

# --- archived ------------------------------------------------------------------
api PATCH "/api/v3/repos/$R" '{"archived":true}' "$OT"
expect_status 200 'repository archived'
OUT=$(g a push "$(url "$OT" "$R")" main:refs/heads/late 2>&1)
check 'an archived repository refuses pushes' [ -z "$(bare_ref "$R" refs/heads/late)" ]
STATUS=$(curl -s -o "$_T/arch" -w '%{http_code}' -u "t:$OT" "$SANDBOXD_URL/$R.git/info/refs?service=git-receive-pack")
check_eq 'archived receive-pack: 403' 403 "$STATUS"
check_eq 'with the archive text' 'repository is archived (read-only)' "$(jq -r .message "$_T/arch" 2>/dev/null)"
check 'an archived repository still clones' git clone -q "$(url "$OT" "$R")" "$W/arch"
api PATCH "/api/v3/repos/$R" '{"archived":false}' "$OT"

# --- branch protection ---------------------------------------------------------
MAIN=$(bare_ref "$R" refs/heads/main)
g a reset -q --hard HEAD~2
commit a forced "rewrite"
OUT=$(g a push -f "$(url "$OT" "$R")" main 2>&1)
check_eq 'force-push to the default branch is refused; main unchanged' "$MAIN" "$(bare_ref "$R" refs/heads/main)"
check 'the client shows why' grep -q 'default branch takes no force-push' <<<"$OUT"
OUT=$(g a push "$(url "$OT" "$R")" :main 2>&1)
check_eq 'deleting the default branch is refused' "$MAIN" "$(bare_ref "$R" refs/heads/main)"
check 'a force-push to another branch is allowed' g a push -q -f "$(url "$OT" "$R")" main:refs/heads/job

AG="agent$SFX"
mk_user "$AG" --kind agent || exit 1
AGT=$LAST_TOKEN
api PUT "/api/v3/repos/$R/collaborators/$AG" '{"role":"write"}' "$OT"
git clone -q "$(url "$AGT" "$R")" "$W/ag"
commit ag agent "by an agent"
OUT=$(g ag push "$(url "$AGT" "$R")" main 2>&1)
check_eq "an agent's fast-forward of the default branch is refused" "$MAIN" "$(bare_ref "$R" refs/heads/main)"
check 'with its reason' grep -q 'agents may not update the default branch' <<<"$OUT"
check 'an agent pushes a branch of its own' g ag push -q "$(url "$AGT" "$R")" main:refs/heads/agent-work
git clone -q "$(url "$OT" "$R")" "$W/u"
commit u user "by the owner"
check "a user's fast-forward of the default branch is accepted" g u push -q "$(url "$OT" "$R")" main
check_eq 'main moved' "$(g u rev-parse HEAD)" "$(bare_ref "$R" refs/heads/main)"

# --- push protection -----------------------------------------------------------
HEAD_BEFORE=$(bare_ref "$R" refs/heads/main)
AWS="AKIA$(printf 'Q3EGRLW7PLXNZK4T')"
commit u config.py "AWS_KEY = \"$AWS\""
OUT=$(g u push "$(url "$OT" "$R")" main:refs/heads/with-aws 2>&1)
check 'a push adding an AWS access key id is refused' [ -z "$(bare_ref "$R" refs/heads/with-aws)" ]
check 'naming the file' grep -q 'config.py' <<<"$OUT"
check 'and the commit' grep -q "$(g u rev-parse --short=12 HEAD)" <<<"$OUT"
check 'never echoing the secret' fails grep -q "$AWS" <<<"$OUT"
g u reset -q --hard HEAD~1
# Split so that this file itself does not look like a key to a scanner.
printf -- '-----BEGIN OPENSSH %s-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH %s-----\n' 'PRIVATE KEY' 'PRIVATE KEY' >"$W/u/id_ed25519"
g u add id_ed25519 && g u commit -qm key
OUT=$(g u push "$(url "$OT" "$R")" main 2>&1)
check_eq 'a push adding a private key is refused; nothing changes' "$HEAD_BEFORE" "$(bare_ref "$R" refs/heads/main)"
check 'naming the file' grep -q 'id_ed25519' <<<"$OUT"
g u reset -q --hard HEAD~1
commit u token.txt "$OT"
OUT=$(g u push "$(url "$OT" "$R")" main:refs/heads/with-token 2>&1)
check 'a push adding one of our own tokens is refused' [ -z "$(bare_ref "$R" refs/heads/with-token)" ]
check 'by the hook, which says why: the token, its file, line and commit' grep -qF \
	"sandboxd: push refused: sandboxd token found in token.txt (line 1) in commit $(g u rev-parse --short=12 HEAD); remove it from the history and push again" <<<"$OUT"
check 'and git shows the ref rejected' grep -qF '! [remote rejected] main -> with-token (pre-receive hook declined)' <<<"$OUT"
check 'the token is not echoed' fails grep -qF "$OT" <<<"$OUT"
g u reset -q --hard HEAD~1

# --- audit -----------------------------------------------------------------------
check_eq 'accepted pushes are audited per ref' t "$(sql "select count(*) > 0 from audit_log where action = 'git.push.ref' and repository = '$R' and details->>'result' = 'accepted' and details->>'ref' = 'refs/heads/main'")"
check_eq 'refused refs are audited with the reason' t "$(sql "select count(*) > 0 from audit_log where action = 'git.push.ref' and repository = '$R' and status = 403 and details->>'reason' like '%agents may not%'")"
check_eq 'denied clones are audited' t "$(sql "select count(*) > 0 from audit_log where action in ('auth.denied', 'auth.required', 'git.refs.fetch') and details->>'path' like '/$R.git/%' and status = 401")"
check_eq 'no audit row holds a token' 0 "$(sql "select count(*) from audit_log where details::text like '%$OT%' or details::text like '%$JOB%'")"
finish
