#!/usr/bin/env bash
# t_isolation.sh: a sandbox never reaches another sandbox (SPEC.md §4 Inside; issue 11, item
# 3), in `open` egress (the stack's) and in `web` alike. Sandbox B (one account) serves its
# private repository with `git daemon` on 9418 and on 7777 (and on 80 when the engine lets an
# unprivileged process bind it); from sandbox A (another account) a TCP connection to B's
# address and `git ls-remote git://<B>/repo` are refused at once, while B's own loopback
# answers. The traffic stays between the containers this test makes.
. "$(dirname "$0")/lib.sh"

HOSTPORT=${SANDBOXD_URL#http://}
GIT_PORT=${HOSTPORT##*:}
NET=${SANDBOXD_SANDBOX_NETWORK:-}

mk_sandbox "isoa$SFX" app
A_SB=$SB A_ID=$ID A_OT=$OT
mk_sandbox "isob$SFX" app
B_SB=$SB B_ID=$ID B_OT=$OT
AT_EXIT+=("api POST '$A_SB/$A_ID/close' '' '$A_OT' >/dev/null" "api POST '$B_SB/$B_ID/close' '' '$B_OT' >/dev/null")
A_CID=$(docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$A_ID")")
B_CID=$(docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$B_ID")")
clone_done() { api GET "$1/$2" "" "$3"; [[ $(_json .clone.state) == done ]]; }
check 'the clone of A is done' wait_until 60 clone_done "$A_SB" "$A_ID" "$A_OT"
check 'the clone of B is done' wait_until 60 clone_done "$B_SB" "$B_ID" "$B_OT"
B_IP=$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$B_CID")
check "B has an address ($B_IP) on the stack's network" [ -n "$B_IP" ]

in_a() { docker exec -u "$BOX_USER" "$A_CID" "$@"; }
in_b() { docker exec -u "$BOX_USER" "$B_CID" "$@"; }
# B's listeners: its private clone, served to whoever connects.
serve() { # PORT
	in_b git daemon --reuseaddr --export-all --base-path=/workspace --listen=0.0.0.0 --port="$1" \
		--detach --pid-file="/tmp/gd$1.pid" 2>/dev/null
}
B_HEAD=$(in_b git -C /workspace/repo rev-parse HEAD)
check 'B serves its repository with git daemon on 9418' serve 9418
check 'and on 7777' serve 7777
PORT80=0
serve 80 && PORT80=1

# tcp_from WHO IP PORT: "ok" when a connection opens, else bash's error text.
tcp_from() {
	"$1" timeout 10 bash -c "exec 3<>/dev/tcp/$2/$3 && echo ok" 2>&1 | sed 's/^bash: line [0-9]*: //' | tail -n 1
}
ls_from() { # WHO URL
	"$1" timeout 20 git ls-remote "$2" 2>&1
}
b_answers_itself() {
	check_eq "$1: B's own loopback answers on 7777" ok "$(tcp_from in_b 127.0.0.1 7777)"
	check_eq "$1: git ls-remote git://127.0.0.1/repo in B lists its HEAD" "$B_HEAD	HEAD" \
		"$(ls_from in_b git://127.0.0.1/repo | grep -P '\tHEAD$')"
}
a_is_refused() { # MODE
	check_eq "$1: A connecting to $B_IP:7777 is refused" "/dev/tcp/$B_IP/7777: Connection refused" \
		"$(tcp_from in_a "$B_IP" 7777)"
	local out
	out=$(ls_from in_a "git://$B_IP/repo")
	check "$1: git ls-remote git://$B_IP/repo from A is refused ($(tr '\n' ' ' <<<"$out" | tail -c 160))" \
		eval '[[ $out == *"errno=Connection refused"* && $out != *"$B_HEAD"* ]]'
	if ((PORT80)); then
		check_eq "$1: A connecting to $B_IP:80 is refused" "/dev/tcp/$B_IP/80: Connection refused" \
			"$(tcp_from in_a "$B_IP" 80)"
	fi
	# Positive: A still reaches git on the host (sandboxd.internal) and B's address is alive.
	check "$1: A still fetches from the service" in_a git -C /workspace/repo fetch -q origin
}

b_answers_itself open
a_is_refused open
check_eq 'open: the host reaches B (only sandbox to sandbox is refused)' "$B_HEAD	HEAD" \
	"$(timeout 20 git ls-remote "git://$B_IP:7777/repo" 2>&1 | grep -P '\tHEAD$')"

# --- web: the same --------------------------------------------------------------------------------
if [[ $(id -u) == 0 && -n $NET ]] && command -v iptables >/dev/null; then
	egress() { # MODE apply|remove
		SANDBOXD_EGRESS=$1 SANDBOXD_SANDBOX_NETWORK="$NET" \
			SANDBOXD_SANDBOX_GIT_URL="http://sandboxd.internal:$GIT_PORT" \
			bash "$ROOT/deploy/egress.sh" "$2" 2>>"$_T/egress.log"
	}
	# Whatever happens, the stack's own rules (open) are back at the end.
	AT_EXIT+=("egress ${SANDBOXD_EGRESS:-open} apply")
	check 'egress.sh apply (web)' egress web apply
	b_answers_itself web
	a_is_refused web
	check "egress.sh apply (${SANDBOXD_EGRESS:-open}) again" egress "${SANDBOXD_EGRESS:-open}" apply
	a_is_refused "${SANDBOXD_EGRESS:-open} again"
else
	skip 'not root, no iptables or no sandbox network: web checks'
fi

finish
