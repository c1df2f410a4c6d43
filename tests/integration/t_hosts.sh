#!/usr/bin/env bash
# t_hosts.sh: several sandboxd hosts (SPEC §8 "Several hosts", README "Several sandboxd
# hosts"). Two stacks on this machine as two hosts would be: a and b, each with its own
# nginx (a public port and a relay listener), sandboxd and Docker engine (each engine on a
# bridge of its own, where that host's nginx also listens for its sandboxes' git), against
# one PostgreSQL (a's) and one repositories folder and keys (a's: SANDBOXD_SHARE_STACK).
# Each host registers its engine as its own (docker_engines.relay_url). A sandbox made
# through one host is used and closed through the other: the request is relayed by nginx
# (X-Accel-Redirect, then the owner's relay listener, with an HMAC token), and each call
# has its one audit row with the client's address and request id. Forged relays are
# refused with their texts, beside a good one made here with the key; a relayed request is
# never relayed again. Creates placed by free room across both engines are made by the
# engine's host; the per-account limit holds across both; each host's reaper keeps its
# own engine, one reaper at a time does the cluster's work; an engine that stops fails only
# its own sandboxes, and a host that stops has its sandboxes failed by the other once its
# lease is gone past the grace. Everything it starts is removed on exit, also on failure.
. "$(dirname "$0")/lib.sh"

for t in "$DOCKERD" ip docker openssl; do
	if ! command -v "$t" >/dev/null 2>&1; then
		fail "$t is installed" "this test starts engines of its own"
		finish
	fi
done
if [[ $(id -u) != 0 ]]; then
	skip 'not root: engines and bridges of its own need root'
	finish
fi
if ! docker image inspect sandboxd-runner:minimal >/dev/null 2>&1; then
	fail 'the runner image is in the host engine' 'run deploy/build-runner-image.sh'
	finish
fi

# ---- two engines, each on a bridge of its own (lib.sh) ----------------------------------------------
private_engine_dir hst
chmod 0711 "$D" # the service's user reaches the engines' sockets inside
private_engine_up hst
second_engine_apart

# ---- two hosts: a (the database's), b (sharing it) ------------------------------------------------------
RA=$(free_port) RB=$(free_port)
COMMON=(SANDBOXD_WORKERS=3 SANDBOXD_GIT_WORKERS=2 SANDBOXD_ENGINE_MAX_SANDBOXES=4
	SANDBOXD_MAX_SANDBOXES=4 SANDBOXD_ENGINE_GRACE=5 SANDBOXD_POOL_SIZE=0 SANDBOXD_REAPER_INTERVAL=1
	SANDBOXD_SANDBOX_MEMORY_MB=256 SANDBOXD_SANDBOX_NETWORK=bridge SANDBOXD_EGRESS=open
	SANDBOXD_IMAGES=minimal=sandboxd-runner:minimal)
private_stack_up a "host a: nginx (relay listener :$RA), sandboxd, PostgreSQL, engine a on $BR" \
	"${COMMON[@]}" SANDBOXD_BRIDGE="$BR" SANDBOXD_DOCKER_HOST="unix://$SOCK" \
	SANDBOXD_ENGINE_NAME=a SANDBOXD_RELAY_PORT="$RA"
private_stack_up b "host b: nginx (relay listener :$RB), sandboxd, engine b on $BR2; a's database and repositories" \
	"${COMMON[@]}" SANDBOXD_BRIDGE="$BR2" SANDBOXD_DOCKER_HOST="unix://$SOCK2" \
	SANDBOXD_ENGINE_NAME=b SANDBOXD_RELAY_PORT="$RB" SANDBOXD_SHARE_STACK="$D/a"
private_stack_use b
URL_B=$SANDBOXD_URL
private_stack_use a
URL_A=$SANDBOXD_URL
RELAY_A=http://127.0.0.1:$RA RELAY_B=http://127.0.0.1:$RB
KEY=$(cat "$D/a/keys/relay.key")
check_eq 'one database: b'"'"'s env names a'"'"'s' "$SANDBOXD_DATABASE_URL" \
	"$(sed -n "s/^SANDBOXD_DATABASE_URL='\(.*\)'$/\1/p" "$D/b/local.env")"
via_b() { local SANDBOXD_URL=$URL_B; "$@"; }

registered() { [[ $(sql "select string_agg(name || ' ' || coalesce(relay_url, '-'), ',' order by name) from docker_engines") == "a $RELAY_A,b $RELAY_B" ]]; }
check 'each host registers its engine as its own (relay_url)' wait_until 30 registered
room() { sql "select string_agg(name || ' ' || host_up || ' ' || healthy, ',' order by name) from engine_room"; }
hosts_up() { [[ $(room) == 'a true true,b true true' ]]; }
wait_until 30 hosts_up
check_eq 'both hosts up (their reapers'"'"' leases) and both engines answering' 'a true true,b true true' "$(room)"
ctl engine list
check 'engine list names each engine'"'"'s host' eval \
	'grep -Eq "^a .*unix://$SOCK  host $RELAY_A\$" <<<"$CTL_OUT" && grep -Eq "^b .*unix://$SOCK2  host $RELAY_B\$" <<<"$CTL_OUT"'

# ---- creates: placed by free room across both engines, made by the engine's host -----------------------
O="ho$SFX"
mk_repo "$O" r
eng_of() { sql "select coalesce(engine, '') from sandboxes where id = '$1'"; }
on_engine() { # SANDBOX a|b: its container runs on that engine and not on the other
	local l="label=sandboxd.sandbox=$1" here there
	if [[ $2 == a ]]; then here=$(dk ps -q --filter "$l"); there=$(dk2 ps -aq --filter "$l")
	else here=$(dk2 ps -q --filter "$l"); there=$(dk ps -aq --filter "$l"); fi
	[[ -n $here && -z $there ]]
}
rows_of() { sql "select count(*) from audit_log where request_id = '$1'"; }
row_is() { # REQUEST_ID ACTION STATUS: its one row, from the client's address
	[[ $(rows_of "$1") == 1 ]] &&
		[[ $(sql "select action || ' ' || status || ' ' || remote_addr from audit_log where request_id = '$1'") == "$2 $3 127.0.0.1" ]]
}
IDS=()
# a 4 and b 4 free: a (ties by name); then b 4 > a 3; a 3 = b 3: a; b. Through the host
# that does not own the engine each time: every create is relayed.
WANT=(a b a b) THROUGH=(b a b a)
for i in 0 1 2 3; do
	if [[ ${THROUGH[$i]} == b ]]; then via_b api POST "$SB" '{}' "$OT"; else api POST "$SB" '{}' "$OT"; fi
	expect_status 201 "create $((i + 1)) through host ${THROUGH[$i]}"
	IDS+=("$(_json .id)")
	check_eq "placed on engine ${WANT[$i]} (the most free room), relayed to its host" "${WANT[$i]}" "$(eng_of "${IDS[$i]}")"
	check "its container runs on ${WANT[$i]}, not on the other" on_engine "${IDS[$i]}" "${WANT[$i]}"
	check "one audit row for it (sandbox.create 201, the client's address, request id $REQ_ID)" \
		row_is "$REQ_ID" sandbox.create 201
done
SA=${IDS[0]} SBB=${IDS[1]}

# ---- the per-account limit holds across both hosts -----------------------------------------------------
api POST "$SB" '{}' "$OT"
expect_error 429 'sandbox limit reached' 'a fifth create through a: 429'
via_b api POST "$SB" '{}' "$OT"
expect_error 429 'sandbox limit reached' 'and through b: 429'
for id in "${IDS[@]:2}"; do
	api POST "$SB/$id/close" "" "$OT"
	expect_status 204 "closing $id"
done
# Two places free; six creates at once, three through each host.
for i in 1 2 3 4 5 6; do
	url=$URL_A
	((i % 2)) && url=$URL_B
	curl -s -m 120 -o "$_T/race$i.json" -w '%{http_code}' -X POST -H "Authorization: Bearer $OT" \
		-H 'Content-Type: application/json' -d '{}' "$url$SB" >"$_T/race$i.code" &
done
wait
made=0 limited=0 RACE=()
for i in 1 2 3 4 5 6; do
	case $(cat "$_T/race$i.code") in
	201) made=$((made + 1)); RACE+=("$(jq -r .id "$_T/race$i.json")") ;;
	429) [[ $(jq -r .message "$_T/race$i.json") == 'sandbox limit reached' ]] && limited=$((limited + 1)) ;;
	esac
done
check_eq 'six creates at once, split between the hosts: two made' 2 "$made"
check_eq 'and four refused: sandbox limit reached' 4 "$limited"
check_eq 'the account runs four, its limit' 4 "$(sql "select count(*) from sandboxes s join accounts a on a.id = s.account_id where a.login = '$O' and s.state in ('starting', 'ready')")"
for id in "${RACE[@]}"; do
	api POST "$SB/$id/close" "" "$OT"
	expect_status 204 "closing $id"
done

# ---- a sandbox of host a used through host b (relayed) ----------------------------------------------------
CA=$(dk ps -q --filter "label=sandboxd.sandbox=$SA")
via_b api POST "$SB/$SA/exec" '{"cmd":"cat x; hostname"}' "$OT"
expect_json .stdout "x
${CA:0:12}" 'exec through b runs in the sandbox on a'
check 'its one audit row (sandbox.exec 200, the client'"'"'s address, b'"'"'s request id)' row_is "$REQ_ID" sandbox.exec 200
check_eq 'the exec was held by a'"'"'s holder, through the agent' agent \
	"$(sql "select details->>'backend' from audit_log where request_id = '$REQ_ID'")"
# Streamed: the lines come as the command writes them, through both nginx.
curl -sSN --max-time 60 -D "$_T/sh" -H "Authorization: Bearer $OT" -H 'Accept: application/x-ndjson' \
	-H 'Content-Type: application/json' --data-binary '{"cmd":"echo one; sleep 3; echo two"}' \
	"$URL_B$SB/$SA/exec" 2>"$_T/curl.err" |
	while IFS= read -r line; do printf '%s %s\n' "$(date +%s%3N)" "$line"; done >"$_T/lines"
REQ_ID=$(tr -d '\r' <"$_T/sh" | sed -n 's/^[Xx]-[Rr]equest-[Ii]d: //p')
check_eq 'a streamed exec through b: each line as it came' 'one two' \
	"$(cut -d' ' -f2- "$_T/lines" | jq -j 'select(has("stdout")) | .stdout' | tr '\n' ' ' | sed 's/ $//')"
first=$(head -n 1 "$_T/lines" | cut -d' ' -f1) end=$(tail -n 1 "$_T/lines" | cut -d' ' -f1)
check_cond 'its first line arrived while the command still ran (the relay does not buffer)' "(( $end - $first >= 2000 ))"
check_eq 'and the result last' 0 "$(tail -n 1 "$_T/lines" | cut -d' ' -f2- | jq -r .exitCode)"
check 'its one audit row' row_is "$REQ_ID" sandbox.exec 200
via_b api POST "$SB/$SA/write" '{"path":"w.txt","content":"aGkgZnJvbSBi"}' "$OT"
expect_json .size 9 'write through b'
check 'its one audit row' row_is "$REQ_ID" sandbox.write 200
check_eq 'the file is in the container on a' 'hi from b' "$(dk exec "$CA" cat /workspace/repo/w.txt)"
via_b api POST "$SB/$SA/read" '{"path":"w.txt"}' "$OT"
expect_json .content aGkgZnJvbSBi 'read through b'
check 'its one audit row' row_is "$REQ_ID" sandbox.read 200
# Raw files: 3 MiB (past nginx's 1 MiB body buffer: a temporary file on both hosts).
head -c 3145728 /dev/urandom >"$_T/big"
code=$(curl -s -m 120 -o "$_T/put.json" -D "$_T/ph" -w '%{http_code}' -X PUT -H "Authorization: Bearer $OT" \
	-H 'Content-Type: application/octet-stream' --data-binary "@$_T/big" "$URL_B$SB/$SA/files/big.bin?mode=0600")
REQ_ID=$(tr -d '\r' <"$_T/ph" | sed -n 's/^[Xx]-[Rr]equest-[Ii]d: //p')
check_eq 'a raw PUT of 3 MiB through b: 201 and its size' '201 3145728' "$code $(jq -r .size "$_T/put.json")"
check 'its one audit row' row_is "$REQ_ID" sandbox.file_put 201
check_eq 'the bytes in the container on a' "$(sha256sum <"$_T/big" | cut -d' ' -f1)" \
	"$(dk exec "$CA" sha256sum /workspace/repo/big.bin | cut -d' ' -f1)"
code=$(curl -s -m 120 -o "$_T/got" -D "$_T/gh" -w '%{http_code}' -H "Authorization: Bearer $OT" "$URL_B$SB/$SA/files/big.bin")
REQ_ID=$(tr -d '\r' <"$_T/gh" | sed -n 's/^[Xx]-[Rr]equest-[Ii]d: //p')
check_eq 'a raw GET through b: 200' 200 "$code"
check 'the same bytes' cmp -s "$_T/big" "$_T/got"
check 'its one audit row' row_is "$REQ_ID" sandbox.file_get 200
# MCP: a lone tools/call is relayed whole.
via_b api POST /mcp "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"sandbox_exec\",\"arguments\":{\"owner\":\"$O\",\"repo\":\"r\",\"sandbox_id\":\"$SA\",\"command\":\"cat w.txt\"}}}" "$OT"
expect_json '.result.structuredContent.stdout' 'hi from b' 'MCP sandbox_exec through b'
expect_json .id 7 'with its JSON-RPC id'
check 'its one audit row (mcp)' eval '[[ $(rows_of "$REQ_ID") == 1 && $(sql "select via from audit_log where request_id = '"'"'$REQ_ID'"'"'") == mcp ]]'
via_b api GET "$SB/$SA" "" "$OT"
expect_json .state ready 'GET through b'
check 'its one audit row' row_is "$REQ_ID" sandbox.get 200
# A sandbox of b's, through a.
via_b api POST "$SB/$SBB/exec" '{"cmd":"cat x"}' "$OT"
expect_json .stdout x "b's sandbox through b itself (no relay)"
api POST "$SB/$SBB/exec" '{"cmd":"cat x"}' "$OT"
expect_json .stdout x "b's sandbox through a (relayed)"
check 'its one audit row' row_is "$REQ_ID" sandbox.exec 200
# A relayed call that fails keeps its status and text.
via_b api POST "$SB/$SA/read" '{"path":"nope"}' "$OT"
check_eq 'a relayed read of a missing file: 404 with its text' '404 no such file: nope' "$STATUS $(_json .error)"
check 'its one audit row' row_is "$REQ_ID" sandbox.read 404

# ---- forged relays: refused with their texts; a good one made here with the key ---------------------------
LC_ALL=C
mac_field() { printf '%d:%s' "${#1}" "$1"; }
token() { # METHOD URI TARGET TIME ADDR ID [KEYHEX]: a relay token as app/proto/relay.c makes it
	local m
	m=$(printf '%s' "$(mac_field v1)$(mac_field "$1")$(mac_field "$2")$(mac_field "$3")$(mac_field "$4")$(mac_field "$5")$(mac_field "$6")" |
		openssl dgst -sha256 -mac HMAC -macopt "hexkey:${7:-$KEY}" | awk '{print $NF}')
	printf 'v1_%s_%s_%s_%s' "$4" "$5" "$6" "$m"
}
# shellcheck disable=SC2034 # BODY, HEADERS and LAST_REQ are what expect_error and header read
direct() { # PORT TOKEN|- PATH [TOKEN'S BEARER]: GET PATH on a relay listener
	local h=()
	[[ $2 != - ]] && h=(-H "X-Sandboxd-Relay: $2")
	STATUS=$(curl -s -m 30 -o "$_T/body" -D "$_T/headers" -w '%{http_code}' "${h[@]}" \
		-H "Authorization: Bearer ${4:-$OT}" "http://127.0.0.1:$1$3")
	BODY=$(cat "$_T/body") HEADERS=$(tr -d '\r' <"$_T/headers")
	LAST_REQ="GET :$1$3 (relay $2)"
}
RID=0000beef$SFX$SFX
NOW=$(date +%s)
api GET "/_relay/http/127.0.0.1:$RA/GET/$(token GET "$SB/$SA" "$RELAY_A" "$NOW" 127.0.0.1 "$RID")"
expect_status 404 "the relay's internal location, asked by a client: 404"
check_eq 'and nothing reached a sandboxd' 0 "$(rows_of "$RID")"
denied_rows() { sql "select count(*) from audit_log where action = 'relay.denied' and status = 403"; }
before=$(denied_rows)
direct "$RA" - "$SB/$SA"
expect_error 403 'relay refused: no X-Sandboxd-Relay header' "a's relay listener without the header"
direct "$RA" "v1_garbage" "$SB/$SA"
expect_error 403 'relay refused: a malformed X-Sandboxd-Relay header' 'with a malformed one'
direct "$RA" "v1_${NOW}_127.0.0.1_${RID}_$(printf '%064d' 0)" "$SB/$SA"
expect_error 403 'relay refused: the signature does not match' 'with a MAC that is not the key'"'"'s'
direct "$RA" "$(token GET "$SB/$SA" "$RELAY_A" "$NOW" 127.0.0.1 "$RID" "$(printf '%064d' 1)")" "$SB/$SA"
expect_error 403 'relay refused: the signature does not match' 'signed with another key'
direct "$RA" "$(token GET "$SB/$SA" "$RELAY_A" "$((NOW - 600))" 127.0.0.1 "$RID")" "$SB/$SA"
expect_error 403 "relay refused: the signature's time is not within 30 s of this host's clock" 'ten minutes old'
direct "$RA" "$(token GET "$SB/$SA" "$RELAY_A" "$NOW" 127.0.0.1 "$RID")" "$SB/$SBB"
expect_error 403 'relay refused: the signature does not match' 'for another path'
direct "$RA" "$(token POST "$SB/$SA" "$RELAY_A" "$NOW" 127.0.0.1 "$RID")" "$SB/$SA"
expect_error 403 'relay refused: the signature does not match' 'for another method'
direct "$RB" "$(token GET "$SB/$SA" "$RELAY_A" "$NOW" 127.0.0.1 "$RID")" "$SB/$SA"
expect_error 403 'relay refused: the signature does not match' "a's token sent to b"
check_eq 'each refusal audited (relay.denied, 403)' $((before + 8)) "$(denied_rows)"
check_eq 'none under the forged request id' 0 "$(rows_of "$RID")"
direct "$RA" "$(token GET "$SB/$SA" "$RELAY_A" "$NOW" 192.0.2.7 "$RID")" "$SB/$SA"
expect_json .id "$SA" 'the same with the key and the time: served (200)'
check_eq 'its row has the token'"'"'s client address and request id' 'sandbox.get 200 192.0.2.7' \
	"$(sql "select action || ' ' || status || ' ' || remote_addr from audit_log where request_id = '$RID'")"
check_eq 'and the answer says that request id' "$RID" "$(header X-Request-Id)"
RID2=0000cafe$SFX$SFX
direct "$RA" "$(token GET "$SB/$SA" "$RELAY_A" "$NOW" 127.0.0.1 "$RID2")" "$SB/$SA" "dfy_not_a_token"
expect_error 401 'bad credentials' "a good relay still needs the client's own credentials"
RID3=0000f00d$SFX$SFX
direct "$RB" "$(token GET "$SB/$SA" "$RELAY_B" "$NOW" 127.0.0.1 "$RID3")" "$SB/$SA"
expect_error 503 "the sandbox runs on the host at $RELAY_A, and this request came here by relay already: it is not relayed again" \
	"a good relay to b for a's sandbox: never relayed again"

# ---- the reapers: one lease for the cluster's work, one per host for its own engine --------------------------
reaper_of() { pgrep -x -P "$(pid_in "$D/$1/run/sandboxd/sandboxd.pid")" sandboxd-reaper; }
holder() { sql "select split_part(holder, ':', 2) from leases where name = '$1' and expires_at > now()"; }
check_eq "a's reaper holds a's lease" "$(reaper_of a)" "$(holder "reaper@$RELAY_A")"
check_eq "b's reaper holds b's lease" "$(reaper_of b)" "$(holder "reaper@$RELAY_B")"
CL=$(holder reaper)
check_cond "one reaper holds the cluster's lease ($CL)" "[[ $CL == $(reaper_of a) || $CL == $(reaper_of b) ]]"
keeps_it() { # the same holder at each of three passes (SANDBOXD_REAPER_INTERVAL=1)
	local i
	for i in 1 2 3; do
		sleep 1
		[[ $(holder reaper) == "$CL" ]] || return 1
	done
}
check 'and keeps it, pass after pass' keeps_it
# An idle stop of one sandbox on each engine: each by its host's reaper, once.
sql "update sandboxes set idle_stop_at = now() where id in ('$SA', '$SBB')" >/dev/null
stopped() { [[ $(sql "select count(*) from sandboxes where id in ('$SA', '$SBB') and state = 'stopped' and end_reason = 'idle'") == 2 ]]; }
check 'the idle sandboxes on a and b are stopped' wait_until 30 stopped
sleep 2
check_eq 'each stop audited once' '1 1' \
	"$(sql "select count(*) filter (where sandbox_id = '$SA') || ' ' || count(*) filter (where sandbox_id = '$SBB') from audit_log where action = 'sandbox.stop' and via = 'reaper'")"
gone_everywhere() { [[ -z $(dk ps -aq --filter "label=sandboxd.sandbox=$1") && -z $(dk2 ps -aq --filter "label=sandboxd.sandbox=$1") ]]; }
check 'their containers are removed from their engines' eval 'gone_everywhere "$SA" && gone_everywhere "$SBB"'

# ---- engine b stops: only its sandboxes fail ----------------------------------------------------------------
api POST "$SB" '{}' "$OT"
NA=$(_json .id)
check_eq 'a new sandbox (through a) goes to a' a "$(eng_of "$NA")"
via_b api POST "$SB" '{}' "$OT"
NB=$(_json .id)
check_eq 'the next (through b) to b' b "$(eng_of "$NB")"
second_engine_kill
b_down() { [[ $(sql "select down_since is not null from docker_engines where name = 'b'") == t ]]; }
check "b's reaper finds engine b down" wait_until 20 b_down
api POST "$SB/$NA/exec" '{"cmd":"cat x"}' "$OT"
expect_json .stdout x "a's sandbox runs on"
via_b api POST "$SB/$NA/exec" '{"cmd":"cat x"}' "$OT"
expect_json .stdout x 'also through b (relayed)'
via_b api POST "$SB" '{}' "$OT"
expect_status 201 'a create through b with its engine down'
NA2=$(_json .id)
check_eq 'goes to a (relayed)' a "$(eng_of "$NA2")"
state() { sql "select state || ' ' || coalesce(end_reason, '') from sandboxes where id = '$1'"; }
nb_failed() { [[ $(state "$NB") == 'failed docker engine unavailable' ]]; }
check "past the grace, b's sandbox is failed: docker engine unavailable" wait_until 30 nb_failed
check_eq 'once' 1 "$(sql "select count(*) from audit_log where action = 'sandbox.reconcile' and sandbox_id = '$NB'")"
check_eq "a's sandboxes live on" 'ready ready' "$(state "$NA" | cut -d' ' -f1) $(state "$NA2" | cut -d' ' -f1)"
second_engine_start
b_up() { [[ $(sql "select down_since is null from docker_engines where name = 'b'") == t ]]; }
check 'engine b back: its host finds it up' wait_until 60 b_up
api POST "$SB/$NA2/close" "" "$OT"
expect_status 204 'closing a sandbox on a'
api POST "$SB" '{}' "$OT"
expect_status 201 'a create through a'
NB2=$(_json .id)
check_eq 'goes to b again (more room), relayed' b "$(eng_of "$NB2")"
check 'its container runs on b' on_engine "$NB2" b

# ---- host b stops: its sandboxes are failed by a once its lease is past the grace ---------------------------
PB=$(pid_in "$D/b/run/sandboxd/sandboxd.pid")
kill -KILL -- "-$PB" 2>/dev/null
api POST "$SB/$NB2/exec" '{"cmd":"true"}' "$OT"
expect_error 502 'sandboxd is not answering (bad gateway)' "a call on b's sandbox through a: b's nginx answers 502"
b_host_down() { [[ $(sql "select host_up from engine_room where name = 'b'") == f ]]; }
check "b's lease lapses: host b is down (engine_room.host_up)" wait_until 45 b_host_down
api POST "$SB" '{}' "$OT"
expect_status 201 'a create with host b down'
check_eq 'goes to a, though b has more room' a "$(eng_of "$(_json .id)")"
nb2_failed() { [[ $(state "$NB2") == 'failed sandboxd host unavailable' ]]; }
check "past the grace, a's reaper fails b's sandbox: sandboxd host unavailable" wait_until 30 nb2_failed
check_eq 'its token revoked' 0 "$(sql "select count(*) from tokens where sandbox_id = '$NB2' and revoked_at is null")"
check_eq 'audited once' 1 "$(sql "select count(*) from audit_log where action = 'sandbox.reconcile' and sandbox_id = '$NB2' and details->>'reason' = 'sandboxd host unavailable'")"
check_eq "a's sandbox lives on" ready "$(state "$NA" | cut -d' ' -f1)"

finish
