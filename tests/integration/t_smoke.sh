#!/usr/bin/env bash
# t_smoke.sh: one trip through the real stack, for `make check` (seconds, not minutes): a
# repository with a tag, a sandbox created at that tag, a command run in it (through the
# API: the agent, else Docker exec), a commit pushed from inside the sandbox with its own
# token, seen in the bare repository and audited, then the close: the row closed and the
# container gone. t_sandbox and t_quickstart cover each step at length.
. "$(dirname "$0")/lib.sh"

export GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=/bin/false
container_gone() { [[ -z $(docker ps -aq --no-trunc --filter "id=$1") ]]; }
clone_done() {
	api GET "$SB/$ID" "" "$OT"
	[[ $(_json .clone.state) == 'done' ]]
}

mk_repo "smoke$SFX" app
git -C "$W" tag v1
echo two >"$W/x" && git -C "$W" -c user.name=t -c user.email=t@t commit -qam two
git -C "$W" push -q "http://t:$OT@${SANDBOXD_URL#http://}/$R.git" main v1
V1=$(git -C "$W" rev-parse 'v1^{commit}')

# --- create at a ref -----------------------------------------------------------------------------
api POST "$SB" '{"ref":"v1"}' "$OT"
expect_status 201 'create at the tag v1: 201'
expect_json .ref v1 'the sandbox is at the ref asked for'
expect_json .state ready 'state ready once the container runs'
ID=$(_json .id)
check_cond "an opaque id ($ID)" '[[ $ID =~ ^sb_[0-9a-f]{24}$ ]]'
[[ $ID =~ ^sb_ ]] || finish
_it_sandbox_token "$ID"
CID=$(sql "select container_id from sandboxes where id = '$ID'")
check_eq 'its container runs' true "$(docker inspect -f '{{.State.Running}}' "$CID" 2>&1)"
check 'the clone finishes' wait_until 60 clone_done
expect_json .commit "$V1" "its commit is the tag's"

# --- exec --------------------------------------------------------------------------------------------
api POST "$SB/$ID/exec" '{"cmd":"cat x; git -C /workspace/repo rev-parse HEAD; echo to-err >&2; exit 3"}' "$OT"
expect_status 200 'exec: 200'
expect_json .stdout "x"$'\n'"$V1" "exec: the checkout at v1 (x is 'x', HEAD the tag's commit)"
expect_json .stderr 'to-err' 'exec: stderr apart'
expect_json .exitCode 3 "exec: the command's exit code"

# --- git push from inside, with the sandbox's own token ---------------------------------------------
CMD='cd /workspace/repo && echo from-the-box >smoke.txt && git add smoke.txt &&
	git -c user.name=box -c user.email=box@example.test commit -qm "from the sandbox" &&
	git push -q origin HEAD:refs/heads/smoke && git rev-parse HEAD'
api POST "$SB/$ID/exec" "$(jq -nc --arg cmd "$CMD" '{cmd: $cmd}')" "$OT"
expect_json .exitCode 0 'git push from inside the sandbox: exit 0'
PUSHED=$(_json .stdout)
BARE=$REPOS_DIR/$R.git
check_eq 'the pushed branch is in the bare repository, at the commit made inside' "$PUSHED" \
	"$(git --git-dir "$BARE" rev-parse -q --verify refs/heads/smoke 2>&1)"
check_eq 'its parent is the tag'"'"'s commit' "$V1" "$(git --git-dir "$BARE" rev-parse -q --verify 'refs/heads/smoke^' 2>&1)"
check_eq 'the push is audited as the creator, with the sandbox token' "smoke$SFX|sandbox" \
	"$(sql "select login || '|' || token_kind from audit_log where action = 'git.push.ref' and repository = '$R' and details->>'ref' = 'refs/heads/smoke'")"

# --- close ---------------------------------------------------------------------------------------------
api POST "$SB/$ID/close" "" "$OT"
expect_status 204 'close: 204'
check_eq 'the row is closed' closed "$(sql "select state from sandboxes where id = '$ID'")"
check 'its container is gone' wait_until 30 container_gone "${CID:-none}"
finish
