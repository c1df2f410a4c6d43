#!/usr/bin/env bash
# bench/abuse.sh: one account pushes its execs at the workers (issue 32 A.2) while another
# works, on a throwaway stack with 4 workers. The abuser's two sandboxes each start
# BENCH_ABUSE_DETACHED (40) detached `sleep 600`, then BENCH_ABUSE_ATTACHED (64) attached
# `sleep 20` at once across both, with one sandbox's agent stopped (SIGSTOP, from inside);
# meanwhile wrk measures the other account's GET /api/v3/user (4 clients, BENCH_SECONDS,
# default 10 s) beside the same measure with nothing running, and the other account runs
# `true` one exec after another (after the GETs). Prints the figures, the goal (p99 <= 50 ms), how the
# abuser's calls were answered and the audit rows' backends (never `docker` with the agent).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
VAR=$(mktemp -d /tmp/sandboxd-bench-abuse.XXXXXXXX)
chmod 755 "$VAR"
DETACHED=${BENCH_ABUSE_DETACHED:-40}
ATTACHED=${BENCH_ABUSE_ATTACHED:-64}
SECS=${BENCH_SECONDS:-10}
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
trap bench_cleanup EXIT
stack_of_four
CTL=("$ROOT/${SANDBOXD_BUILD:-build}/sandboxctl")

# repo_with_sandboxes TOKEN OWNER N: a private repository of OWNER with one commit and N
# sandboxes on it, their clones done; prints "route id…".
repo_with_sandboxes() {
	local a="Authorization: Bearer $1" src=$VAR/src-$2 sb ids=() id _
	curl -sf -o /dev/null -H "$a" -d '{"name":"w","visibility":"private"}' "$SANDBOXD_URL/api/v3/user/repos"
	git init -q -b main "$src"
	echo x >"$src/x"
	git -C "$src" add x
	git -C "$src" -c user.name=b -c user.email=b@b commit -qm x
	git -C "$src" -c "http.extraHeader=$a" push -q "$SANDBOXD_URL/$2/w.git" main
	sb=$SANDBOXD_URL/api/v3/repos/$2/w/diffinery/sandboxes
	for _ in $(seq "$3"); do
		id=$(curl -sf -H "$a" -d '{}' "$sb" | jq -r .id)
		curl -sf -o /dev/null -H "$a" -d '{"cmd":"true"}' "$sb/$id/exec"
		ids+=("$id")
	done
	echo "$sb ${ids[*]}"
}

SANDBOXD_DATABASE_URL=$SANDBOXD_DATABASE_URL "${CTL[@]}" account create mallory >/dev/null
M_TOKEN=$(SANDBOXD_DATABASE_URL=$SANDBOXD_DATABASE_URL "${CTL[@]}" token create mallory --scope write 2>/dev/null)
V="Authorization: Bearer $SANDBOXD_TOKEN"
M="Authorization: Bearer $M_TOKEN"
read -r VSB VID <<<"$(repo_with_sandboxes "$SANDBOXD_TOKEN" admin 1)"
read -r MSB M1 M2 <<<"$(repo_with_sandboxes "$M_TOKEN" mallory 2)"

wrk -t1 -c4 -d2s -H "$V" "$SANDBOXD_URL/api/v3/user" >/dev/null
read -r q50 q99 qn qt <<<"$(user_latency "$V")"

# The abuse: detached sleeps, one agent stopped, then a burst of attached execs.
mkdir -p "$VAR/abuse"
n=0
for id in "$M1" "$M2"; do
	for ((i = 0; i < DETACHED; i++)); do
		curl -s -o /dev/null -w '%{http_code}\n' --max-time 30 -H "$M" \
			-d '{"cmd":"sleep 600","detach":true}' "$MSB/$id/exec" >>"$VAR/abuse/detached"
	done
done
curl -s -o /dev/null --max-time 30 -H "$M" \
	-d '{"cmd":"kill -STOP $(cat /workspace/.sandboxd/agent.pid)","detach":true}' "$MSB/$M2/exec" || true
for ((i = 0; i < ATTACHED; i++)); do
	id=$M1
	((i % 2)) && id=$M2
	curl -s -o /dev/null -w '%{http_code}\n' --max-time 60 -H "$M" \
		-d '{"cmd":"sleep 20"}' "$MSB/$id/exec" >"$VAR/abuse/attached.$i" 2>/dev/null &
	n=$((n + 1))
done
sleep 1
# The other account meanwhile: its GETs (wrk), then its execs one after another (apart, so
# that its own execs do not queue its GETs on the 4 workers: the baseline runs none).
read -r a50 a99 an at <<<"$(user_latency "$V")"
vok=0 vall=0
end=$((SECONDS + SECS))
while ((SECONDS < end)); do
	c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 30 -H "$V" -d '{"cmd":"true"}' "$VSB/$VID/exec") || c=000
	vall=$((vall + 1))
	[ "$c" = 200 ] && vok=$((vok + 1))
done
wait 2>/dev/null || true

echo
echo "GET /api/v3/user of another account, 4 workers, 4 clients, ${SECS}s, $(nproc) cores"
printf '%-44s %9s %9s %9s %9s\n' "while" "p50 ms" "p99 ms" "answered" "timeouts"
printf '%-44s %9s %9s %9s %9s\n' "nothing runs" "$q50" "$q99" "$qn" "$qt"
printf '%-44s %9s %9s %9s %9s\n' "one account floods its execs (below)" "$a50" "$a99" "$an" "$at"
awk -v d="$a99" -v n="$an" -v t="$at" 'BEGIN { printf "  goal: p99 <= 50 ms during the abuse, every GET answered: %s\n", (n > 0 && t == 0 && d <= 50 ? "met" : "NOT MET") }'
echo "  the other account's execs meanwhile: $vok of $vall answered 200"
echo "  the abuser's $((2 * DETACHED)) detached: $(sort "$VAR/abuse/detached" | uniq -c | awk '{printf "%s x %s, ", $1, $2}')"
echo "  the abuser's $n attached (one agent stopped): $(cat "$VAR/abuse"/attached.* | sort | uniq -c | awk '{printf "%s x %s, ", $1, $2}')"
echo "  audit rows of the abuser's execs by backend: $(sqlb "select coalesce(details->>'backend', '-') || ' ' || count(*) from audit_log where action = 'sandbox.exec' and sandbox_id in ('$M1', '$M2') group by details->>'backend'" | paste -sd, -)"
for id in "$M1" "$M2"; do curl -s -o /dev/null -H "$M" -X POST "$MSB/$id/close" || true; done
curl -s -o /dev/null -H "$V" -X POST "$VSB/$VID/close" || true
