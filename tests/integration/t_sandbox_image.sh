#!/usr/bin/env bash
# t_sandbox_image.sh: a configured runner image that the Docker host lacks. With pulling off
# (the default), create answers 503 naming the image and leaves nothing behind; with pulling
# on, a pull that fails answers 503 with Docker's reason, and leaves nothing behind either.
# The image names a registry on loopback port 1, which refuses at once: nothing leaves the
# machine. sandboxd is restarted with these settings (local-stack.sh up restarts it when they
# change; SANDBOXD_SKIP_IMAGE=1, or it would build the missing image from the Debian mirror)
# and, at the end, with the suite's own.
. "$(dirname "$0")/lib.sh"

MISSING=localhost:1/sandboxd-missing:none
leftovers() { # what is left of the account's sandboxes: running rows, live tokens, containers
	local id
	sql "select count(*) from sandboxes s join accounts a on a.id = s.account_id where a.login = '$O' and s.state in ('starting', 'ready')"
	sql "select count(*) from tokens t join accounts a on a.id = t.account_id where a.login = '$O' and t.kind = 'sandbox' and t.revoked_at is null"
	for id in $(sql "select s.id from sandboxes s join accounts a on a.id = s.account_id where a.login = '$O'"); do
		docker ps -aq --filter "label=sandboxd.sandbox=$(owner_label_of "$id")"
	done
}

absent() { ! docker image inspect "$MISSING" >/dev/null 2>&1; }
if ! absent; then
	fail "the image $MISSING is on this Docker host: the test needs it missing"
	finish
fi
O="sbi$SFX"
mk_user "$O" || exit 1
OT=$LAST_TOKEN
api POST /api/v3/user/repos '{"name":"img"}' "$OT"
W=$_T/w
git init -q -b main "$W"
echo one >"$W/f" && git -C "$W" add f && git -C "$W" -c user.name=t -c user.email=t@t commit -qm one
git -C "$W" push -q "http://t:$OT@${SANDBOXD_URL#http://}/$O/img.git" main
SB=/api/v3/repos/$O/img/diffinery/sandboxes

# --- pulling off -------------------------------------------------------------------------
stack_restart missing-no-pull SANDBOXD_IMAGES="missing=$MISSING" SANDBOXD_IMAGE_PULL=0
api POST "$SB" '{}' "$OT"
expect_error 503 "the sandbox image $MISSING is missing and pulling is off" \
	'a missing image, pulling off: 503 naming the image'
check_eq 'nothing is left: no running row, no live token, no container' "$(printf '0\n0')" "$(leftovers)"
check_eq 'the sandbox is failed, with the reason' "failed|the sandbox image $MISSING is missing and pulling is off" \
	"$(sql "select s.state || '|' || s.end_reason from sandboxes s join accounts a on a.id = s.account_id where a.login = '$O' order by s.created_at desc limit 1")"
check_eq 'the refusal is audited' 1 "$(sql "select count(*) from audit_log where action = 'sandbox.create' and login = '$O' and status = 503")"

# --- pulling on, the pull fails ------------------------------------------------------------
stack_restart missing-pull SANDBOXD_IMAGES="missing=$MISSING" SANDBOXD_IMAGE_PULL=1
T0=$(date +%s%N)
api POST "$SB" '{}' "$OT"
MS=$((($(date +%s%N) - T0) / 1000000))
expect_json_match .message "^the sandbox image $MISSING is missing and could not be pulled: .*127\\.0\\.0\\.1:1.*refused" \
	"a missing image, pulling on, no registry: 503 with Docker's reason"
expect_status 503 'the failed pull: 503'
check "it failed at once ($MS ms)" [ "$MS" -lt 20000 ]
check_eq 'nothing is left after the failed pull' "$(printf '0\n0')" "$(leftovers)"
check 'the pull was tried (logged)' grep -q "pulling the image $MISSING" "$SANDBOXD_VAR/log/sandboxd.log"

# --- the suite's own settings again --------------------------------------------------------
stack_restart suite-settings
api POST "$SB" '{}' "$OT"
expect_status 201 'with the image present, create works again'
ID=$(_json .id)
api POST "$SB/$ID/close" "" "$OT"
expect_status 204 'and closes'
check_eq 'nothing of this test runs any more' "$(printf '0\n0')" "$(leftovers)"
check 'and the image is still missing (nothing built or pulled it)' absent
finish
