#!/usr/bin/env bash
# t_limits.sh: a create's own limits (SPEC.md §4 "Limits"): cpus and memoryMiB below or above
# the default up to the operator's maximum, seen by the sandbox in its own cgroup and by the
# engine; diskMiB as the engine's StorageOpt size (t_disk_limit tests what it does); past
# the maximum 422 naming the field, bad shapes 400. With the pool on, a warm container is changed live (the create
# stays pooled); in the Makefile's pool-off pass, a cold one is made with them.
. "$(dirname "$0")/lib.sh"

POOLED=true
[ "${SANDBOXD_POOL_SIZE:-2}" = 0 ] && POOLED=false
mk_repo "sbl$SFX" limits
container() { docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$1")"; }
# SANDBOX: its memory limit and CPU quota as the sandbox reads them in its own cgroup
# (v2: memory.max, cpu.max; v1, as on this kernel: memory.limit_in_bytes, cfs quota/period).
inside() {
	api POST "$SB/$1/exec" '{"cmd":"cd /sys/fs/cgroup; if [ -f memory.max ]; then cat memory.max cpu.max; else cat memory/memory.limit_in_bytes; echo $(cat cpu/cpu.cfs_quota_us) $(cat cpu/cpu.cfs_period_us); fi"}' "$OT"
	printf '%s\n' "$(_json .stdout)" | tr '\n' '|'
}
engine() { docker inspect -f '{{.HostConfig.Memory}}|{{.HostConfig.MemorySwap}}|{{.HostConfig.NanoCpus}}' "$(container "$1")"; }

[ "$POOLED" = true ] && check 'the warm pool has a container ready' wait_until 60 warm_ready_at_least 1
api POST "$SB" '{"cpus":0.5,"memoryMiB":256}' "$OT"
expect_status 201 'a create asking for 0.5 CPUs and 256 MiB'
A=$(_json .id)
AT_EXIT+=("api POST '$SB/$A/close' '' '$OT' >/dev/null 2>&1")
check_eq "pooled: $POOLED" "$POOLED" "$(create_audit "$A" pooled)"
check_eq 'the sandbox sees its limits in its cgroup' '268435456|50000 100000|' "$(inside "$A")"
check_eq 'and so does the engine (no swap)' '268435456|268435456|500000000' "$(engine "$A")"
api GET "$SB/$A" '' "$OT"
expect_json '.resources | [.cpus, .memoryMiB, .diskMiB] | map(tostring) | join("|")' \
	"0.5|256|${SANDBOXD_SANDBOX_DISK_MB:-10240}" 'GET says its resources: 0.5 CPUs, 256 MiB, the default disk'
check_eq 'its create row says what it asked for' '256|500000000' "$(sql "select (details->>'memory_mib') || '|' || (details->>'nano_cpus') from audit_log where action = 'sandbox.create' and sandbox_id = '$A'")"
hold() { # MIB: a process that holds that much memory, and how it ended
	api POST "$SB/$A/exec" "$(jq -nc --arg c "perl -e '\$x = \"a\" x ($1 * 1048576); print length(\$x) >> 20' ; echo \" rc=\$?\"" '{cmd: $c}')" "$OT"
	_json .stdout
}
check_eq 'a process holding 100 MiB runs' '100 rc=0' "$(hold 100)"
check_eq 'one holding 400 MiB past its 256 MiB is killed by the limit' ' rc=137' "$(hold 400)"

NCPU=$(docker info -f '{{.NCPU}}')
api POST "$SB" "{\"cpus\":$NCPU,\"memoryMiB\":4096}" "$OT"
expect_status 201 "more than the default, within the maximum and the engine's $NCPU CPUs"
B=$(_json .id)
AT_EXIT+=("api POST '$SB/$B/close' '' '$OT' >/dev/null 2>&1")
check_eq 'seen inside' "4294967296|$((NCPU * 100000)) 100000|" "$(inside "$B")"
api POST "$SB/$B/close" '' "$OT"

api POST "$SB" '{}' "$OT"
expect_status 201 'a create asking for nothing'
C=$(_json .id)
AT_EXIT+=("api POST '$SB/$C/close' '' '$OT' >/dev/null 2>&1")
check_eq "gets the defaults (SANDBOXD_SANDBOX_MEMORY_MB=$SANDBOXD_SANDBOX_MEMORY_MB, 2 CPUs)" \
	"$((SANDBOXD_SANDBOX_MEMORY_MB * 1048576))|200000 100000|" "$(inside "$C")"
api POST "$SB/$C/close" '' "$OT"

# --- refused, by name -----------------------------------------------------------------------------
refused() { # BODY STATUS MESSAGE NAME
	api POST "$SB" "$1" "$OT"
	expect_error "$2" "$3" "$4"
}
refused '{"memoryMiB":8193}' 422 "field 'memoryMiB' is over this deployment's maximum (8192)" 'memoryMiB past the maximum: 422'
check_eq 'the refusal is audited with what was asked' '422 8193' \
	"$(sql "select status || ' ' || (details->>'memory_mib') from audit_log where action = 'sandbox.create'
	         and login = 'sbl$SFX' order by id desc limit 1")"
refused '{"cpus":8.5}' 422 "field 'cpus' is over this deployment's maximum (8)" 'cpus past the maximum: 422'
refused '{"cpus":"1"}' 400 "field 'cpus' must be a number" 'cpus as a string: 400'
refused '{"cpus":0}' 400 "field 'cpus' must be at least 0.01" 'no CPU at all: 400'
refused '{"memoryMiB":32}' 400 "field 'memoryMiB' must be an integer between 64 and 2147483647" 'under 64 MiB: 400'
refused '{"memoryMiB":1.5}' 400 "field 'memoryMiB' must be an integer" 'a fraction of a MiB: 400'
if ((NCPU < 8)); then
	api POST "$SB" '{"cpus":8}' "$OT"
	expect_status 503 "more CPUs than the engine's $NCPU: 503"
	check "with the engine's reason" grep -q "the engine refused the sandbox's limits: .*CPU" <<<"$(_json .message)"
fi
refused '{"diskMiB":102401}' 422 "field 'diskMiB' is over this deployment's maximum (102400)" 'diskMiB past the maximum: 422'
check_eq 'audited with what was asked' '422 102401' \
	"$(sql "select status || ' ' || (details->>'disk_mib') from audit_log where action = 'sandbox.create'
	         and login = 'sbl$SFX' order by id desc limit 1")"
refused '{"diskMiB":32}' 400 "field 'diskMiB' must be an integer between 64 and 2147483647" 'diskMiB under 64: 400'
refused '{"diskMiB":"1G"}' 400 "field 'diskMiB' must be an integer" 'diskMiB as a string: 400'
api POST "$SB" '{"diskMiB":512}' "$OT"
expect_status 201 'a create asking for 512 MiB of disk'
D=$(_json .id)
AT_EXIT+=("api POST '$SB/$D/close' '' '$OT' >/dev/null 2>&1")
check_eq 'its own disk limit starts cold (a warm container has the default)' false \
	"$(create_audit "$D" pooled)"
api GET "$SB/$D" '' "$OT"
expect_json .resources.diskMiB 512 'GET says diskMiB 512'
check_eq 'the engine was asked for it (StorageOpt size), or the reaper measures it' 'ok' \
	"$(if [ "$(sql "select disk_enforced from sandboxes where id = '$D'")" = t ]; then
		[ "$(docker inspect -f '{{index .HostConfig.StorageOpt "size"}}' "$(container "$D")")" = 536870912 ] && echo ok
	else [ "$(sql "select disk_bytes from sandboxes where id = '$D'")" = 536870912 ] && echo ok; fi)"
api POST "$SB/$D/close" '' "$OT"
check_eq 'none of the refused creates left a running sandbox' 0 "$(sql "select count(*) from sandboxes s join repositories r on r.id = s.repository_id join accounts a on a.id = r.owner_id where a.login = 'sbl$SFX' and s.state = 'ready' and s.id not in ('$A')")"
finish
