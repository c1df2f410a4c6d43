#!/usr/bin/env bash
# t_pool.sh: the warm pool (SANDBOXD_POOL_SIZE): containers started ahead with nothing of a
# repository or a credential in them, a create that takes one (audited as pooled) and works
# like any other, concurrent creates that never share one, a warm container that died, one
# no row wants any more, and the refill after each.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_guard.sh"

export GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=/bin/false
POOL=${SANDBOXD_POOL_SIZE:-2}
if ((POOL < 2)); then
	fail 'the test stack keeps a warm pool of 2 or more' "SANDBOXD_POOL_SIZE=$POOL"
	finish
fi
INST=$SANDBOXD_INSTANCE
O="pl$SFX"
mk_repo "$O" r

rows() { # STATE: this engine's warm rows in it, "id cid" per line, oldest first
	sql "select id, container_id from warm_containers where instance = '$INST' and state = '$1'
	     order by created_at" | tr '|' ' '
}
ready_count() { rows ready | grep -c .; }
pool_full() { (($(ready_count) >= POOL)); }
label_of() { docker inspect -f '{{index .Config.Labels "sandboxd.sandbox"}}' "$1" 2>/dev/null; }
status_of() { docker inspect -f '{{.State.Status}}' "$1" 2>/dev/null; }
gone() { local out; out=$(engine_out ps -aq --no-trunc --filter "id=$1") && [[ -z $out ]]; }  # the engine says so
pooled_of() { create_audit "$1" pooled; }
row_cid() { sql "select container_id from sandboxes where id = '$1'"; }
clone_done() { api GET "$SB/$1" "" "$OT"; [[ $(_json .clone.state) == "done" ]]; }

# ---- the pool, before anyone asks ---------------------------------------------------------------
check "the pool fills to $POOL ready containers" wait_until 60 pool_full
WARM=$(rows ready)
while read -r wid cid; do
	check_eq "warm $wid: its container runs" running "$(status_of "$cid")"
	check_eq 'labelled with its row, not with any sandbox' "pool:$wid" "$(label_of "$cid")"
	check_eq 'and sandboxd.pool names its row too' "$wid" "$(docker inspect -f '{{index .Config.Labels "sandboxd.pool"}}' "$cid")"
	check_eq 'and with this engine' "$INST" "$(docker inspect -f '{{index .Config.Labels "sandboxd.instance"}}' "$cid")"
	check_eq 'no repository in it yet' "" "$(docker exec "$cid" sh -c 'ls -A /workspace/repo 2>/dev/null')"
	check_eq 'no parameters, no token in it' "" "$(docker exec "$cid" sh -c 'ls /tmp/.sandboxd 2>/dev/null; env | grep -o "dst_[A-Za-z0-9]*"')"
	# clone.sh's arguments: the bounds on the clone and on its LFS pull (the defaults).
	check_eq 'its first process is clone.sh, waiting, with its bounds' 'sandboxd-clone 1800 600' \
		"$(docker exec "$cid" sh -c "tr '\\0' '\\n' </proc/1/cmdline | tail -n 3 | paste -sd ' '")"
	# Its agent runs already, on a key of its own in the row (025), at the engine's address.
	key=$(sql "select agent_key from warm_containers where id = '$wid'")
	check_cond 'its agent runs already, with a key of its own in its row' \
		"[[ \$key =~ ^[0-9a-f]{64}\$ ]] && docker exec '$cid' pgrep -x sandboxd-agent >/dev/null"
	check_eq "its row holds the engine's address for it" \
		"$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$cid")" \
		"$(sql "select host(agent_ip) from warm_containers where id = '$wid'")"
	check_eq 'the key is in no environment of it' 0 \
		"$(docker exec "$cid" sh -c 'cat /proc/[0-9]*/environ 2>/dev/null' | tr '\0' '\n' | grep -cF "${key:-none}")"
done <<<"$WARM"

# The operator's view of it (GET /metrics, refreshed from the table every 5 s).
pool_gauge() { api GET /metrics; grep -E "^sandboxd_pool_containers\{image=\"[^\"]+\",state=\"ready\"\} " <<<"$BODY" | awk '{print $2}'; }
check "sandboxd_pool_containers says $POOL ready" wait_until 20 eval '[[ $(pool_gauge) == "$POOL" ]]'

# ---- a create takes the oldest ----------------------------------------------------------------
read -r WID WCID <<<"$(head -n 1 <<<"$WARM")"
api POST "$SB" '{}' "$OT"
expect_status 201 'a create with the pool full'
A=$(_json .id)
check_eq 'its container is the oldest warm one' "$WCID" "$(row_cid "$A")"
check_eq 'whose row is claimed by it' "claimed $A" "$(sql "select state || ' ' || claimed_by from warm_containers where id = '$WID'")"
check_eq 'the create is audited as pooled' true "$(pooled_of "$A")"
check_eq 'its parameters went through the agent (no archive call)' agent \
	"$(create_audit "$A" handed_by)"
check_eq "the key left the pool's row for the sandbox's" "|true" \
	"$(sql "select coalesce(w.agent_key, '') || '|' || (length(s.agent_key) = 64) from warm_containers w join sandboxes s on s.id = w.claimed_by where w.id = '$WID'")"
check 'its clone is done' wait_until 60 clone_done "$A"
api POST "$SB/$A/exec" '{"cmd":"cat x; printenv SANDBOX_ID; git rev-parse --abbrev-ref HEAD"}' "$OT"
expect_json .stdout "x"$'\n'"$A"$'\n'"main" 'a command sees the repository and its sandbox'
api POST "$SB/$A/exec" '{"cmd":"echo w > w && git add w && git -c user.name=t -c user.email=t@t commit -qm w && git push -q origin HEAD:refs/heads/from-warm 2>&1 && git rev-parse HEAD"}' "$OT"
expect_json .exitCode 0 'git push from the warm sandbox works'
PUSHED=$(_json .stdout)
check_eq 'the branch landed' "$PUSHED" \
	"$(git ls-remote "http://t:$OT@${SANDBOXD_URL#http://}/$R.git" refs/heads/from-warm | cut -f1)"
check 'the pool refills' wait_until 60 pool_full
check_eq 'with containers it did not have' "" "$(comm -12 <(rows ready | cut -d' ' -f2 | sort) <(echo "$WCID"))"

# ---- closing a pooled sandbox leaves nothing ----------------------------------------------------
# A volume with its label, as the engine lists it: a docker call that fails is no answer,
# not "none". (sandboxd keeps /workspace in the writable layer today, so none is made: the
# check holds should a volume come back, docker_container.c's add_workspace.)
volumes_of() { # WARM_ID: how many volumes carry its label; fails (saying why) when docker does
	local out
	out=$(engine_out volume ls -q --filter "label=sandboxd.sandbox=pool:$1") ||
		{ printf 'docker failed: %s' "$(head -c 200 "$_T/engine.err")"; return 1; }
	grep -c . <<<"$out"
}
api POST "$SB/$A/close" "" "$OT"
expect_status 204 'the pooled sandbox closes'
check 'its container is removed' wait_until 20 gone "$WCID"
check_eq 'and its volume' 0 "$(volumes_of "$WID")"

# ---- concurrent creates never share a warm container -----------------------------------------
check 'the pool is full again' wait_until 60 pool_full
N=4
for ((i = 0; i < N; i++)); do
	curl -s -o "$_T/c$i" -w '%{http_code}' -X POST -H "Authorization: Bearer $OT" \
		-H 'Content-Type: application/json' -d '{}' "$SANDBOXD_URL$SB" >"$_T/s$i" &
done
wait
IDS=()
for ((i = 0; i < N; i++)); do
	check_eq "concurrent create $i: 201" 201 "$(cat "$_T/s$i")"
	IDS+=("$(jq -r .id "$_T/c$i")")
	_it_sandbox_token "${IDS[-1]}" # for the run's check that no token reaches a log
done
in_list=$(printf "'%s'," "${IDS[@]}")
in_list=${in_list%,}
check_eq "$N sandboxes, $N different containers" "$N" \
	"$(sql "select count(distinct container_id) from sandboxes where id in ($in_list)")"
POOLED=$(sql "select count(*) from audit_log where action = 'sandbox.create' and sandbox_id in ($in_list) and details->>'pooled' = 'true'")
check_cond "at least the $POOL ready ones were taken ($POOLED pooled)" "(( POOLED >= POOL ))"
check_eq 'each pooled create claimed exactly one warm row, its own container' "$POOLED" \
	"$(sql "select count(*) from warm_containers w join sandboxes s on s.id = w.claimed_by
	        where s.id in ($in_list) and w.container_id = s.container_id")"
check_eq 'no warm row is claimed twice' 0 \
	"$(sql "select count(*) from (select claimed_by from warm_containers where claimed_by in ($in_list)
	        group by claimed_by having count(*) > 1) d")"
for id in "${IDS[@]}"; do
	api POST "$SB/$id/exec" '{"cmd":"printenv SANDBOX_ID"}' "$OT"
	expect_json .stdout "$id" "$id ($(pooled_of "$id" | sed 's/true/pooled/;s/false/cold/')) runs its own commands"
	api POST "$SB/$id/close" "" "$OT"
done

# ---- a warm container whose agent is gone gets its parameters by the archive API ---------------
check 'the pool is full again' wait_until 60 pool_full
while read -r _ cid; do docker exec "$cid" pkill -KILL -x sandboxd-agent; done <<<"$(rows ready)"
api POST "$SB" '{}' "$OT"
expect_status 201 "a create while the warm containers' agents are dead"
D=$(_json .id)
check_eq 'pooled all the same, its parameters by the archive API' 'true|archive' \
	"$(create_audit "$D" pooled handed_by)"
api POST "$SB/$D/exec" '{"cmd":"cat x"}' "$OT"
expect_json .stdout x 'and works'
check_eq 'through an agent that clone.sh started again, on the same key' agent \
	"$(sql "select details->>'backend' from audit_log where action = 'sandbox.exec' and sandbox_id = '$D' order by id desc limit 1")"
api POST "$SB/$D/close" "" "$OT"
# The other one (with no agent) is claimed the same way, or replaced: either serves.

# ---- a warm container killed behind the service's back is never handed out ---------------------
check 'the pool is full again' wait_until 60 pool_full
KILLED=$(rows ready | cut -d' ' -f2)
# shellcheck disable=SC2086
docker kill $KILLED >/dev/null
api POST "$SB" '{}' "$OT"
expect_status 201 'a create right after every warm container was killed'
B=$(_json .id)
check_eq 'gets a container that runs, none of the killed' "" "$(grep -Fx "$(row_cid "$B")" <<<"$KILLED")"
api POST "$SB/$B/exec" '{"cmd":"cat x"}' "$OT"
expect_json .stdout x 'and works'
all_failed() {
	local c
	for c in $KILLED; do
		[[ $(sql "select state from warm_containers where container_id = '$c'") == failed ]] && gone "$c" || return 1
	done
}
check 'the killed rows are failed and their containers removed' wait_until 30 all_failed
# A create that claims one while the reaper is removing it reads its state as removing.
check_eq 'each with its reason' "" "$(for c in $KILLED; do sql "select end_reason from warm_containers where container_id = '$c'"; done |
	grep -vE '^(container stopped|container gone|the warm container is (exited|removing))$')"
api POST "$SB/$B/close" "" "$OT"

# ---- a warm container no row wants is removed --------------------------------------------------
check 'the pool refills after the kill' wait_until 60 pool_full
read -r XID XCID <<<"$(rows ready | head -n 1)"
sql "update warm_containers set state = 'failed', end_reason = 't_pool' where id = '$XID'" >/dev/null
check 'a warm container whose row failed is removed by the reaper' wait_until 30 gone "$XCID"
check 'and the pool is refilled without it' wait_until 60 pool_full

# ---- a draining engine keeps no warm containers (README "Several Docker engines") ---------------
ENG=$INST   # the stack's own engine, named after its instance
AT_EXIT+=("ctl engine activate '$ENG'")
read -r _ DCID <<<"$(rows ready | head -n 1)"
ctl engine drain "$ENG"
check_eq "the stack's engine drains" "engine $ENG: draining" "$CTL_OUT"
retired() { [[ $(sql "select count(*) from warm_containers where instance = '$ENG' and state in ('starting', 'ready')") == 0 ]] && gone "$DCID"; }
check 'its warm containers are retired and removed' wait_until 30 retired
check_eq 'each saying why' 'its engine is draining' "$(sql "select end_reason from warm_containers where container_id = '$DCID'")"
api POST "$SB" '{}' "$OT"
expect_error 503 'no Docker engine has room for another sandbox' 'a create with the only engine draining: 503'
ctl engine activate "$ENG"
check_eq 'activated again' "engine $ENG: active" "$CTL_OUT"
check 'the pool refills' wait_until 60 pool_full
api POST "$SB" '{}' "$OT"
expect_status 201 'and creates are made again'
C=$(_json .id)
check_eq 'from the pool' true "$(pooled_of "$C")"
api POST "$SB/$C/close" "" "$OT"
expect_status 204 'and it closes'

finish
