#!/usr/bin/env bash
# t_save.sh: nothing lost at a stop (SPEC.md §4): an idle stop saves the work tree's changes
# and untracked files (.gitignore respected) as a commit on top of HEAD, pushed as the
# creator to refs/namespaces/ephemeral/refs/heads/sandbox/<id> through the usual rules; the
# stopped sandbox says saved_ref; a clean sandbox saves nothing; a lifetime stop saves too;
# close saves only when asked; a push that push protection refuses is audited, the idle
# sandbox still stops, and a close that asked answers 409 and stays open.
. "$(dirname "$0")/lib.sh"

O="sv$SFX"
mk_repo "$O" work
BARE=$REPOS_DIR/$O/work.git
state() { sql "select state from sandboxes where id = '$1'"; }
is_state() { [ "$(state "$1")" = "$2" ]; }
new_sandbox() {
	api POST "$SB" '{}' "$OT"
	ID=$(_json .id)
	AT_EXIT+=("api POST '$SB/$ID/close' '' '$OT' >/dev/null 2>&1")
}
run() { api POST "$SB/$ID/exec" "$(jq -nc --arg c "$1" '{cmd: $c}')" "$OT"; }
idle_now() { sql "update sandboxes set idle_stop_at = now() - interval '1 second', busy_until = null where id = '$1'" >/dev/null; }
saved() { git --git-dir="$BARE" rev-parse -q --verify "refs/namespaces/ephemeral/refs/heads/sandbox/$1"; }

# --- an idle stop saves the work ------------------------------------------------------------------
new_sandbox
A=$ID
run 'echo changed >x && echo new >untracked.txt && echo ignored.log >.gitignore && echo noise >ignored.log && echo ok'
expect_json .stdout ok 'a sandbox with a changed file, an untracked one and an ignored one'
idle_now "$A"
check 'the reaper stops it' wait_until 30 is_state "$A" stopped
REF=refs/namespaces/ephemeral/refs/heads/sandbox/$A
check 'its work is on the ephemeral ref' saved "$A"
check_eq 'the changed file' changed "$(git --git-dir="$BARE" show "$REF:x")"
check_eq 'the untracked one' new "$(git --git-dir="$BARE" show "$REF:untracked.txt")"
check 'not the ignored one' test -z "$(git --git-dir="$BARE" ls-tree --name-only "$REF" ignored.log)"
check_eq 'a commit on top of where it started' "$(git --git-dir="$BARE" rev-parse main)" "$(git --git-dir="$BARE" rev-parse "$REF^")"
check_eq 'made by the creator (its git identity)' "$O" "$(git --git-dir="$BARE" log -1 --format=%an "$REF")"
check_eq 'main is untouched' x "$(git --git-dir="$BARE" show main:x)"
api GET "$SB/$A" '' "$OT"
check_eq 'the stopped sandbox says where' "stopped|$REF" "$(_json .state)|$(_json .saved_ref)"
check_eq 'the stop is audited with it' "idle|$REF" "$(sql "select (details->>'reason') || '|' || (details->>'saved_ref') from audit_log where action = 'sandbox.stop' and sandbox_id = '$A'")"
check_eq 'the push is audited as the creator, ephemeral' "$O|ephemeral|accepted" "$(sql "select login || '|' || (details->>'kind') || '|' || (details->>'result') from audit_log where action = 'git.push.ref' and details->>'ref' = '$REF' order by id desc limit 1")"

# --- a clean sandbox saves nothing; a commit not pushed is saved --------------------------------
new_sandbox
CLEAN=$ID
run 'git status --porcelain | wc -l'
expect_json .stdout 0 'a sandbox with nothing changed'
idle_now "$CLEAN"
check 'it stops' wait_until 30 is_state "$CLEAN" stopped
check 'with nothing saved' test -z "$(saved "$CLEAN")"
api GET "$SB/$CLEAN" '' "$OT"
check_eq 'and no saved_ref' null "$(_json .saved_ref)"
new_sandbox
COMMITTED=$ID
run 'echo local >l.txt && git add l.txt && git commit -qm "local commit" && git status --porcelain | wc -l'
expect_json .stdout 0 'a commit made and not pushed, the tree clean'
idle_now "$COMMITTED"
check 'it stops' wait_until 30 is_state "$COMMITTED" stopped
check_eq 'the unpushed commit is saved as it is' 'local commit' "$(git --git-dir="$BARE" log -1 --format=%s "refs/namespaces/ephemeral/refs/heads/sandbox/$COMMITTED")"

# --- the lifetime stop saves too ------------------------------------------------------------------
new_sandbox
OLD=$ID
run 'echo late >late.txt && echo ok'
sql "update sandboxes set created_at = now() - interval '86401 seconds', idle_stop_at = now() + interval '1 hour' where id = '$OLD'" >/dev/null
check 'past its lifetime it stops' wait_until 30 is_state "$OLD" stopped
check_eq 'its work saved' late "$(git --git-dir="$BARE" show "refs/namespaces/ephemeral/refs/heads/sandbox/$OLD:late.txt")"

# --- close: only when asked -------------------------------------------------------------------------
new_sandbox
C1=$ID
run 'echo unsaved >u.txt && echo ok'
api POST "$SB/$C1/close" '' "$OT"
expect_status 204 'a plain close: 204'
check 'saves nothing' test -z "$(saved "$C1")"
new_sandbox
C2=$ID
run 'echo asked >a.txt && echo ok'
api POST "$SB/$C2/close" '{"save":true}' "$OT"
expect_status 204 'close {save: true}: 204'
check_eq 'its work saved' asked "$(git --git-dir="$BARE" show "refs/namespaces/ephemeral/refs/heads/sandbox/$C2:a.txt")"
api GET "$SB/$C2" '' "$OT"
check_eq 'closed, saying where' "closed|refs/namespaces/ephemeral/refs/heads/sandbox/$C2" "$(_json .state)|$(_json .saved_ref)"
api POST "$SB/$C2/close" '{"save":"yes"}' "$OT"
expect_names_field 400 save 'save must be a boolean: 400'

# --- a refused push: audited, the idle stop still happens, a close that asked is a 409 ---------------
# One of this service's own tokens (a real one: its checksum holds) in a file.
SECRET=$(mk_token "$O" read)
new_sandbox
S1=$ID
run "printf 'token = %s\n' '$SECRET' >leak.txt && echo ok"
api POST "$SB/$S1/close" '{"save":true}' "$OT"
expect_status 409 'close {save: true} of work push protection refuses: 409'
check "saying why: push protection's reason, naming the file" grep -q '^its work could not be saved: .*leak.txt' <<<"$(_json .error)"
check_eq 'and it stays open' ready "$(state "$S1")"
idle_now "$S1"
check 'the idle stop still stops it' wait_until 30 is_state "$S1" stopped
check 'with nothing saved' test -z "$(saved "$S1")"
check 'the stop row says why not' wait_until 10 eval "[ -n \"\$(sql \"select details->>'save_error' from audit_log where action = 'sandbox.stop' and sandbox_id = '$S1'\")\" ]"
check_eq 'the refused ref is audited' refused "$(sql "select details->>'result' from audit_log where action = 'git.push.ref' and details->>'ref' = 'refs/namespaces/ephemeral/refs/heads/sandbox/$S1' order by id desc limit 1")"
check 'and the secret is in no audit row' test "$(sql "select count(*) from audit_log where details::text like '%$SECRET%'")" = 0
finish
