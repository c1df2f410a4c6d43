#!/usr/bin/env bash
# t_egress.sh: the egress rules (deploy/egress.sh), open and web. Only servers this test
# starts on this machine are ever contacted (lib.sh egress_lab): a network namespace of its
# own, joined to the host by a veth pair, with a stand-in for an Internet address (ports 80
# and 8081), the metadata address 169.254.169.254 and a 10.x host (port 80 each, the host
# routing both to the namespace, checked), a DNS server on the 10.x host, and one listener
# on the host at the sandboxes' gateway address. From a sandbox, in both modes: the
# metadata and private stand-ins are refused at once, a name resolves through the resolver
# the rules allow (port 53 only), and the host's other port is refused; open reaches both
# ports of the Internet stand-in, web port 80 only, and git push to the service still works.
# SANDBOXD_EGRESS_ALLOW_PRIVATE opens the 10.x host (not the metadata), SANDBOXD_EGRESS_DENY
# closes an Internet address, a bad entry is refused by name and changes nothing, and the
# resolvers default to /etc/resolv.conf's; after `remove` iptables shows no trace of the
# rules. The rules are scoped to this stack's sandbox network (other stacks on the machine
# are not touched); on any exit the stack's own rules are back.
. "$(dirname "$0")/lib.sh"

export GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=/bin/false
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
HOSTPORT=${SANDBOXD_URL#http://}
GIT_PORT=${HOSTPORT##*:}
NET=${SANDBOXD_SANDBOX_NETWORK:-}
EGRESS="$ROOT/deploy/egress.sh"

if [ "$(id -u)" -ne 0 ] || ! command -v iptables >/dev/null || [ -z "$NET" ]; then
	fail 'this suite needs root, iptables and the stack'"'"'s own sandbox network' \
		"uid $(id -u), network '${NET}'"
	finish
fi

egress() { # apply|remove|status, for this stack's network (the resolver: the lab's, unless
	# RESOLVERS=default: /etc/resolv.conf's, as the stack's own rules have it)
	local r=(SANDBOXD_EGRESS_RESOLVERS="$PRIV")
	[ "${RESOLVERS:-}" = default ] && r=()
	env "${r[@]}" SANDBOXD_EGRESS=${MODE:-web} SANDBOXD_SANDBOX_NETWORK="$NET" \
		SANDBOXD_SANDBOX_GIT_URL="http://sandboxd.internal:$GIT_PORT" bash "$EGRESS" "$@" 2>>"$_T/egress.log"
}
SUM=$(printf '%s' "$NET" | cksum | cut -d' ' -f1)
# Every line of the rule set that is ours (both families).
our_rules() { { iptables -w 10 -S; ip6tables -w 10 -S 2>/dev/null; } | grep -E -- "SBXD-(FWD|IN)-$SUM|sandboxd-egress:$NET( |\"|\$)"; }

# --- the namespace with its servers, a listener on the host ---------------------------------
# The stack's own rules (local-stack.sh applies them at up), for the tests after this one.
restore() { MODE=${SANDBOXD_EGRESS:-open} RESOLVERS=default egress apply; }
teardown() {
	egress remove || true
	egress_lab_down
}
AT_EXIT+=(teardown restore)
egress_lab 80 8081

# --- a sandbox on the stack's network ----------------------------------------------------------
O="eg$SFX"
mk_user "$O" || exit 1
OT=$LAST_TOKEN
R="$O/site"
api POST /api/v3/user/repos '{"name":"site"}' "$OT"
git init -q -b main "$_T/w" && echo x >"$_T/w/f" && git -C "$_T/w" add f && git -C "$_T/w" commit -qm x
git -C "$_T/w" push -q "http://t:$OT@$HOSTPORT/$R.git" main
SB=/api/v3/repos/$R/diffinery/sandboxes
api POST "$SB" '{}' "$OT"
expect_status 201 'a sandbox'
ID=$(_json .id)
CID=$(docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$ID")")
AT_EXIT+=("api POST '$SB/$ID/close' '' '$OT' >/dev/null")
check_eq "the sandbox is on the stack's network $NET" "$NET" \
	"$(docker inspect -f '{{range $k, $v := .NetworkSettings.Networks}}{{$k}}{{end}}' "$CID" 2>/dev/null)"
clone_done() { api GET "$SB/$ID" "" "$OT"; [ "$(_json .clone.state)" = done ]; }
check 'its clone is done' wait_until 60 clone_done

box() { docker exec -u "$BOX_USER" -w /workspace/repo "$CID" "$@"; }
# fetch URL: curl's exit code and the time it took (ms); the body must be ours on success.
fetch() {
	local t0 rc out
	t0=$(date +%s%N)
	out=$(box curl -s --connect-timeout 5 -m 8 "$1" 2>/dev/null)
	rc=$?
	[ "$rc" = 0 ] && [ "$out" != "egress-ok-$SFX" ] && rc=99
	echo "$rc $((($(date +%s%N) - t0) / 1000000))"
}
code() { fetch "$1" | cut -d' ' -f1; }
# resolves: a question for test.sandboxd.invalid sent from the sandbox to the lab's resolver
# (PRIV:53, UDP, bash's /dev/udp: the image has no DNS tool; dd reads one datagram),
# answered with NS_IP.
resolves() {
	box timeout 5 bash -c 'exec 3<>/dev/udp/$0/53 &&
		printf "\x51\x7a\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x04test\x08sandboxd\x07invalid\x00\x00\x01\x00\x01" >&3 &&
		timeout 3 dd bs=512 count=1 <&3 2>/dev/null | od -An -tu1 | tr -s " \n" " "' "$PRIV" 2>/dev/null |
		grep -q " ${NS_IP//./ } *\$"
}
# The closed stand-ins and a resolver answer, the same in every mode that reaches names.
closed_checks() { # MODE
	local rc ms
	read -r rc ms <<<"$(fetch "http://$META/latest/meta-data/")"
	check_eq "$1: the metadata address $META is refused (curl: could not connect)" 7 "$rc"
	check "and at once (${ms} ms)" [ "$ms" -lt 4000 ]
	read -r rc ms <<<"$(fetch "http://$PRIV/")"
	check_eq "$1: a private address ($PRIV) is refused" 7 "$rc"
	check "and at once (${ms} ms)" [ "$ms" -lt 4000 ]
	check "$1: a name resolves through the resolver the rules allow ($PRIV:53)" resolves
}

check_eq 'open: port 80 of the namespace answers the sandbox' 0 "$(code "http://$NS_IP:80/")"
check_eq 'open: port 8081 too' 0 "$(code "http://$NS_IP:8081/")"
read -r rc ms <<<"$(fetch "http://sandboxd.internal:$HOST_PORT/")"
check_eq "open: the host's other port is refused (SPEC: only the git endpoint)" 7 "$rc"
check "and at once (${ms} ms)" [ "$ms" -lt 4000 ]
check 'open: git fetch from the service works' box git fetch -q origin
check 'open (the stack rules, the lab resolver) applied' eval 'MODE=open egress apply'
check_eq 'open: port 80 of the Internet stand-in still answers' 0 "$(code "http://$NS_IP:80/")"
closed_checks open

# --- the operator's lists -------------------------------------------------------------------------
check "SANDBOXD_EGRESS_ALLOW_PRIVATE=$PRIV/32 applied" eval 'SANDBOXD_EGRESS_ALLOW_PRIVATE=$PRIV/32 MODE=open egress apply'
check_eq "allowed: the private address answers the sandbox" 0 "$(code "http://$PRIV/")"
check_eq "the metadata address is still refused" 7 "$(code "http://$META/")"
check "SANDBOXD_EGRESS_DENY=$NS_IP applied" eval 'SANDBOXD_EGRESS_DENY=$NS_IP MODE=open egress apply'
check_eq "denied: the Internet stand-in is refused" 7 "$(code "http://$NS_IP:80/")"
check_eq "and the private address is closed again (the allowance went with its setting)" 7 "$(code "http://$PRIV/")"
out=$(SANDBOXD_EGRESS_DENY="10.0.0.0/8,nonsense" MODE=open egress apply 2>&1; echo "rc=$?")
check_eq 'a bad entry: egress.sh fails' 'rc=1' "$(tail -n 1 <<<"$out")"
check_eq 'naming it' "egress: error: SANDBOXD_EGRESS_DENY: 'nonsense' is not an IPv4 or IPv6 address or CIDR" \
	"$(tail -n 1 "$_T/egress.log")"
check_eq 'and the rules in place are unchanged (the Internet stand-in still denied)' 7 "$(code "http://$NS_IP:80/")"
check "without SANDBOXD_EGRESS_RESOLVERS (the stack's own rules again)" eval 'MODE=open RESOLVERS=default egress apply'
RESOLV=$(awk '$1 == "nameserver" && $2 ~ /^[0-9.]+$/ && $2 !~ /^127\./ { print $2; exit }' /etc/resolv.conf)
if [ -n "$RESOLV" ]; then
	check "the resolvers default to /etc/resolv.conf's ($RESOLV: port 53 only; no packet sent)" \
		iptables -w 10 -C "SBXD-FWD-$SUM" -d "$RESOLV/32" -p udp --dport 53 -j RETURN
else
	check_eq 'no /etc/resolv.conf nameserver: no resolver rule' '' \
		"$(iptables -w 10 -S "SBXD-FWD-$SUM" | grep -- '--dport 53 -j RETURN' || true)"
fi
check_eq 'open again: port 80 of the Internet stand-in answers' 0 "$(code "http://$NS_IP:80/")"

# --- web ------------------------------------------------------------------------------------------
check 'egress.sh apply (web)' egress apply
check 'apply again (idempotent)' egress apply
BR=$(docker network inspect -f '{{index .Options "com.docker.network.bridge.name"}}' "$NET")
check_eq 'one jump from DOCKER-USER, for our bridge only' \
	"-A DOCKER-USER -i $BR -m comment --comment sandboxd-egress:$NET -j SBXD-FWD-$SUM" \
	"$(iptables -w 10 -S DOCKER-USER | grep -F "SBXD-FWD-$SUM" | tr -d '"')"
check_eq 'one jump from INPUT, for our bridge only' \
	"-A INPUT -i $BR -m comment --comment sandboxd-egress:$NET -j SBXD-IN-$SUM" \
	"$(iptables -w 10 -S INPUT | grep -F "SBXD-IN-$SUM" | tr -d '"')"
check "the host port allowed is the git port, on the git address $GW" \
	iptables -w 10 -C "SBXD-IN-$SUM" -d "$GW/32" -p tcp --dport "$GIT_PORT" -j RETURN
check 'sandbox to sandbox (out of the same bridge) is refused' \
	iptables -w 10 -C "SBXD-FWD-$SUM" -o "$BR" -p tcp -j REJECT --reject-with tcp-reset
check "the git address, when forwarded (not the host's), is refused" \
	iptables -w 10 -C "SBXD-FWD-$SUM" -d "$GW/32" -p tcp -j REJECT --reject-with tcp-reset
check 'link-local (metadata) is closed' \
	iptables -w 10 -C "SBXD-FWD-$SUM" -d 169.254.0.0/16 -p tcp -j REJECT --reject-with tcp-reset
if ip6tables -w 10 -S "SBXD-FWD-$SUM" >/dev/null 2>&1; then
	check 'IPv6: fc00::/7 (fd00:ec2::254 among them) and fe80::/10 are closed' eval \
		'ip6tables -w 10 -C "SBXD-FWD-$SUM" -d fc00::/7 -j REJECT --reject-with icmp6-adm-prohibited &&
		 ip6tables -w 10 -C "SBXD-FWD-$SUM" -d fe80::/10 -j REJECT --reject-with icmp6-adm-prohibited'
fi

check_eq 'web: port 80 answers' 0 "$(code "http://$NS_IP:80/")"
read -r rc ms <<<"$(fetch "http://$NS_IP:8081/")"
check_eq 'web: port 8081 is refused (curl: could not connect)' 7 "$rc"
check "and at once, not after a timeout (${ms} ms)" [ "$ms" -lt 4000 ]
read -r rc ms <<<"$(fetch "http://sandboxd.internal:$HOST_PORT/")"
check_eq "web: the host's other port is refused" 7 "$rc"
check "and at once (${ms} ms)" [ "$ms" -lt 4000 ]
closed_checks web
check 'web: git push to the service still works' box sh -c \
	'echo web > w && git add w && git commit -qm web && git push -q origin HEAD:refs/heads/from-web'
check_eq 'the push landed' "$(box git rev-parse HEAD)" \
	"$(git --git-dir "$REPOS_DIR/$R.git" rev-parse -q --verify refs/heads/from-web)"
check 'the host itself still reaches port 8081 (only sandboxes are confined)' answers "http://$NS_IP:8081/"

# --- remove ----------------------------------------------------------------------------------------
check 'egress.sh remove' egress remove
check 'iptables -S and ip6tables -S show no trace of the rules' eval '[ -z "$(our_rules)" ]'
check 'remove again is fine' egress remove
check_eq 'open again: port 8081 answers the sandbox' 0 "$(code "http://$NS_IP:8081/")"

api POST "$SB/$ID/close" '' "$OT"
expect_status 204 'the sandbox is closed'
teardown
check 'the namespace is gone' eval '! ip netns list | grep -qw "$NS"'
check 'the veth pair is gone' eval '! ip link show "$VH" >/dev/null 2>&1'
check 'no rule left' eval '[ -z "$(our_rules)" ]'
check "the stack's own rules (${SANDBOXD_EGRESS:-open}) are back" restore

finish
