#!/usr/bin/env bash
# Egress of sandboxes (SPEC.md §4: "open or web, per deployment; a sandbox never reaches
# another sandbox, nor any port of the host but the service's git endpoint"), as iptables
# rules on the host, scoped to the sandboxes' Docker network (its bridge interface):
#
#   usage: deploy/egress.sh apply|remove|status
#
# Settings (environment, as in /etc/sandboxd/sandboxd.env):
#   SANDBOXD_EGRESS           open or web (default: open); both confine, see below
#   SANDBOXD_SANDBOX_NETWORK  the sandboxes' Docker network (default: bridge), for the
#                             deployment's mode; a create may ask for a narrower one (SPEC.md
#                             §4 "Limits"), whose sandboxes join <network>-web or
#                             <network>-none: `apply` confines those too, and makes them
#                             (bridge, no inter-container traffic) when they are missing
#   SANDBOXD_SANDBOX_GIT_URL  how sandboxes reach git; its port is the one port of the host
#                             they may reach (default: http://sandboxd.internal, port 80)
#   SANDBOXD_SANDBOX_GIT_ADDR the address sandboxd.internal maps to (the engine's
#                             host-gateway); default: asked of the engine, as sandboxd does
#   SANDBOXD_DOCKER_HOST, SANDBOXD_DOCKER_CA, _CERT, _KEY: the engine, as sandboxd reaches it
#   SANDBOXD_EGRESS_DENY      more destinations no sandbox reaches, in every mode: CIDRs
#                             (IPv4 or IPv6), separated by commas or spaces; say here the
#                             public addresses of the deployment's other hosts, its database
#                             and its engines when they have any
#   SANDBOXD_EGRESS_ALLOW_PRIVATE  CIDRs inside the closed ranges below that sandboxes may
#                             reach after all (an internal package mirror), still within
#                             their mode's ports; default: none
#   SANDBOXD_EGRESS_RESOLVERS the DNS servers sandboxes may ask (port 53 only) although their
#                             addresses are in the closed ranges; default: the nameservers of
#                             /etc/resolv.conf (Docker hands the host's to its containers)
#
# Closed in every mode (cloud metadata and the hosts' own networks: what a sandbox must never
# reach through the host's masquerade), whatever the operator's lists add: link-local
# (169.254.0.0/16: 169.254.169.254 is every major cloud's metadata service, with the VM's
# credentials; fe80::/10), private and shared ranges (RFC 1918, 100.64.0.0/10, fc00::/7 with
# AWS's fd00:ec2::254), loopback, "this network" and multicast/reserved (0.0.0.0/8,
# 127.0.0.0/8, 192.0.0.0/24, 198.18.0.0/15, 224.0.0.0/3; ::1, ::ffff:0:0/96, 64:ff9b::/96,
# ff00::/8). The host's own addresses are its INPUT chain's: only the git port on the git
# address and DNS on the resolvers (and on the git address, for a stub resolver there).
#
# Both modes: a sandbox's packets to another address of its own bridge (another sandbox)
# are refused (the bridge must pass bridged traffic to iptables: br_netfilter, checked
# here); packets to the git address that the host would forward (it is no longer one of
# the host's own: a deleted bridge, DESIGN.md) are refused, so that credentials never
# leave by the default route; of the host itself only DNS and the git port on the git
# address answer. web, further: traffic that a sandbox starts may go to TCP 80 and 443 and
# to DNS (53, UDP and TCP) only. none: nothing is forwarded at all (no DNS either: names of
# the outside need not resolve, and a resolver is a way out), and of the host only the git
# port on the git address answers (sandboxd.internal is in the sandbox's /etc/hosts, so it
# needs no DNS). Whatever is refused is refused at once (TCP reset, ICMP
# admin-prohibited), so that a client fails fast instead of hanging. Replies (ESTABLISHED,
# RELATED) pass. The rules only ever narrow what Docker allows: each allowed packet
# RETURNs to Docker's own chains, which still apply (they keep networks apart).
#
# Two chains per network (per address family), named from a checksum of the network's name
# (and of the engine's address, when it is not the local socket) so that `remove` needs
# neither Docker nor the network: SBXD-FWD-<n>, jumped to from DOCKER-USER (forwarded
# traffic; FORWARD where Docker made no DOCKER-USER, as in ip6tables) and SBXD-IN-<n>,
# jumped to from INPUT (traffic to the host's own addresses: an Internal network or
# DOCKER-USER alone would leave the host's services open, DESIGN.md). Each jump matches the
# bridge interface and carries the comment sandboxd-egress:<network>.
# `apply` is idempotent and replaces the rules in place (the chains are refilled, the jump
# is added before a stale one is removed): there is no moment without rules. `remove`
# deletes every jump and both chains; afterwards `iptables -S` shows no trace of them.
set -Eeuo pipefail

MODE=${SANDBOXD_EGRESS:-open}
BASE_NETWORK=${SANDBOXD_SANDBOX_NETWORK:-bridge}
GIT_URL=${SANDBOXD_SANDBOX_GIT_URL:-http://sandboxd.internal}
GIT_ADDR=${SANDBOXD_SANDBOX_GIT_ADDR:-}
ENGINE=${SANDBOXD_DOCKER_HOST:-unix:///var/run/docker.sock}

say() { printf 'egress: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

case $MODE in open | web) ;; *) die "SANDBOXD_EGRESS=$MODE: use open or web" ;; esac

CLOSED4="0.0.0.0/8 10.0.0.0/8 100.64.0.0/10 127.0.0.0/8 169.254.0.0/16 172.16.0.0/12 192.0.0.0/24 192.168.0.0/16 198.18.0.0/15 224.0.0.0/3"
CLOSED6="::1/128 ::ffff:0:0/96 64:ff9b::/96 fc00::/7 fe80::/10 ff00::/8"

is_cidr4() { [[ $1 =~ ^([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})(/([0-9]{1,2}))?$ ]] &&
    ((BASH_REMATCH[1] < 256 && BASH_REMATCH[2] < 256 && BASH_REMATCH[3] < 256 &&
      BASH_REMATCH[4] < 256 && ${BASH_REMATCH[6]:-32} <= 32)); }
is_cidr6() { [[ $1 =~ ^[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*(/([0-9]{1,3}))?$ ]] && ((${BASH_REMATCH[2]:-128} <= 128)); }

# cidrs NAME VALUE: the list's entries a line, each checked (a bad one stops everything:
# half a rule set is worse than the old one).
cidrs() {
    local w
    for w in ${2//,/ }; do
        is_cidr4 "$w" || is_cidr6 "$w" || die "$1: '$w' is not an IPv4 or IPv6 address or CIDR"
        echo "$w"
    done
}
# The operator's lists, for apply (remove and status need none of them, so a bad entry
# never stands in the way of taking the rules away).
read_lists() {
    DENY=$(cidrs SANDBOXD_EGRESS_DENY "${SANDBOXD_EGRESS_DENY:-}") || exit 1
    ALLOW_PRIVATE=$(cidrs SANDBOXD_EGRESS_ALLOW_PRIVATE "${SANDBOXD_EGRESS_ALLOW_PRIVATE:-}") || exit 1
    if [ -n "${SANDBOXD_EGRESS_RESOLVERS+x}" ]; then
        RESOLVERS=$(cidrs SANDBOXD_EGRESS_RESOLVERS "$SANDBOXD_EGRESS_RESOLVERS") || exit 1
    else
        # Loopback resolvers are the host's own (Docker does not hand them to containers).
        RESOLVERS=$(awk '$1 == "nameserver" && $2 !~ /^127\./ && $2 != "::1" { print $2 }' /etc/resolv.conf 2>/dev/null || true)
        RESOLVERS=$(cidrs "/etc/resolv.conf's nameserver" "$RESOLVERS") || exit 1
    fi
}
# of_family LIST: the entries of LIST that this family's iptables takes.
of_family() {
    local w
    for w in $1; do
        if [ "$FAM" = iptables ]; then is_cidr4 "$w" && echo "$w"; else is_cidr4 "$w" || echo "$w"; fi
    done
    true
}
[[ $BASE_NETWORK =~ ^[A-Za-z0-9][A-Za-z0-9_.-]*$ ]] ||
    die "SANDBOXD_SANDBOX_NETWORK=$BASE_NETWORK does not name a Docker network"

# The networks and their modes, "NAME MODE" a line: the deployment's network for its own
# mode, then one per narrower mode (sandboxd's config_egress_network names them the same).
networks() {
    echo "$BASE_NETWORK $MODE"
    [ "$MODE" = open ] && echo "$BASE_NETWORK-web web"
    echo "$BASE_NETWORK-none none"
}
# Every name a network of ours may have, whatever the mode (remove takes them all away).
all_networks() { printf '%s\n' "$BASE_NETWORK open" "$BASE_NETWORK-web web" "$BASE_NETWORK-none none"; }

# The git port: explicit in the URL, else the scheme's.
git_port() {
    local rest=${GIT_URL#*://} hostport port
    hostport=${rest%%/*}
    hostport=${hostport##*@}
    if [[ $hostport =~ :([0-9]+)$ ]]; then
        port=${BASH_REMATCH[1]}
    elif [[ $GIT_URL == https://* ]]; then
        port=443
    else
        port=80
    fi
    ((port >= 1 && port <= 65535)) || die "SANDBOXD_SANDBOX_GIT_URL=$GIT_URL: bad port $port"
    echo "$port"
}

# The host part of the git URL, without brackets.
git_host() {
    local rest=${GIT_URL#*://} hostport
    hostport=${rest%%/*}
    hostport=${hostport##*@}
    if [[ $hostport == \[* ]]; then
        hostport=${hostport#[}
        echo "${hostport%%]*}"
    else
        echo "${hostport%%:*}"
    fi
}

# ipv4_first_host A.B.C.D/N: the subnet's first host address (Docker gives it to the bridge
# when it picks the address itself).
ipv4_first_host() {
    local ip=${1%/*} len=${1#*/} a b c d n
    IFS=. read -r a b c d <<<"$ip"
    n=$(((a << 24 | b << 16 | c << 8 | d) & (0xffffffff << (32 - len)) & 0xffffffff))
    n=$((n + 1))
    echo "$((n >> 24 & 255)).$((n >> 16 & 255)).$((n >> 8 & 255)).$((n & 255))"
}

is_ipv4() { [[ $1 =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]]; }

# The IPv4 address sandboxes reach git at: the setting; else the URL's host when it is an
# address; for sandboxd.internal (host-gateway) the engine's default bridge gateway (its
# IPAM Gateway, else the first host of its Subnet: a fresh dockerd records only the Subnet);
# any other name as the host resolves it. sandboxd (app/engine/hostaddr.c) takes the setting or
# the URL the same way but, asking no engine, checks Docker's stock 172.17.0.1 for
# sandboxd.internal: a different bridge address makes its check fail until the setting says
# it (the local stack always sets it).
git_addr() {
    local host out
    if [ -n "$GIT_ADDR" ]; then
        echo "$GIT_ADDR"
        return 0
    fi
    host=$(git_host)
    if is_ipv4 "$host"; then
        echo "$host"
    elif [ "$host" = sandboxd.internal ]; then
        out=$(dk network inspect -f '{{range .IPAM.Config}}{{if .Gateway}}{{.Gateway}}{{else}}{{.Subnet}}{{end}} {{end}}' bridge 2>&1) ||
            die "cannot ask the engine for its default bridge (host-gateway): $out"
        local w
        for w in $out; do
            if is_ipv4 "${w%/*}"; then
                if [[ $w == */* ]]; then ipv4_first_host "$w"; else echo "$w"; fi
                return 0
            fi
        done
        die "the engine's default bridge has no IPv4 address: set SANDBOXD_SANDBOX_GIT_ADDR"
    else
        out=$(getent ahostsv4 "$host" | awk '{ print $1; exit }')
        [ -n "$out" ] || die "$host (SANDBOXD_SANDBOX_GIT_URL) does not resolve to an IPv4 address"
        echo "$out"
    fi
}

# The docker CLI on the service's engine (an engine of its own in some tests: never the
# host's by mistake).
DOCKER_ARGS=()
if [ "$ENGINE" != unix:///var/run/docker.sock ]; then
    DOCKER_ARGS=(-H "${ENGINE/#https:/tcp:}")
    if [ -n "${SANDBOXD_DOCKER_CA:-}" ]; then
        DOCKER_ARGS+=(--tlsverify --tlscacert "$SANDBOXD_DOCKER_CA" --tlscert "${SANDBOXD_DOCKER_CERT:-}"
                      --tlskey "${SANDBOXD_DOCKER_KEY:-}")
    fi
fi
dk() { docker "${DOCKER_ARGS[@]}" "$@"; }

# use_net NAME MODE: the network the functions below work on, its mode and chains.
use_net() {
    NETWORK=$1
    NMODE=$2
    if [ "$ENGINE" = unix:///var/run/docker.sock ]; then
        SUM=$(printf '%s' "$NETWORK" | cksum | cut -d' ' -f1)
    else
        SUM=$(printf '%s %s' "$ENGINE" "$NETWORK" | cksum | cut -d' ' -f1)
    fi
    FWD=SBXD-FWD-$SUM
    IN=SBXD-IN-$SUM
    TAG=sandboxd-egress:$NETWORK
}

FAMILIES=(iptables)
command -v ip6tables >/dev/null 2>&1 && ip6tables -w 10 -S INPUT >/dev/null 2>&1 && FAMILIES+=(ip6tables)

ipt() { "$FAM" -w 10 "$@"; }
has_chain() { ipt -S "$1" >/dev/null 2>&1; }

# The chain that forwarded traffic of this family is filtered in.
fwd_parent() {
    if has_chain DOCKER-USER; then echo DOCKER-USER; else echo FORWARD; fi
}

# jumps PARENT TARGET: the rules of PARENT that jump to TARGET, as `-A …` lines (without
# the quotes iptables puts around a comment: ours has no space).
jumps() { ipt -S "$1" 2>/dev/null | grep -E -- "-j $2( |\$)" | tr -d '"' || true; }

# delete_rule "-A CHAIN args…": deletes exactly that rule (its words are ours: no spaces).
delete_rule() {
    local -a words
    read -r -a words <<<"$1"
    ipt -D "${words[@]:1}"
}

# ensure_jump PARENT IFACE TARGET: exactly one jump from PARENT for IFACE, at the top.
ensure_jump() {
    local parent=$1 iface=$2 target=$3 want line kept=0
    want="-A $parent -i $iface -m comment --comment $TAG -j $target"
    if ! jumps "$parent" "$target" | grep -qxF -- "$want"; then
        ipt -I "$parent" 1 -i "$iface" -m comment --comment "$TAG" -j "$target"
    fi
    while IFS= read -r line; do
        [ -n "$line" ] || continue
        if [ "$line" = "$want" ] && [ "$kept" = 0 ]; then
            kept=1
            continue
        fi
        delete_rule "$line"
    done < <(jumps "$parent" "$target")
}

# refill CHAIN: the chain's rules become the lines of stdin (one rule a line, words without
# spaces). Rebuilt beside the old rules, then the old ones go: never an empty chain between.
refill() {
    local chain=$1 old line i
    local -a words
    has_chain "$chain" || ipt -N "$chain"
    old=$(ipt -S "$chain" | grep -c -- "^-A $chain " || true)
    while IFS= read -r line; do
        [ -n "$line" ] || continue
        read -r -a words <<<"$line"
        ipt -A "$chain" "${words[@]}"
    done
    for ((i = 0; i < old; i++)); do ipt -D "$chain" 1; done
}

# The rules of both chains for this family: IFACE ADDR PORT.
fwd_rules() {
    local iface=$1 addr=$2 icmp=icmp-admin-prohibited c closed=$CLOSED4
    [ "$FAM" = ip6tables ] && icmp=icmp6-adm-prohibited closed=$CLOSED6
    echo "-m conntrack --ctstate RELATED,ESTABLISHED -j RETURN"
    # Another sandbox: out of the bridge it came in by.
    echo "-o $iface -p tcp -j REJECT --reject-with tcp-reset"
    echo "-o $iface -j REJECT --reject-with $icmp"
    # The git address, forwarded: it is not the host's any more; never past it.
    if [ "$FAM" = iptables ]; then
        echo "-d $addr -p tcp -j REJECT --reject-with tcp-reset"
        echo "-d $addr -j REJECT --reject-with $icmp"
    fi
    # The operator's own list wins over everything below.
    for c in $(of_family "$DENY"); do
        echo "-d $c -p tcp -j REJECT --reject-with tcp-reset"
        echo "-d $c -j REJECT --reject-with $icmp"
    done
    # Names must resolve in every mode that reaches names: the resolvers, port 53 only.
    if [ "$NMODE" != none ]; then
        for c in $(of_family "$RESOLVERS"); do
            echo "-d $c -p udp --dport 53 -j RETURN"
            echo "-d $c -p tcp --dport 53 -j RETURN"
        done
        for c in $(of_family "$ALLOW_PRIVATE"); do
            if [ "$NMODE" = open ]; then
                echo "-d $c -j RETURN"
            else
                echo "-d $c -p udp --dport 53 -j RETURN"
                echo "-d $c -p tcp -m multiport --dports 53,80,443 -j RETURN"
            fi
        done
    fi
    # Cloud metadata, the hosts' private networks, loopback, multicast: closed.
    for c in $closed; do
        echo "-d $c -p tcp -j REJECT --reject-with tcp-reset"
        echo "-d $c -j REJECT --reject-with $icmp"
    done
    if [ "$NMODE" = web ]; then
        echo "-p udp --dport 53 -j RETURN"
        echo "-p tcp -m multiport --dports 53,80,443 -j RETURN"
    fi
    if [ "$NMODE" != open ]; then
        echo "-p tcp -j REJECT --reject-with tcp-reset"
        echo "-j REJECT --reject-with $icmp"
    fi
}

in_rules() {
    local addr=$1 port=$2 icmp=icmp-admin-prohibited
    [ "$FAM" = ip6tables ] && icmp=icmp6-adm-prohibited
    echo "-m conntrack --ctstate RELATED,ESTABLISHED -j RETURN"
    # DNS of the host itself: on a resolver of the list that is one of its addresses, or a
    # stub on the git address; no other port of the host's other addresses.
    if [ "$NMODE" != none ]; then
        for c in $(of_family "$RESOLVERS") $([ "$FAM" = iptables ] && echo "$addr/32"); do
            echo "-d $c -p udp --dport 53 -j RETURN"
            echo "-d $c -p tcp --dport 53 -j RETURN"
        done
    fi
    if [ "$FAM" = iptables ]; then
        echo "-d $addr/32 -p tcp --dport $port -j RETURN"
    else
        echo "-p tcp --dport $port -j RETURN"
    fi
    echo "-p tcp -j REJECT --reject-with tcp-reset"
    echo "-j REJECT --reject-with $icmp"
}

# Traffic between two ports of one bridge is bridged, not routed: iptables sees it only
# with br_netfilter's bridge-nf-call-iptables on (Docker turns it on for its own rules).
# Without it the rule between sandboxes would be silently void: fail instead.
bridge_filtering() {
    local f=/proc/sys/net/bridge/bridge-nf-call-iptables
    [ -e "$f" ] || modprobe br_netfilter 2>/dev/null || true
    [ -e "$f" ] || die "br_netfilter is not loaded (modprobe br_netfilter): sandboxes could reach each other"
    if [ "$(cat "$f")" != 1 ]; then
        say "turning on net.bridge.bridge-nf-call-iptables (sandboxes' traffic between each other is filtered)"
        echo 1 >"$f" || die "cannot turn on $f"
    fi
    f=/proc/sys/net/bridge/bridge-nf-call-ip6tables
    if [ -e "$f" ] && [ "$(cat "$f")" != 1 ]; then
        echo 1 >"$f" || die "cannot turn on $f"
    fi
}

# The bridge interface of the network: Docker's option when set (docker0 for "bridge"),
# else br-<first 12 characters of the id>.
bridge_of() {
    local out name id driver
    out=$(dk network inspect -f '{{.Id}} {{.Driver}} {{index .Options "com.docker.network.bridge.name"}}' "$NETWORK" 2>&1) ||
        die "no Docker network $NETWORK: $out"
    read -r id driver name <<<"$out"
    [ "$driver" = bridge ] || die "network $NETWORK has driver $driver; egress rules need a bridge"
    [[ -z $name || $name == '<no value>' ]] && name=br-${id:0:12}
    echo "$name"
}

# Jumps of ours (any network's) for a bridge interface that no longer exists, and their
# chains once nothing jumps to them: left by a stack whose bridge was deleted without
# `remove` (a test's own engine, killed). Such a rule can match nothing; it is only litter.
sweep_stale() {
    local parent line iface chain
    for parent in INPUT FORWARD DOCKER-USER; do
        has_chain "$parent" || continue
        while IFS= read -r line; do
            [[ $line =~ -i\ ([^ ]+)\ .*--comment\ sandboxd-egress:.*-j\ (SBXD-(FWD|IN)-[0-9]+) ]] || continue
            iface=${BASH_REMATCH[1]}
            chain=${BASH_REMATCH[2]}
            ip link show "$iface" >/dev/null 2>&1 && continue
            delete_rule "$line"
            if ! ipt -S 2>/dev/null | grep -qE -- "-j $chain( |\$)"; then
                ipt -F "$chain" 2>/dev/null && ipt -X "$chain" 2>/dev/null || true
            fi
        done < <(ipt -S "$parent" 2>/dev/null | tr -d '"')
    done
}

# A narrower mode's network, made when missing as the deployment's should be (README
# "Deployment"): a bridge without inter-container traffic, labelled with its mode.
ensure_network() {
    local out
    dk network inspect "$NETWORK" >/dev/null 2>&1 && return 0
    say "creating Docker network $NETWORK (egress $NMODE)"
    out=$(dk network create --driver bridge -o com.docker.network.bridge.enable_icc=false \
        --label "sandboxd.egress=$NMODE" "$NETWORK" 2>&1) ||
        dk network inspect "$NETWORK" >/dev/null 2>&1 ||
        die "docker network create $NETWORK failed: $out"
}

apply_one() { # PORT ADDR
    local iface port=$1 addr=$2
    [ "$NETWORK" = "$BASE_NETWORK" ] || ensure_network
    iface=$(bridge_of)
    for FAM in "${FAMILIES[@]}"; do
        sweep_stale
        fwd_rules "$iface" "$addr" | refill "$FWD"
        in_rules "$addr" "$port" | refill "$IN"
        ensure_jump "$(fwd_parent)" "$iface" "$FWD"
        ensure_jump INPUT "$iface" "$IN"
    done
    case $NMODE in
        web) say "web egress for network $NETWORK (bridge $iface): TCP 80, 443 and DNS out; no other sandbox; host: $addr:$port" ;;
        none) say "no egress for network $NETWORK (bridge $iface): nothing out; host: $addr:$port only" ;;
        *) say "open egress for network $NETWORK (bridge $iface): no other sandbox; host: $addr:$port" ;;
    esac
}

apply_rules() {
    local port addr name mode
    read_lists
    port=$(git_port)
    addr=$(git_addr)
    is_ipv4 "$addr" || die "the git address $addr is not an IPv4 address"
    bridge_filtering
    while read -r name mode; do
        use_net "$name" "$mode"
        apply_one "$port" "$addr"
    done < <(networks)
}

remove_one() {
    local parent line chain
    for FAM in "${FAMILIES[@]}"; do
        for parent in INPUT FORWARD DOCKER-USER; do
            has_chain "$parent" || continue
            for chain in "$FWD" "$IN"; do
                while IFS= read -r line; do
                    [ -n "$line" ] && delete_rule "$line"
                done < <(jumps "$parent" "$chain")
            done
        done
        for chain in "$FWD" "$IN"; do
            if has_chain "$chain"; then
                ipt -F "$chain"
                ipt -X "$chain"
            fi
        done
    done
}

remove_all() {
    local name mode
    # No iptables: nothing was ever installed.
    command -v iptables >/dev/null 2>&1 || return 0
    while read -r name mode; do
        use_net "$name" "$mode"
        remove_one
    done < <(all_networks)
}

status() {
    local found name mode
    while read -r name mode; do
        use_net "$name" "$mode"
        found=0
        for FAM in "${FAMILIES[@]}"; do
            if "$FAM" -w 10 -S 2>/dev/null | grep -E -- "$FWD|$IN|$TAG( |\$)"; then
                found=1
            fi
        done
        if [ "$found" = 1 ]; then say "network $NETWORK ($mode): rules in place"; else say "network $NETWORK ($mode): no rules"; fi
    done < <(networks)
}

[ "$(id -u)" -eq 0 ] || die "iptables needs root"
case ${1:-} in
    apply)
        apply_rules
        ;;
    remove) remove_all ;;
    status) status ;;
    *)
        echo "usage: $0 apply|remove|status" >&2
        exit 2
        ;;
esac
