#!/usr/bin/env bash
# t_egress_sandbox.sh: egress per sandbox (SPEC.md §4 "Limits": {egress: none|web|open},
# never wider than the deployment's SANDBOXD_EGRESS). Only servers this test starts on this
# machine are ever contacted, as in t_egress.sh: a network namespace of its own joined to
# the host by a veth pair in a /30 of 10.213.0.0/16 (nothing routes there but this pair),
# with listeners on ports 80, 443 and 8081 (the "web"), and one listener on the host at the
# sandboxes' gateway address. Then, in the stack's open deployment: a create without egress
# is the deployment's (open, from the warm pool); a none sandbox reaches none of those,
# refused at once, but fetches and pushes through the git endpoint and answers execs,
# reads and a preview through its agent on its own network; a web sandbox reaches 80 and
# 443, not 8081 nor the host; a bad value is a 400 and nothing is made. Restarted as a web
# deployment: open is a 422 with its text, web and none are made. On any exit the stack is
# the open one again.
. "$(dirname "$0")/lib.sh"

export GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=/bin/false
NET=${SANDBOXD_SANDBOX_NETWORK:-}
DEPLOYED=${SANDBOXD_EGRESS:-open}
PORT=${SANDBOXD_URL##*:}
DOMAIN=${SANDBOXD_PREVIEW_DOMAIN:-preview.localhost}

if [ "$(id -u)" -ne 0 ] || ! command -v iptables >/dev/null || [ -z "$NET" ]; then
	fail 'this suite needs root, iptables and the stack'"'"'s own sandbox network' \
		"uid $(id -u), network '${NET}'"
	finish
fi
if [ "$DEPLOYED" != open ]; then
	fail 'this suite runs against an open deployment (it narrows it itself)' "SANDBOXD_EGRESS=$DEPLOYED"
	finish
fi

# --- the namespace with its servers, a listener on the host (lib.sh) ----------------------
# The stack as run.sh made it (open), whatever happened in between.
restore() { [ "${NARROWED:-0}" = 1 ] && stack_up SANDBOXD_EGRESS="$DEPLOYED"; true; }
AT_EXIT+=(egress_lab_down restore)
egress_lab 80 443 8081

# --- helpers ---------------------------------------------------------------------------------
mk_repo "egs$SFX" site
# new_box JSON NAME: a create with that body, 201 expected; ID and CID set.
new_box() {
	api POST "$SB" "$1" "$OT"
	expect_status 201 "$2: 201"
	ID=$(_json .id)
	CID=$(docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$ID")")
	AT_EXIT+=("curl -s -o /dev/null -X POST -H 'Authorization: Bearer $OT' '$SANDBOXD_URL$SB/$ID/close'")
}
clone_done() { api GET "$SB/$1" "" "$OT"; [ "$(_json .clone.state)" = "done" ]; }
net_of() { docker inspect -f '{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}' "$1" 2>/dev/null | xargs; }
box() { docker exec -u "$BOX_USER" -w /workspace/repo "$CID" "$@"; }
# fetch URL: curl's exit code in the sandbox and the time it took (ms); 99 for a body not ours.
fetch() {
	local t0 rc out
	t0=$(date +%s%N)
	out=$(box curl -s --connect-timeout 5 -m 8 "$1" 2>/dev/null)
	rc=$?
	[ "$rc" = 0 ] && [ "$out" != "egress-ok-$SFX" ] && rc=99
	echo "$rc $((($(date +%s%N) - t0) / 1000000))"
}
code() { fetch "$1" | cut -d' ' -f1; }
# refused URL LABEL: curl in the sandbox cannot connect (7), at once (no timeout).
refused() {
	local rc ms
	read -r rc ms <<<"$(fetch "$1")"
	check_eq "$2 is refused (curl: could not connect)" 7 "$rc"
	check "and at once, not after a timeout (${ms} ms)" [ "$ms" -lt 4000 ]
}
audit_egress() { create_audit "$1" egress; }

# --- bad values: 400, nothing made -------------------------------------------------------------
BEFORE=$(sql "select count(*) from sandboxes s join repositories r on r.id = s.repository_id where r.name = 'site' and s.account_id = (select id from accounts where login = 'egs$SFX')")
api POST "$SB" '{"egress":"all"}' "$OT"
expect_error 400 "field 'egress' must be 'none', 'web' or 'open'" "egress all: 400 naming the field"
api POST "$SB" '{"egress":"None"}' "$OT"
expect_error 400 "field 'egress' must be 'none', 'web' or 'open'" 'egress None (case matters): 400'
api POST "$SB" '{"egress":1}' "$OT"
expect_error 400 "field 'egress' must be a string" 'egress 1: 400'
check_eq 'none of those made a sandbox' "$BEFORE" \
	"$(sql "select count(*) from sandboxes s join repositories r on r.id = s.repository_id where r.name = 'site' and s.account_id = (select id from accounts where login = 'egs$SFX')")"

# --- the default: the deployment's egress, from the warm pool ---------------------------------
if [ "${SANDBOXD_POOL_SIZE:-2}" -gt 0 ]; then
	check 'the warm pool has a container ready' wait_until 120 warm_ready_at_least 1
fi
new_box '{}' 'a create without egress'
expect_json .egress open "the create's answer says egress open (the deployment's)"
DEF=$ID
api GET "$SB/$DEF" '' "$OT"
expect_json .egress open 'GET shows egress open'
check_eq "it is on the deployment's network $NET" "$NET" "$(net_of "$CID")"
check_eq 'its create is audited with egress open' open "$(audit_egress "$DEF")"
if [ "${SANDBOXD_POOL_SIZE:-2}" -gt 0 ]; then
	check_eq 'and it came from the warm pool' true \
		"$(create_audit "$DEF" pooled)"
fi
check_eq 'the row keeps egress and network' "open|$NET" "$(sql "select egress || '|' || network from sandboxes where id = '$DEF'")"

# --- none ----------------------------------------------------------------------------------------
new_box '{"egress":"none"}' 'a create with egress none'
expect_json .egress none "the create's answer says none"
NONE=$ID
NCID=$CID
check 'its clone is done (through the git endpoint)' wait_until 90 clone_done "$NONE"
api GET "$SB/$NONE" '' "$OT"
expect_json .egress none 'GET shows egress none'
check_eq "it is on $NET-none only" "$NET-none" "$(net_of "$CID")"
check_eq 'its create is audited with egress none, not pooled' 'none|false' \
	"$(create_audit "$NONE" egress pooled)"
refused "http://$NS_IP:80/" 'none: port 80 of the namespace'
refused "http://$NS_IP:443/" 'none: port 443'
refused "http://$NS_IP:8081/" 'none: port 8081'
refused "http://sandboxd.internal:$HOST_PORT/" "none: the host's other port"
# DNS is not tried from the sandbox (a query would leave for the host's resolvers): the
# rules say it, beside the open network's, which let it through.
sum_of() { printf '%s' "$1" | cksum | cut -d' ' -f1; }
# (To the resolvers it may ask, each its own -d rule: deploy/egress.sh in_rules.)
dns_rule() { # CHAIN: it is listed and lets UDP 53 through to some address
	local rules
	rules=$(iptables -w 10 -S "$1" 2>&1) || { printf '       iptables -S %s: %s\n' "$1" "$rules"; return 1; }
	grep -qE -- '-d [0-9./]+ -p udp -m udp --dport 53 -j RETURN' <<<"$rules" && return 0
	printf '       %s: no UDP 53 rule in\n%s\n' "$1" "$rules"
	return 1
}
check 'open: DNS to the host is let through (its INPUT chain)' \
	dns_rule "SBXD-IN-$(sum_of "$NET")"
# The chain is listed (a chain that is not there, or iptables failing, is no answer) and holds
# rules, none of them for port 53.
no_dns_rule() { # CHAIN
	local rules
	rules=$(iptables -w 10 -S "$1" 2>&1) || { printf '       iptables -S %s: %s\n' "$1" "$rules"; return 1; }
	grep -q -- '-j ' <<<"$rules" || { printf '       %s has no rule\n' "$1"; return 1; }
	! grep -qE -- '--dport 53( |$)' <<<"$rules"
}
check 'none: no DNS to the host (its INPUT chain is there, without the rule)' \
	no_dns_rule "SBXD-IN-$(sum_of "$NET-none")"
check 'none: nothing forwarded, DNS included: the chain ends in refusals' \
	eval '[ "$(iptables -w 10 -S "SBXD-FWD-$(sum_of "$NET-none")" | tail -n 2 | grep -c REJECT)" = 2 ] &&
		! iptables -w 10 -S "SBXD-FWD-$(sum_of "$NET-none")" | grep -q -- "-j RETURN.*--dport\|--dport.*-j RETURN"'
check 'none: git fetch from the service works' box git fetch -q origin
check 'none: git push to the service works' box sh -c \
	'echo none > n && git add n && git commit -qm none && git push -q origin HEAD:refs/heads/from-none'
check_eq 'the push landed' "$(box git rev-parse HEAD)" \
	"$(git --git-dir "$REPOS_DIR/$R.git" rev-parse -q --verify refs/heads/from-none)"
# The agent is reached at the sandbox's address on its own network, not the deployment's.
api POST "$SB/$NONE/exec" '{"cmd":"cat n"}' "$OT"
expect_json .stdout none 'none: an exec answers'
BACKEND=agent
[ "${SANDBOXD_AGENT:-1}" = 0 ] && BACKEND=docker
check_eq "through the $BACKEND (SANDBOXD_AGENT=${SANDBOXD_AGENT:-1})" "$BACKEND" \
	"$(sql "select details->>'backend' from audit_log where sandbox_id = '$NONE' and action = 'sandbox.exec' order by id desc limit 1")"
api POST "$SB/$NONE/read" '{"path":"n"}' "$OT"
expect_json '.content | @base64d' none 'none: a read answers'
check_eq 'none: a raw GET of the file answers (200, its bytes)' '200 none' \
	"$(curl -s -m 30 -o "$_T/raw" -w '%{http_code}' -H "Authorization: Bearer $OT" \
		"$SANDBOXD_URL$SB/$NONE/files/n") $(cat "$_T/raw" 2>/dev/null)"
check_eq "through the $BACKEND" "$BACKEND" \
	"$(sql "select details->>'backend' from audit_log where sandbox_id = '$NONE' and action = 'sandbox.file_get' order by id desc limit 1")"
api POST "$SB/$NONE/exec" '{"cmd":"echo preview-'"$SFX"' > /tmp/index.html; cd /tmp && nohup python3 -m http.server 3000 >/tmp/srv.log 2>&1 &","detach":true}' "$OT"
expect_status 202 'none: a server on port 3000 in the sandbox (a detached exec)'
api POST "$SB/$NONE/previews" '{"port":3000}' "$OT"
expect_status 201 'none: a preview of port 3000'
PVID=$(_json .previewId)
check_eq "the preview's address is the sandbox's on $NET-none" \
	"$(docker inspect -f "{{(index .NetworkSettings.Networks \"$NET-none\").IPAddress}}" "$NCID")" \
	"$(sql "select host(addr) from previews where id = '$PVID'")"
pv_page() { [ "$(curl -s -m 5 -H "Host: $PVID.$DOMAIN:$PORT" "http://127.0.0.1:$PORT/index.html")" = "preview-$SFX" ]; }
check 'none: the preview serves the page through nginx' wait_until 30 pv_page

# --- web in an open deployment -------------------------------------------------------------------
new_box '{"egress":"web"}' 'a create with egress web'
WEB=$ID
check 'its clone is done' wait_until 90 clone_done "$WEB"
api GET "$SB/$WEB" '' "$OT"
expect_json .egress web 'GET shows egress web'
check_eq "it is on $NET-web" "$NET-web" "$(net_of "$CID")"
check_eq 'web: port 80 of the namespace answers' 0 "$(code "http://$NS_IP:80/")"
check_eq 'web: port 443 answers' 0 "$(code "http://$NS_IP:443/")"
refused "http://$NS_IP:8081/" 'web: port 8081'
refused "http://sandboxd.internal:$HOST_PORT/" "web: the host's other port"
check 'web: git push works' box sh -c \
	'echo web > w && git add w && git commit -qm web && git push -q origin HEAD:refs/heads/from-web'

CID=$(docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$DEF")")
check_eq 'open (the default): port 8081 answers' 0 "$(code "http://$NS_IP:8081/")"
refused "http://sandboxd.internal:$HOST_PORT/" "open: the host's other port"
for id in "$DEF" "$NONE" "$WEB"; do
	api POST "$SB/$id/close" '' "$OT"
	expect_status 204 "sandbox $id closed"
done

# --- a web deployment ------------------------------------------------------------------------------
NARROWED=1
stack_restart 'SANDBOXD_EGRESS=web' SANDBOXD_EGRESS=web
api POST "$SB" '{"egress":"open"}' "$OT"
expect_error 422 "field 'egress' is wider than this deployment's (web)" 'open in a web deployment: 422 with the text'
check_eq 'the refusal is audited with what was asked' '422 open' \
	"$(sql "select status || ' ' || (details->>'egress') from audit_log where action = 'sandbox.create'
	         and login = 'egs$SFX' order by id desc limit 1")"
new_box '{}' 'a create without egress in a web deployment'
expect_json .egress web 'is web (the deployment'"'"'s)'
check_eq "on the deployment's network $NET" "$NET" "$(net_of "$CID")"
check 'its clone is done' wait_until 90 clone_done "$ID"
refused "http://$NS_IP:8081/" 'web deployment: port 8081'
check_eq 'web deployment: port 80 answers' 0 "$(code "http://$NS_IP:80/")"
api POST "$SB/$ID/close" '' "$OT"
expect_status 204 'closed'
new_box '{"egress":"none"}' 'none in a web deployment'
check_eq "on $NET-none" "$NET-none" "$(net_of "$CID")"
check 'its clone is done' wait_until 90 clone_done "$ID"
refused "http://$NS_IP:80/" 'none in a web deployment: port 80'
api POST "$SB/$ID/close" '' "$OT"
expect_status 204 'closed'

stack_restart "SANDBOXD_EGRESS=$DEPLOYED again" SANDBOXD_EGRESS="$DEPLOYED"
NARROWED=0
egress_lab_down
check 'the namespace is gone' eval '! ip netns list | grep -qw "$NS"'
check 'docker0 is still there' ip link show docker0
finish
