#!/usr/bin/env bash
# t_sandboxctl.sh: the operator's command line: --help, exit codes
# (0 ok, 1 runtime, 2 usage, 3 not found, 4 conflict), and that what it does is
# what the REST API then sees.
. "$(dirname "$0")/lib.sh"

exit_is() { # WANT LABEL CMD-ARGS…
	local want=$1 label=$2
	shift 2
	ctl "$@"
	if [[ $CTL_RC == "$want" ]]; then
		ok "$label: exit $want"
	else
		LAST_REQ="sandboxctl $*"
		STATUS="exit $CTL_RC"
		BODY="stdout: ${CTL_OUT:0:200} stderr: ${CTL_ERR:0:300}"
		fail "$label: exit $want" "got exit $CTL_RC"
	fi
}

# --- --help ---------------------------------------------------------------------------
for cmd in "" "migrate" "account create" "account disable" "account enable" "token create" \
	"token revoke" "repo create" "collaborator set"; do
	# shellcheck disable=SC2086
	exit_is 0 "sandboxctl $cmd --help" $cmd --help
	check_cond "sandboxctl $cmd --help prints a usage text" '[[ -n $CTL_OUT$CTL_ERR ]]'
done
# A command's help names that command on each of its lines, and nothing else (the word
# "key" in the settings' text was once printed as a line of `key --help`).
for cmd in key git-url engine audit; do
	exit_is 0 "sandboxctl $cmd --help" $cmd --help
	check_cond "sandboxctl $cmd --help: every usage line is a line of the command list" \
		'[[ $(sed -n "/^usage:/,/^Exit codes/p" <<<"$CTL_OUT" | sed "1d;\$d;s/^  sandboxctl /  /" |
		      grep -vcxF -f <("$SANDBOXCTL" --help)) == 0 ]]'
	check_cond "sandboxctl $cmd --help: at least one usage line" \
		'grep -q "^  sandboxctl $cmd " <<<"$CTL_OUT"'
done
exit_is 2 'no arguments' 
exit_is 2 'unknown command' frobnicate
exit_is 2 'unknown subcommand' account frobnicate
exit_is 2 'unknown option' account create "opt$SFX" --no-such-option

# --- migrate is idempotent (run as the schema owner when the stack has one) -------------------
OWNER_URL=${SANDBOXD_OWNER_DATABASE_URL:-$SANDBOXD_DATABASE_URL}
SANDBOXD_DATABASE_URL=$OWNER_URL exit_is 0 'migrate (again, on a migrated database)' migrate
SANDBOXD_DATABASE_URL=$OWNER_URL exit_is 0 'migrate a third time' migrate
api GET /api/v3/user
expect_status 200 'the service works after the extra migrations'

# --- accounts ------------------------------------------------------------------------------
L="ctl$SFX"
exit_is 0 'account create' account create "$L" --name "Ctl User" --email "ctl$SFX@example.com"
exit_is 4 'account create of an existing login' account create "$L"
exit_is 0 'account create --kind agent' account create "ctlbot$SFX" --kind agent
exit_is 0 'account create --site-admin' account create "ctladm$SFX" --site-admin
exit_is 2 'account create --kind robot' account create "ctlx$SFX" --kind robot
exit_is 2 'account create with a bad login (a/b)' account create "a/b$SFX"
exit_is 2 'account create with a bad login (..)' account create ..
exit_is 2 'account create with no login' account create
check_eq 'refused creates made no account' 0 "$(sql "select count(*) from accounts where login in ('ctlx$SFX', 'a/b$SFX', '..')")"
exit_is 3 'account disable of an unknown login' account disable "nosuch$SFX"
exit_is 3 'account enable of an unknown login' account enable "nosuch$SFX"

api POST "/api/v3/admin/accounts/ctlbot$SFX/tokens" '{"scope":"read"}'
BOT=$(_json .token)
api GET /api/v3/user "" "$BOT"
expect_json .kind agent 'account create --kind agent makes an agent'
api POST "/api/v3/admin/accounts/ctladm$SFX/tokens" '{"scope":"read"}'
ADM=$(_json .token)
api GET /api/v3/user "" "$ADM"
expect_json .site_admin true 'account create --site-admin makes a site admin'

# --- tokens ----------------------------------------------------------------------------------
exit_is 0 'token create' token create "$L"
TOK=$CTL_OUT
check_eq 'token create prints exactly one line on stdout' 1 "$(printf '%s\n' "$CTL_OUT" | wc -l)"
check_cond 'token create prints a dfy_ token' "[[ \$TOK =~ ^dfy_[0-9A-Za-z]{42}\$ ]]"
check_cond 'token create prints the id on stderr' "[[ \$CTL_ERR =~ [0-9]+ ]]"
TOK_ID=$(sed -n 's/.*\<id[^0-9]*\([0-9][0-9]*\).*/\1/p' <<<"$CTL_ERR" | head -n 1)
api GET /api/v3/user "" "$TOK"
expect_json .login "$L" 'the printed token works'
exit_is 0 'token create --scope read --expires-in 3600 --note' token create "$L" --scope read --expires-in 3600 --note 'ci run'
RT=$CTL_OUT
api POST /api/v3/user/repos "{\"name\":\"nope$SFX\"}" "$RT"
expect_error 403 'this needs a token with write scope' 'token create --scope read makes a read token'
exit_is 3 'token create for an unknown login' token create "nosuch$SFX"
exit_is 2 'token create --scope admin' token create "$L" --scope admin
exit_is 2 'token create --expires-in abc' token create "$L" --expires-in abc
exit_is 2 'token create --expires-in 10 (below 60)' token create "$L" --expires-in 10
exit_is 0 'token revoke' token revoke "$TOK_ID"
api GET /api/v3/user "" "$TOK"
expect_error 401 'bad credentials' 'the revoked token is refused'
exit_is 3 'token revoke of an unknown id' token revoke 999999999
exit_is 2 'token revoke with no id' token revoke

# --- repositories ---------------------------------------------------------------------------
R="ctlrepo$SFX"
exit_is 0 'repo create' repo create "$L/$R"
check "repo create makes the bare repository on disk" test -d "$REPOS_DIR/$L/$R.git"
api GET "/api/v3/repos/$L/$R"
expect_status 200 'the API sees the repository from sandboxctl'
DEF=$(_json .default_branch)
check_eq 'HEAD points at the default branch' "refs/heads/$DEF" "$(git --git-dir "$REPOS_DIR/$L/$R.git" symbolic-ref HEAD 2>/dev/null)"
exit_is 0 'repo create --visibility public --default-branch trunk' repo create "$L/pub$R" --visibility public --default-branch trunk
api GET "/api/v3/repos/$L/pub$R" "" -
expect_status 200 'a public repository from sandboxctl is readable without a token'
expect_json .default_branch trunk '--default-branch trunk'
check_eq 'HEAD is refs/heads/trunk' refs/heads/trunk "$(git --git-dir "$REPOS_DIR/$L/pub$R.git" symbolic-ref HEAD 2>/dev/null)"
exit_is 4 'repo create of an existing repository' repo create "$L/$R"
exit_is 3 'repo create for an unknown owner' repo create "nosuch$SFX/$R"
check 'no directory for the unknown owner' test ! -e "$REPOS_DIR/nosuch$SFX/$R.git"
exit_is 2 'repo create with a bad name (..)' repo create "$L/.."
exit_is 2 'repo create with no slash' repo create "$L"
exit_is 2 'repo create with a nested name' repo create "$L/a/b"
exit_is 2 'repo create --visibility secret' repo create "$L/v$R" --visibility secret
check 'refused repo creates left nothing on disk' test ! -e "$REPOS_DIR/$L/v$R.git"

# --- collaborators ----------------------------------------------------------------------------
C="ctlc$SFX"
exit_is 0 'account create (collaborator)' account create "$C"
CT=$(mk_token "$C" read)
api GET "/api/v3/repos/$L/$R" "" "$CT"
expect_error 404 'repository not found' 'before collaborator set: 404'
exit_is 0 'collaborator set read' collaborator set "$L/$R" "$C" read
api GET "/api/v3/repos/$L/$R" "" "$CT"
expect_status 200 'after collaborator set read: 200'
exit_is 0 'collaborator set none' collaborator set "$L/$R" "$C" none
api GET "/api/v3/repos/$L/$R" "" "$CT"
expect_error 404 'repository not found' 'after collaborator set none: 404'
exit_is 3 'collaborator set for an unknown login' collaborator set "$L/$R" "nosuch$SFX" read
exit_is 3 'collaborator set on an unknown repository' collaborator set "$L/nosuch$SFX" "$C" read
exit_is 2 'collaborator set with a bad role' collaborator set "$L/$R" "$C" owner
exit_is 2 'collaborator set with no role' collaborator set "$L/$R" "$C"

# --- disable / enable --------------------------------------------------------------------------
WT=$(mk_token "$L" write)
exit_is 0 'account disable' account disable "$L"
api GET /api/v3/user "" "$WT"
expect_error 401 'bad credentials' 'account disable: the token is refused at once'
exit_is 0 'account disable again' account disable "$L"
exit_is 0 'account enable' account enable "$L"
api GET /api/v3/user "" "$WT"
expect_status 200 'account enable: the token works at once'

# --- runtime failure: no database ----------------------------------------------------------------
SANDBOXD_DATABASE_URL="postgresql://nobody@127.0.0.1:1/none?connect_timeout=2" exit_is 1 'no database reachable' account create "nodb$SFX"
env -u SANDBOXD_DATABASE_URL -u PGHOST -u PGPORT -u PGDATABASE -u PGUSER "$SANDBOXCTL" account create "nodb$SFX" >/dev/null 2>&1
rc=$?
check_cond "SANDBOXD_DATABASE_URL unset: a clear failure (exit 1 or 2, got $rc)" '[[ $rc == 1 || $rc == 2 ]]'

finish
