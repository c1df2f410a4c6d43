#!/usr/bin/env bash
# t_disk_limit.sh: a sandbox's disk limit (SPEC §4 "Limits"; README "Limits per create").
# A create's diskMiB is on its row and in GET; /workspace is in the writable layer, so the
# limit counts it. Which path holds it is the engine's: with XFS quotas under its data root
# (deploy/sandbox-engine.sh, on a kernel that has them) the engine enforces it: a `dd` past
# it fails with "No space left on device" and the layer never holds more than the limit,
# and once the file is removed writing works again. Without (this workplace's kernel has
# no XFS quotas) the reaper measures: the same `dd` makes the reaper stop the sandbox with
# end_reason `disk limit exceeded`, audited, its container (and the bytes) gone, while
# another sandbox under its limit is measured and left running. Each run asserts the path
# its engine takes, and which one that was.
. "$(dirname "$0")/lib.sh"

mk_repo "dsk$SFX" disk
container() { docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$1")"; }
state() { sql "select state from sandboxes where id = '$1'"; }
run_in() { # SANDBOX CMD: stdout and stderr of the exec, "rc=N" on the last line
	api POST "$SB/$1/exec" "$(jq -nc --arg c "$2; echo rc=\$?" '{cmd: $c, timeoutMs: 120000}')" "$OT"
	printf '%s%s' "$(_json .stdout)" "$(_json .stderr)"
}

api POST "$SB" '{"diskMiB":96}' "$OT"
expect_status 201 'a sandbox with a 96 MiB disk'
A=$(_json .id)
AT_EXIT+=("api POST '$SB/$A/close' '' '$OT' >/dev/null 2>&1")
api GET "$SB/$A" '' "$OT"
expect_json .resources.diskMiB 96 'GET says diskMiB 96'
check_eq 'its row holds the limit in bytes' 100663296 "$(sql "select disk_bytes from sandboxes where id = '$A'")"
api POST "$SB" '{}' "$OT"
expect_status 201 'another, with the default disk'
C=$(_json .id)
AT_EXIT+=("api POST '$SB/$C/close' '' '$OT' >/dev/null 2>&1")
check_eq 'whose limit is the default' "$((${SANDBOXD_SANDBOX_DISK_MB:-10240} * 1048576))" \
	"$(sql "select disk_bytes from sandboxes where id = '$C'")"
ENFORCED=$(sql "select disk_enforced from sandboxes where id = '$A'")
check_eq 'the pooled or cold default sandbox is held the same way' "$ENFORCED" \
	"$(sql "select disk_enforced from sandboxes where id = '$C'")"
OUT=$(run_in "$A" 'dd if=/dev/zero of=/workspace/fill bs=1M count=40 status=none')
check_eq 'a 40 MiB file in /workspace is written' 'rc=0' "$OUT"
check_eq 'the clone is there too (it counts: /workspace is in the layer)' 'true' \
	"$(run_in "$A" 'git -C /workspace/repo rev-parse --is-inside-work-tree' | head -n 1)"
run_in "$C" 'dd if=/dev/zero of=/workspace/fill bs=1M count=8 status=none' >/dev/null

if [ "$ENFORCED" = t ]; then
	echo "# the engine enforces the limit (StorageOpt size on XFS with pquota)"
	check_eq 'as StorageOpt size' 100663296 \
		"$(docker inspect -f '{{index .HostConfig.StorageOpt "size"}}' "$(container "$A")")"
	OUT=$(run_in "$A" 'dd if=/dev/zero of=/workspace/big bs=1M count=200 status=none')
	check 'a 200 MiB file past the limit fails: No space left on device' \
		grep -q 'No space left on device' <<<"$OUT"
	check 'with a failing exit code' grep -qx 'rc=1' <<<"$OUT"
	USED=$(docker inspect --size -f '{{.SizeRw}}' "$(container "$A")")
	check_cond "the container's layer holds no more than its limit ($USED bytes)" "((USED <= 100663296))"
	check_cond 'and the write went as far as it could (over 80 MiB in all)' "((USED > 83886080))"
	OUT=$(run_in "$A" 'rm -f /workspace/big && dd if=/dev/zero of=/workspace/again bs=1M count=20 status=none')
	check_eq 'once the big file is removed, 20 MiB more are written' 'rc=0' "$OUT"
	check_eq 'the sandbox runs on' ready "$(state "$A")"
else
	echo "# the engine cannot enforce the limit ($(bash "$ROOT/deploy/sandbox-engine.sh" disk)): the reaper measures"
	check_eq 'its row says the reaper measures it' f "$ENFORCED"
	check_eq 'no StorageOpt was given to the engine' '' \
		"$(docker inspect -f '{{index .HostConfig.StorageOpt "size"}}' "$(container "$A")")"
	OUT=$(run_in "$A" 'dd if=/dev/zero of=/workspace/big bs=1M count=200 status=none')
	check_eq 'a 200 MiB file past the limit is written (nothing stops a write)' 'rc=0' "$OUT"
	check 'the reaper stops the sandbox, over its 96 MiB' wait_until 30 eval "[ \"\$(state '$A')\" = stopped ]"
	check_eq "with end_reason 'disk limit exceeded'" 'disk limit exceeded' \
		"$(sql "select end_reason from sandboxes where id = '$A'")"
	check_cond 'what it measured is on the row (over 200 MiB)' \
		"(($(sql "select coalesce(disk_used_bytes, 0) from sandboxes where id = '$A'") > 209715200))"
	# (the row follows the state change: the reaper ends, then audits)
	check 'the stop is audited by the reaper with the reason' wait_until 10 eval \
		"[ \"\$(sql \"select details->>'reason' from audit_log where action = 'sandbox.stop' and sandbox_id = '$A' and via = 'reaper'\")\" = 'disk limit exceeded' ]"
	check 'its container is removed (the bytes are the host'"'"'s again)' wait_until 15 eval "[ -z \"\$(container '$A')\" ]"
	api GET "$SB/$A" '' "$OT"
	expect_json .end_reason 'disk limit exceeded' 'GET says why it ended'
	check 'the other sandbox, under its limit, is measured too' wait_until 15 eval \
		"[ -n \"\$(sql \"select disk_checked_at from sandboxes where id = '$C'\")\" ]"
fi
check_eq 'the other one runs on' ready "$(state "$C")"
check_eq 'and answers' 'rc=0' "$(run_in "$C" true)"
finish
