#!/usr/bin/env bash
# t_git_endpoint.sh: the sandboxes' git endpoint must be an address of this host (issue 11,
# item 12). Sandboxes reach git at sandboxd.internal, the engine's host-gateway; when that
# address is no longer the host's, their clones and pushes (token and all) would leave by
# the default route. The host's docker0 is never touched: this file makes a bridge of its
# own, an engine of its own on it (own roots, socket, containerd namespace, cgroup parent;
# no iptables of its own), and a second stack (PostgreSQL, sandboxd, nginx) on that engine,
# as t_faults_docker does. With the bridge's address in place: /healthz 200, a create and
# its clone work. With the address removed from the bridge: /healthz 503 and a create 503,
# both naming the endpoint, and no container is made; deploy/egress.sh refuses sandbox
# packets to that address that the host would forward. With the address back: all works.
# Everything it starts is removed on exit, also on failure.
. "$(dirname "$0")/lib.sh"

for t in "$DOCKERD" ip docker iptables; do
	if ! command -v "$t" >/dev/null 2>&1; then
		fail "$t is installed" "this test starts an engine of its own"
		finish
	fi
done
if [[ $(id -u) != 0 ]]; then
	skip 'not root: an engine and a bridge of its own need root'
	finish
fi
if ! docker image inspect sandboxd-runner:minimal >/dev/null 2>&1; then
	fail 'the runner image is in the host engine' 'run deploy/build-runner-image.sh'
	finish
fi

# ---- a bridge and an engine of its own (lib.sh) ---------------------------------------------------
private_engine_dir sge
chmod 0711 "$D" # the service's user reaches the engine's socket inside
private_engine_up sge

# ---- a stack of its own, on that engine ------------------------------------------------------------
private_stack_up stack 'a second stack (PostgreSQL, sandboxd, nginx) on that engine' \
	SANDBOXD_WORKERS=2 SANDBOXD_GIT_WORKERS=2 \
	SANDBOXD_BRIDGE="$BR" SANDBOXD_DOCKER_HOST="unix://$SOCK" SANDBOXD_SANDBOX_MEMORY_MB=256 \
	SANDBOXD_SANDBOX_NETWORK=bridge SANDBOXD_EGRESS=open SANDBOXD_IMAGES=minimal=sandboxd-runner:minimal
private_stack_use stack
MSG="the sandboxes' git endpoint sandboxd.internal ($GW) is not an address of this host"

api GET /healthz "" -
expect_status 200 "the bridge has $GW: /healthz 200"
expect_json .git_endpoint ok 'git_endpoint ok'
O="ge$SFX"
mk_repo "$O" r
api POST "$SB" '{}' "$OT"
expect_status 201 'a sandbox on the private engine'
A=$(_json .id)
clone_state() { api GET "$SB/$1" "" "$OT"; _json .clone.state; }
settled() { [[ $(clone_state "$1") == done || $(clone_state "$1") == failed ]]; }
wait_until 60 settled "$A"
check_eq "its clone over $GW is done" done "$(clone_state "$A")"

# The rules of this stack's network (egress.sh, both modes): the git address, forwarded, is
# refused; of the host, only the git port on it.
SUM=$(printf '%s %s' "unix://$SOCK" bridge | cksum | cut -d' ' -f1)
PORT=${SANDBOXD_URL##*:}
check "egress: a sandbox's packets to $GW that the host would forward are refused" \
	iptables -w 10 -C "SBXD-FWD-$SUM" -d "$GW/32" -p tcp -j REJECT --reject-with tcp-reset
check "egress: of the host, the git port on $GW" \
	iptables -w 10 -C "SBXD-IN-$SUM" -d "$GW/32" -p tcp --dport "$PORT" -j RETURN
check "egress: the rules are on $BR" eval 'iptables -w 10 -S INPUT | grep -q -- "-i $BR .*-j SBXD-IN-$SUM"'

# ---- the address goes away ---------------------------------------------------------------------------
# The containers made for sandboxes, and the warm ones handed to one (the pool refills
# itself meanwhile: its waiting containers are no create's).
containers() {
	dk ps -a --filter "label=sandboxd.sandbox" --format '{{.Label "sandboxd.sandbox"}}' | grep -vc '^pool:'
	sql "select count(*) from warm_containers where state = 'claimed'"
}
BEFORE=$(containers)
check "the address $GW is removed from $BR" ip addr del "$GW/24" dev "$BR"
api GET /healthz "" -
expect_status 503 "without $GW: /healthz 503"
expect_json .message "$MSG" 'naming the git endpoint'
expect_json .git_endpoint "$MSG" 'in git_endpoint'
expect_json '"\(.database) \(.docker)"' 'ok ok' 'the database and the engine are fine'
ROWS=$(sql "select count(*) from sandboxes")
api POST "$SB" '{}' "$OT"
expect_error 503 "$MSG" "without $GW: a create answers 503 naming it"
check_eq 'no container is made' "$BEFORE" "$(containers)"
check_eq 'no sandbox row is made' "$ROWS" "$(sql "select count(*) from sandboxes")"

# ---- and comes back ------------------------------------------------------------------------------------
check "the address $GW is back on $BR" ip addr add "$GW/24" dev "$BR"
api GET /healthz "" -
expect_status 200 "with $GW again: /healthz 200"
api POST "$SB" '{}' "$OT"
expect_status 201 'a create works again'
C=$(_json .id)
wait_until 60 settled "$C"
check_eq 'and its clone is done' done "$(clone_state "$C")"
api POST "$SB/$C/close" "" "$OT"
api POST "$SB/$A/close" "" "$OT"

finish
