#!/usr/bin/env bash
# t_engines.sh: several Docker engines under one service (SPEC §8 "Several hosts",
# include/sandboxd/engine/engine.h). Two engines of the test's own on one bridge: a, the stack's own (unix
# socket), and b, reached over tcp:// with mutual TLS as an engine on another machine would
# be, registered with sandboxctl. A stack of its own (its database: its reaper is the only
# one that sees these engines) places sandboxes by free room, never past an engine's
# max_sandboxes under concurrent creates, sends each sandbox's calls to its engine, honours
# a drain, and when b is killed: only b's sandboxes' calls fail (503 docker unavailable),
# creates go to a, and after the grace (SANDBOXD_ENGINE_GRACE) b's sandboxes are failed and
# their tokens revoked; once b is back, what it still runs that no live sandbox owns is
# removed, and it takes sandboxes again. Everything it starts is removed on exit.
. "$(dirname "$0")/lib.sh"

for t in "$DOCKERD" ip docker openssl; do
	if ! command -v "$t" >/dev/null 2>&1; then
		fail "$t is installed" "this test starts engines of its own"
		finish
	fi
done
if ! docker image inspect sandboxd-runner:minimal >/dev/null 2>&1; then
	fail 'the runner image is in the host engine' 'run deploy/build-runner-image.sh'
	finish
fi

# The host's docker0 as it is before any engine of this test starts (checked after b's restart).
DOCKER0=$(ip -4 -o addr show docker0 2>/dev/null | awk '{print $4}')
private_engine_dir eng
T=$D/tls
if ! tls_certs "$T"; then
	fail 'certificates for engine b and the service' 'openssl failed'
	finish
fi
TLS_PORT=$(free_port)
private_engine_up eng
second_engine_up -H "tcp://127.0.0.1:$TLS_PORT" --tlsverify --tlscacert "$T/ca.pem" \
	--tlscert "$T/server.pem" --tlskey "$T/server-key.pem"

# ---- a stack of its own on engine a (3 sandboxes at most), with room for b's -----------------------
private_stack_up stack 'a stack of its own (PostgreSQL, sandboxd, nginx) on engine a' \
	SANDBOXD_WORKERS=4 SANDBOXD_BRIDGE="$BR" \
	SANDBOXD_DOCKER_HOST="unix://$SOCK" SANDBOXD_ENGINE_NAME=a SANDBOXD_ENGINE_MAX_SANDBOXES=3 \
	SANDBOXD_ENGINE_GRACE=5 SANDBOXD_POOL_SIZE=0 SANDBOXD_MAX_SANDBOXES=20 \
	SANDBOXD_REAPER_INTERVAL=1 SANDBOXD_SANDBOX_MEMORY_MB=256 \
	SANDBOXD_SANDBOX_NETWORK=bridge SANDBOXD_EGRESS=open SANDBOXD_IMAGES=minimal=sandboxd-runner:minimal
private_stack_use stack

# ---- the engines' table: a at start, b with sandboxctl ------------------------------------------------
eng_of() { sql "select coalesce(engine, '') from sandboxes where id = '$1'"; }
a_registered() { [[ $(sql "select url || ' ' || max_sandboxes || ' ' || state from docker_engines where name = 'a'") == "unix://$SOCK 3 active" ]]; }
check 'engine a, the own, is registered at start (URL, SANDBOXD_ENGINE_MAX_SANDBOXES, active)' wait_until 20 a_registered
ctl engine add 'B!' "tcp://127.0.0.1:$TLS_PORT"
check_eq 'engine add with a bad name: exit 2' 2 "$CTL_RC"
check_eq 'naming the problem' "sandboxctl: the engine name 'B!' must be 1 to 63 of [a-z0-9._-], starting with a letter or digit" "$CTL_ERR"
ctl engine add b "https://127.0.0.1:$TLS_PORT"
check_eq 'an https:// engine without TLS files: exit 2' 2 "$CTL_RC"
check_eq 'naming them' 'sandboxctl: an https:// engine needs --ca, --cert and --key' "$CTL_ERR"
ctl engine add b "tcp://127.0.0.1:$TLS_PORT" --ca "$T/ca.pem" --cert "$T/client.pem"
check_eq 'half a TLS triple: exit 2' 2 "$CTL_RC"
check_eq 'naming it' 'sandboxctl: TLS needs all of --ca, --cert and --key' "$CTL_ERR"
ctl engine add b "tcp://127.0.0.1:$TLS_PORT" --ca "$T/ca.pem" --cert "$T/client.pem" \
	--key "$T/client-key.pem" --max 4
check_eq 'engine b is added (TLS, room for 4)' 'engine b: added' "$CTL_OUT"
ctl engine add b "tcp://127.0.0.1:$TLS_PORT"
check_eq 'a plain tcp:// engine (no TLS files): exit 2' 2 "$CTL_RC"
check_eq 'naming the danger and the way out' 'sandboxctl: a tcp:// engine without --ca, --cert and --key is plain HTTP (whoever reaches it is root on its machine): give them, or say --insecure' "$CTL_ERR"
check_eq 'and nothing was registered (b, over TLS, only)' 1 "$(sql "select count(*) from docker_engines where url like 'tcp://%'")"
ctl engine add plain "tcp://127.0.0.1:1" --insecure --max 0
check_eq 'with --insecure, the operator'"'"'s explicit word, it is added' 'engine plain: added' "$CTL_OUT"
ctl engine remove plain
check_eq 'and removed (it never held a sandbox)' 'engine plain: removed' "$CTL_OUT"
ctl engine add b "tcp://127.0.0.1:$TLS_PORT" --ca "$T/ca.pem" --cert "$T/client.pem" \
	--key "$T/client-key.pem" --max 4
check_eq 'adding it again: exit 4' 4 "$CTL_RC"
check_eq 'saying so' 'sandboxctl: the engine b is already registered' "$CTL_ERR"
b_seen() { [[ $(sql "select last_seen_at is not null and down_since is null from docker_engines where name = 'b'") == t ]]; }
check 'the reaper reaches b over TLS (last_seen_at)' wait_until 20 b_seen
ctl engine list
check 'engine list shows both, active and up, with their room' eval \
	'grep -Eq "^a +active +up +0 +0 +3  unix://" <<<"$CTL_OUT" && grep -Eq "^b +active +up +0 +0 +4  tcp://127.0.0.1:$TLS_PORT\$" <<<"$CTL_OUT"'

# ---- placement by free room: a 3, b 4 ----------------------------------------------------------------
O="en$SFX"
mk_repo "$O" r
on_engine() { # SANDBOX ENGINE: its container runs there (and not on the other)
	local l="label=sandboxd.sandbox=$1" here there
	if [[ $2 == a ]]; then here=$(dk ps -q --filter "$l"); there=$(dk2 ps -aq --filter "$l")
	else here=$(dk2 ps -q --filter "$l"); there=$(dk ps -aq --filter "$l"); fi
	[[ -n $here && -z $there ]]
}
IDS=()
WANT=(b a b a b a b)   # the most free room first, ties by name: 3/4, 3/3, 2/3, 2/2, 1/2, 1/1, 0/1
for i in "${!WANT[@]}"; do
	api POST "$SB" '{}' "$OT"
	expect_status 201 "sandbox $((i + 1)) is made"
	IDS+=("$(_json .id)")
	check_eq "and placed on ${WANT[$i]}" "${WANT[$i]}" "$(eng_of "${IDS[$i]}")"
	check "its container runs on ${WANT[$i]}, not on the other" on_engine "${IDS[$i]}" "${WANT[$i]}"
done
api POST "$SB" '{}' "$OT"
expect_error 503 'no Docker engine has room for another sandbox' 'an eighth: 503, every engine is full'
check_eq 'and leaves no row behind' 7 "$(sql "select count(*) from sandboxes s join accounts a on a.id = s.account_id where a.login = '$O'")"
BB=${IDS[0]} AA=${IDS[1]}
api POST "$SB/$BB/exec" '{"cmd":"cat x"}' "$OT"
expect_json .stdout x 'a sandbox on b runs commands (cloned over the bridge from b)'
api POST "$SB/$BB/write" '{"path":"w","content":"Yg=="}' "$OT"
expect_status 200 'a file written to it'
api POST "$SB/$BB/read" '{"path":"w"}' "$OT"
expect_json .content Yg== 'and read back'
check_eq 'the file is in its container on b' b "$(dk2 exec "$(dk2 ps -q --filter "label=sandboxd.sandbox=$BB")" cat /workspace/repo/w)"
api POST "$SB/$AA/exec" '{"cmd":"cat x"}' "$OT"
expect_json .stdout x 'a sandbox on a too'
for id in "${IDS[@]:2}"; do
	api POST "$SB/$id/close" "" "$OT"
	expect_status 204 "closing $id"
done
gone_from() { [[ -z $(dk ps -aq --filter "label=sandboxd.sandbox=$1") && -z $(dk2 ps -aq --filter "label=sandboxd.sandbox=$1") ]]; }
check 'a closed sandbox'"'"'s container is removed from its engine' gone_from "${IDS[2]}"

# ---- concurrent creates never pass an engine's maximum ---------------------------------------------
# a has 2 of 3 free, b 3 of 4: ten creates at once, five are made.
for i in $(seq 1 10); do
	curl -s -m 120 -o "$_T/race$i.json" -w '%{http_code}' -X POST -H "Authorization: Bearer $OT" \
		-H 'Content-Type: application/json' -d '{}' "$SANDBOXD_URL$SB" >"$_T/race$i.code" &
done
wait
made=0 full=0
for i in $(seq 1 10); do
	case $(cat "$_T/race$i.code") in
	201) made=$((made + 1)); IDS+=("$(jq -r .id "$_T/race$i.json")") ;;
	503) [[ $(jq -r .message "$_T/race$i.json") == 'no Docker engine has room for another sandbox' ]] && full=$((full + 1)) ;;
	esac
done
check_eq 'ten creates at once: five made' 5 "$made"
check_eq 'and five refused: no Docker engine has room' 5 "$full"
live_on() { sql "select count(*) from sandboxes where engine = '$1' and state in ('starting', 'ready')"; }
check_eq 'a holds its maximum, 3' 3 "$(live_on a)"
check_eq 'b its maximum, 4' 4 "$(live_on b)"
check_eq 'as its engine sees it' 4 "$(dk2 ps -q --filter "label=sandboxd.instance=$SANDBOXD_INSTANCE" | wc -l)"
# Back to one sandbox on each (AA on a, BB on b).
for id in "${IDS[@]:7}"; do
	api POST "$SB/$id/close" "" "$OT"
	expect_status 204 "closing $id"
done

# ---- drain: no new sandboxes on b, the one there lives on --------------------------------------------
ctl engine drain b
check_eq 'engine drain b' 'engine b: draining' "$CTL_OUT"
DR=()
for i in 1 2; do
	api POST "$SB" '{}' "$OT"
	expect_status 201 "with b draining, create $i is made"
	DR+=("$(_json .id)")
	check_eq 'on a, though b has more room' a "$(eng_of "${DR[-1]}")"
done
api POST "$SB" '{}' "$OT"
expect_error 503 'no Docker engine has room for another sandbox' 'a full and b draining: 503'
api POST "$SB/$BB/exec" '{"cmd":"cat w"}' "$OT"
expect_json .stdout b 'the sandbox on the draining engine lives on'
ctl engine drain nosuch
check_eq 'draining an unknown engine: exit 3' 3 "$CTL_RC"
check_eq 'saying so' 'sandboxctl: no engine is named nosuch' "$CTL_ERR"
ctl engine activate b
check_eq 'engine activate b' 'engine b: active' "$CTL_OUT"
for id in "${DR[@]}"; do
	api POST "$SB/$id/close" "" "$OT"
	expect_status 204 "closing $id"
done

# ---- b is killed: only its sandboxes fail, creates go to a ---------------------------------------------
second_engine_kill
b_down() { [[ $(sql "select down_since is not null from docker_engines where name = 'b'") == t ]]; }
check 'the reaper finds b down (down_since, last_error)' wait_until 20 b_down
check 'and says why' eval '[[ -n $(sql "select last_error from docker_engines where name = '\''b'\''") ]]'
# A call that must ask b fails; one that a worker can serve from what it knows (the
# agent's address, cached) may still be served by the container, which lives on.
api POST "$SB/$BB/close" '{"save":true}' "$OT"
expect_json_match .error '^its work could not be saved: docker create exec: ' "b's sandbox: a close that saves its work needs b: refused, naming docker"
check_eq 'with 409, and the sandbox is not closed' '409 ready' "$STATUS $(sql "select state from sandboxes where id = '$BB'")"
api POST "$SB/$BB/read" '{"path":"w"}' "$OT"
if [[ $STATUS == 200 ]]; then
	expect_json .content Yg== "b's sandbox: a read served by its agent (its address known)"
else
	expect_error 503 'docker unavailable' "b's sandbox: a read that needs b answers 503 docker unavailable"
fi
api POST "$SB/$AA/exec" '{"cmd":"cat x"}' "$OT"
expect_json .stdout x "a's sandbox is not touched: it runs commands"
api GET /healthz "" -
expect_status 200 '/healthz: 200 (the own engine answers)'
api POST "$SB" '{}' "$OT"
expect_status 201 'a create with b down is made'
NA=$(_json .id)
check_eq 'on a, though b has more room' a "$(eng_of "$NA")"
state() { sql "select state || ' ' || coalesce(end_reason, '') from sandboxes where id = '$1'"; }
b_failed() { [[ $(state "$BB") == 'failed docker engine unavailable' ]]; }
check "past the grace, b's sandbox is failed: docker engine unavailable" wait_until 30 b_failed
check_eq 'its git token is revoked' 0 "$(sql "select count(*) from tokens where sandbox_id = '$BB' and revoked_at is null")"
check_eq 'the reaper audits it' 1 "$(sql "select count(*) from audit_log where action = 'sandbox.reconcile' and via = 'reaper' and sandbox_id = '$BB' and details->>'reason' = 'docker engine unavailable'")"
check_eq "a's sandboxes live on" 'ready ready' "$(state "$AA" | cut -d' ' -f1) $(state "$NA" | cut -d' ' -f1)"
api POST "$SB/$BB/exec" '{"cmd":"true"}' "$OT"
expect_error 410 'sandbox is failed' "b's sandbox answers 410 sandbox is failed"

# ---- b comes back: what it runs that no live sandbox owns is removed ------------------------------
second_engine_start
check 'b answers again' wait_until 60 ping2_ok
check_eq "the host's docker0 is untouched by b's start on its old store (its own bridge)" "$DOCKER0" "$(ip -4 -o addr show docker0 2>/dev/null | awk '{print $4}')"
b_clean() { [[ -z $(dk2 ps -aq --filter "label=sandboxd.instance=$SANDBOXD_INSTANCE") ]]; }
check "the reaper removes b's leftovers (the failed sandbox's container)" wait_until 30 b_clean
check 'b is up again in the table' wait_until 20 b_seen
api POST "$SB" '{}' "$OT"
expect_status 201 'a new sandbox'
NB=$(_json .id)
check_eq 'goes to b again (the most room)' b "$(eng_of "$NB")"
api POST "$SB/$NB/exec" '{"cmd":"cat x"}' "$OT"
expect_json .stdout x 'and works there'

# ---- remove: refused while an engine runs sandboxes ---------------------------------------------------
ctl engine remove b
check_eq 'engine remove b while a sandbox runs there: exit 4' 4 "$CTL_RC"
check_eq 'saying what runs' 'sandboxctl: the engine b still runs 1 sandboxes and 0 warm containers: drain it and wait for them to end' "$CTL_ERR"
api POST "$SB/$NB/close" "" "$OT"
expect_status 204 'its sandbox closes'
ctl engine remove b
check_eq 'then engine remove b' 'engine b: removed' "$CTL_OUT"
ctl engine list
check 'engine list no longer has b, still has a' eval '! grep -q "^b " <<<"$CTL_OUT" && grep -q "^a " <<<"$CTL_OUT"'
check_eq "b's ended sandboxes keep their rows (engine NULL)" '' "$(eng_of "$BB")"
for id in "$AA" "$NA"; do
	api POST "$SB/$id/close" "" "$OT"
	expect_status 204 "closing $id"
done

finish
