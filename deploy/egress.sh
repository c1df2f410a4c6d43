#!/usr/bin/env bash
# Egress of sandboxes (SPEC.md §4: "open or web, per deployment"), as iptables rules on the
# host, scoped to the sandboxes' Docker network (its bridge interface):
#
#   usage: deploy/egress.sh apply|remove|status
#
# Settings (environment, as in /etc/sandboxd/sandboxd.env):
#   SANDBOXD_EGRESS           open (no rule: `apply` removes them) or web (default: open)
#   SANDBOXD_SANDBOX_NETWORK  the sandboxes' Docker network (default: bridge)
#   SANDBOXD_SANDBOX_GIT_URL  how sandboxes reach git; its port is the one port of the host
#                             they may reach (default: http://sandboxd.internal, port 80)
#
# web: traffic that a sandbox starts may go to TCP 80 and 443 and to DNS (53, UDP and TCP)
# anywhere, and to the host itself only on DNS and the git port; the rest is refused at
# once (TCP reset, ICMP admin-prohibited), so that a client fails fast instead of hanging.
# Replies (ESTABLISHED, RELATED) pass. The rules only ever narrow what Docker allows: each
# allowed packet RETURNs to Docker's own chains, which still apply.
#
# Two chains per network (per address family), named from a checksum of the network's name
# so that `remove` needs neither Docker nor the network: SBXD-FWD-<n>, jumped to from
# DOCKER-USER (forwarded traffic; FORWARD where Docker made no DOCKER-USER, as in ip6tables)
# and SBXD-IN-<n>, jumped to from INPUT (traffic to the host's own addresses: an Internal
# network or DOCKER-USER alone would leave the host's services open, DESIGN.md). Each jump
# matches the bridge interface and carries the comment sandboxd-egress:<network>.
# `apply` is idempotent and replaces the rules in place (the chains are refilled, the jump
# is added before a stale one is removed): there is no moment without rules. `remove`
# deletes every jump and both chains; afterwards `iptables -S` shows no trace of them.
set -Eeuo pipefail

MODE=${SANDBOXD_EGRESS:-open}
NETWORK=${SANDBOXD_SANDBOX_NETWORK:-bridge}
GIT_URL=${SANDBOXD_SANDBOX_GIT_URL:-http://sandboxd.internal}

say() { printf 'egress: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

case $MODE in open | web) ;; *) die "SANDBOXD_EGRESS=$MODE: use open or web" ;; esac
[[ $NETWORK =~ ^[A-Za-z0-9][A-Za-z0-9_.-]*$ ]] ||
    die "SANDBOXD_SANDBOX_NETWORK=$NETWORK does not name a Docker network"

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

SUM=$(printf '%s' "$NETWORK" | cksum | cut -d' ' -f1)
FWD=SBXD-FWD-$SUM
IN=SBXD-IN-$SUM
TAG=sandboxd-egress:$NETWORK

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

fill_chain() { # CHAIN PORTS-FOR-TCP (comma list)
    local chain=$1 ports=$2 icmp=icmp-admin-prohibited
    [ "$FAM" = ip6tables ] && icmp=icmp6-adm-prohibited
    has_chain "$chain" || ipt -N "$chain"
    # Rebuilt beside the old rules, then the old ones go: never an empty chain in between.
    local old
    old=$(ipt -S "$chain" | grep -c -- "^-A $chain " || true)
    ipt -A "$chain" -m conntrack --ctstate RELATED,ESTABLISHED -j RETURN
    ipt -A "$chain" -p udp --dport 53 -j RETURN
    ipt -A "$chain" -p tcp -m multiport --dports "$ports" -j RETURN
    ipt -A "$chain" -p tcp -j REJECT --reject-with tcp-reset
    ipt -A "$chain" -j REJECT --reject-with "$icmp"
    local i
    for ((i = 0; i < old; i++)); do ipt -D "$chain" 1; done
}

# The bridge interface of the network: Docker's option when set (docker0 for "bridge"),
# else br-<first 12 characters of the id>.
bridge_of() {
    local out name id driver
    out=$(docker network inspect -f '{{.Id}} {{.Driver}} {{index .Options "com.docker.network.bridge.name"}}' "$NETWORK" 2>&1) ||
        die "no Docker network $NETWORK: $out"
    read -r id driver name <<<"$out"
    [ "$driver" = bridge ] || die "network $NETWORK has driver $driver; egress rules need a bridge"
    [[ -z $name || $name == '<no value>' ]] && name=br-${id:0:12}
    echo "$name"
}

apply_web() {
    local iface port
    iface=$(bridge_of)
    port=$(git_port)
    for FAM in "${FAMILIES[@]}"; do
        fill_chain "$FWD" 53,80,443
        fill_chain "$IN" "53,$port"
        ensure_jump "$(fwd_parent)" "$iface" "$FWD"
        ensure_jump INPUT "$iface" "$IN"
    done
    say "web egress for network $NETWORK (bridge $iface): TCP 80, 443 and DNS out; host port $port"
}

remove_all() {
    local parent line chain
    # No iptables: nothing was ever installed (and `open` needs nothing).
    command -v iptables >/dev/null 2>&1 || return 0
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

status() {
    local found=0
    for FAM in "${FAMILIES[@]}"; do
        if "$FAM" -w 10 -S 2>/dev/null | grep -E -- "$FWD|$IN|$TAG( |\$)"; then
            found=1
        fi
    done
    if [ "$found" = 1 ]; then say "network $NETWORK: web"; else say "network $NETWORK: open (no rules)"; fi
}

[ "$(id -u)" -eq 0 ] || die "iptables needs root"
case ${1:-} in
    apply)
        if [ "$MODE" = web ]; then apply_web; else remove_all; say "open egress for network $NETWORK (no rules)"; fi
        ;;
    remove) remove_all ;;
    status) status ;;
    *)
        echo "usage: $0 apply|remove|status" >&2
        exit 2
        ;;
esac
