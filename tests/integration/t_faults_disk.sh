#!/usr/bin/env bash
# t_faults_disk.sh: the repositories' folder full (a small tmpfs) or read-only (a read-only
# bind mount: root ignores permission bits). Pushes fail with a message git prints, the refs
# stay as they were, nothing is left locked, the repository still clones and fsck's clean,
# and once the disk is back a push works without any repair. Creating a repository on a
# full disk fails cleanly (no row without its directory).
. "$(dirname "$0")/lib.sh"

HOSTPORT=${SANDBOXD_URL#http://}
O="fd$SFX"
mk_user "$O" || exit 1
OT=$LAST_TOKEN
URLB="http://t:$OT@$HOSTPORT/$O"
OWNER_DIR=$REPOS_DIR/$O
G=(git -c user.name=t -c user.email=t@t -c protocol.version=2)

MOUNTS=()
umount_all() {
	local m
	for m in "${MOUNTS[@]+"${MOUNTS[@]}"}"; do
		mountpoint -q "$m" && { umount "$m" 2>/dev/null || umount -l "$m"; }
	done
	return 0
}
AT_EXIT+=(umount_all)

refs() { git -C "$1" for-each-ref --format='%(refname) %(objectname)' 2>&1; }
no_locks() { [[ -z $(find "$1" -name '*.lock' 2>/dev/null) ]]; }
fsck_clean() { git -C "$1" fsck --full --strict --no-dangling >"$_T/fsck.out" 2>&1; }
clones_at() { # REPO COMMIT: a fresh clone through the service has main at COMMIT
	rm -rf "$_T/clone"
	git clone -q "$URLB/$1.git" "$_T/clone" 2>"$_T/clone.err" &&
		[[ $(git -C "$_T/clone" rev-parse HEAD) == "$2" ]]
}
push() { # WORKTREE REFSPEC…: git push; its stderr in PUSH_ERR, its status returned
	local w=$1
	shift
	"${G[@]}" -C "$w" push origin "$@" >"$_T/push.out" 2>"$_T/push.err"
	local rc=$?
	PUSH_ERR=$(cat "$_T/push.err")
	LAST_REQ="git push origin $*"
	STATUS="exit $rc"
	BODY=$PUSH_ERR
	return $rc
}
new_worktree() { # DIR REPO
	git init -q -b main "$1"
	git -C "$1" remote add origin "$URLB/$2.git"
	echo one >"$1/f" && "${G[@]}" -C "$1" add f && "${G[@]}" -C "$1" commit -qm one
}

# --- a full disk -------------------------------------------------------------------------------
mkdir -p "$OWNER_DIR"
# The folder's owner and mode carry over to the tmpfs: sandboxd runs as its own user.
OWNER_UID=$(stat -c %u "$REPOS_DIR") OWNER_GID=$(stat -c %g "$REPOS_DIR")
if ! mount -t tmpfs -o "size=3m,mode=0750,uid=$OWNER_UID,gid=$OWNER_GID" sandboxd-it-full "$OWNER_DIR"; then
	fail 'mount a 3 MiB tmpfs as the owner folder' "mount failed (the test runs as root and needs to mount)"
	finish
fi
MOUNTS+=("$OWNER_DIR")
api POST /api/v3/user/repos '{"name":"full","visibility":"private"}' "$OT"
expect_status 201 'a repository on the small disk'
B=$OWNER_DIR/full.git
W=$_T/wf
new_worktree "$W" full
check 'the first push works' push "$W" main
C1=$(git -C "$W" rev-parse HEAD)
BEFORE=$(refs "$B")

# Fill the disk, leaving nothing (a filler file until ENOSPC).
dd if=/dev/zero of="$OWNER_DIR/filler" bs=64k 2>/dev/null
check_cond 'the disk is full' "[[ \$(df --output=avail -B1 '$OWNER_DIR' | tail -n 1 | tr -d ' ') -lt 4096 ]]"
head -c 1500000 /dev/urandom >"$W/big"
"${G[@]}" -C "$W" add big && "${G[@]}" -C "$W" commit -qm big
check 'a push with new objects on a full disk fails' eval '! push "$W" main'
check 'git prints why: no space left on device' grep -qi 'no space left on device' <<<"$PUSH_ERR"
check_eq 'the refs are unchanged' "$BEFORE" "$(refs "$B")"
check 'no lock file is left behind' no_locks "$B"
check 'no quarantine folder is left behind' eval '[[ -z $(find "$B/objects" -maxdepth 1 -name "incoming-*") ]]'
"${G[@]}" -C "$W" branch side "$C1"
check 'a push of a ref alone (no new object) on a full disk fails' eval '! push "$W" side'
check 'and git prints why the ref was not updated' grep -qiE "cannot update ref 'refs/heads/side'" <<<"$PUSH_ERR"
check_eq 'the refs are still unchanged' "$BEFORE" "$(refs "$B")"
check 'still no lock file' no_locks "$B"
# The hook accepted the ref before git failed to write it: the audit log says both.
ref_rows() { # REF: "status result" of the repository's git.push.ref rows for REF, in order
	sql "select status || ' ' || (details->>'result') from audit_log where action = 'git.push.ref'
	  and repository = '$O/full' and details->>'ref' = '$1' order by id"
}
check_eq 'the audit log: side accepted by the hook, then failed' $'200 accepted\n500 failed' \
	"$(ref_rows refs/heads/side)"
check_eq 'both rows of the same request, which counts the failed ref' '1|1' \
	"$(sql "select count(distinct a.request_id) || '|' || max(p.details->>'refs_failed')
	  from audit_log a join audit_log p on p.request_id = a.request_id and p.action = 'git.push'
	  where a.action = 'git.push.ref' and a.repository = '$O/full' and a.details->>'ref' = 'refs/heads/side'")"
check_eq 'audit_pushes shows it failed' 'failed' \
	"$(sql "select string_agg(result, ',') from audit_pushes where repository = '$O/full'
	  and ref = 'refs/heads/side' and result <> 'accepted'")"
check 'the repository fsck'"'"'s clean' fsck_clean "$B"
check 'it still clones at the old commit' clones_at full "$C1"
api POST /api/v3/user/repos '{"name":"nospace","visibility":"private"}' "$OT"
check_cond "creating a repository on the full disk fails with a 5xx (got $STATUS)" '[[ $STATUS == 5?? ]]'
expect_json_match .message '.' 'with a message'
check_eq 'and leaves no row' 0 "$(sql "select count(*) from repositories r join accounts a on a.id = r.owner_id where a.login = '$O' and r.name = 'nospace'")"
check 'and no half-made directory' test ! -e "$OWNER_DIR/nospace.git"

rm -f "$OWNER_DIR/filler"
check 'with room again, the same push works without any repair' push "$W" main side
C2=$(git -C "$W" rev-parse HEAD)
check_eq 'main moved to the new commit' "$C2" "$(git -C "$B" rev-parse refs/heads/main)"
check_eq 'and the audit log says side landed: accepted, no new failed row' \
	$'200 accepted\n500 failed\n200 accepted' "$(ref_rows refs/heads/side)"

# --- a ref locked by another writer ------------------------------------------------------------
# Not a disk fault, the same outcome: the hook accepts, git cannot take the ref's lock. In a
# push of two refs only the locked one fails (and is audited so); pushed atomically, both.
"${G[@]}" -C "$W" branch locked "$C1"
"${G[@]}" -C "$W" branch free "$C1"
touch "$B/refs/heads/locked.lock"
check 'a push of a locked ref and a free one fails' eval '! push "$W" locked free'
check_eq 'the free one landed' "$C1" "$(git -C "$B" rev-parse -q --verify refs/heads/free)"
check_eq 'the locked one did not' '' "$(git -C "$B" rev-parse -q --verify refs/heads/locked)"
check_eq 'the locked ref: accepted, then failed' $'200 accepted\n500 failed' "$(ref_rows refs/heads/locked)"
check_eq 'the free ref: accepted only' '200 accepted' "$(ref_rows refs/heads/free)"
"${G[@]}" -C "$W" branch atomic1 "$C2"
check 'an atomic push of a free ref and the locked one fails' eval '! push "$W" --atomic atomic1 locked'
check_eq 'nothing of it landed' '' "$(git -C "$B" rev-parse -q --verify refs/heads/atomic1)"
check_eq 'the free ref of the atomic push: accepted, then failed' $'200 accepted\n500 failed' \
	"$(ref_rows refs/heads/atomic1)"
rm -f "$B/refs/heads/locked.lock"
check 'it fsck'"'"'s clean' fsck_clean "$B"
check 'and clones at the new commit' clones_at full "$C2"
api POST /api/v3/user/repos '{"name":"nospace","visibility":"private"}' "$OT"
expect_status 201 'the name refused on the full disk can be created now'

# --- a read-only disk ---------------------------------------------------------------------------
api POST /api/v3/user/repos '{"name":"ro","visibility":"private"}' "$OT"
expect_status 201 'a second repository'
RB=$OWNER_DIR/ro.git
W2=$_T/wr
new_worktree "$W2" ro
check 'its first push works' push "$W2" main
R1=$(git -C "$W2" rev-parse HEAD)
BEFORE=$(refs "$RB")
if mount --bind "$RB" "$RB" && MOUNTS=("$RB" "${MOUNTS[@]}") && mount -o remount,bind,ro "$RB"; then
	ok 'the repository is mounted read-only'
else
	fail 'mount the repository read-only' 'mount --bind + remount,ro failed'
fi
check_cond 'root cannot write in it' "! touch '$RB/probe' 2>/dev/null"
echo two >"$W2/f" && "${G[@]}" -C "$W2" commit -qam two
check 'a push to the read-only repository fails' eval '! push "$W2" main'
check 'git prints that the server cannot write (unpack failed)' \
	grep -qiE 'remote unpack failed: unable to create temporary object directory|read-only file system' <<<"$PUSH_ERR"
check_eq 'its refs are unchanged' "$BEFORE" "$(refs "$RB")"
check 'it still clones (reads need no writes)' clones_at ro "$R1"
check 'it fsck'"'"'s clean' fsck_clean "$RB"
umount "$RB"
check 'writable again, the same push works' push "$W2" main
check_eq 'main moved' "$(git -C "$W2" rev-parse HEAD)" "$(git -C "$RB" rev-parse refs/heads/main)"
check 'no lock file is left behind' no_locks "$RB"

umount_all
finish
