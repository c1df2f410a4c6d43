#!/usr/bin/env bash
# bench/held.sh: what a running command costs (issue 14, README "The holder"), on a
# throwaway stack with 4 workers. BENCH_HELD (default 200) execs of `sleep BENCH_HELD_SLEEP`
# (20) at once across 10 sandboxes, attached, then the same streamed; meanwhile wrk measures
# GET /api/v3/user (4 clients, BENCH_SECONDS, default 10 s), side by side with the same
# measure with nothing running, and /healthz is asked once a second. Also the holder's
# resident anonymous memory per parked exec. Prints the figures and the ratios.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
VAR=$(mktemp -d /tmp/sandboxd-bench-held.XXXXXXXX)
chmod 755 "$VAR"
HELD=${BENCH_HELD:-200}
SLEEP=${BENCH_HELD_SLEEP:-20}
SECS=${BENCH_SECONDS:-10}
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
trap bench_cleanup EXIT
export SANDBOXD_MAX_SANDBOXES=20
# The caps on running execs (16 a sandbox, 64 an account by default) would refuse what runs
# here on purpose: 20 a sandbox and HELD in all.
export SANDBOXD_EXECS_PER_SANDBOX=1024 SANDBOXD_EXECS_PER_ACCOUNT=65536
stack_of_four
A="Authorization: Bearer $SANDBOXD_TOKEN"

curl -sf -H "$A" -d '{"name":"held","visibility":"private"}' "$SANDBOXD_URL/api/v3/user/repos" >/dev/null
W=$VAR/src
git init -q -b main "$W"
echo x >"$W/x"
git -C "$W" add x
git -C "$W" -c user.name=b -c user.email=b@b commit -qm x
git -C "$W" -c "http.extraHeader=Authorization: Bearer $SANDBOXD_TOKEN" push -q \
	"$SANDBOXD_URL/admin/held.git" main
SB=$SANDBOXD_URL/api/v3/repos/admin/held/diffinery/sandboxes
IDS=()
for _ in $(seq 10); do
	id=$(curl -sf -H "$A" -d '{}' "$SB" | jq -r .id)
	curl -sf -H "$A" -d '{"cmd":"true"}' "$SB/$id/exec" >/dev/null
	IDS+=("$id")
done

holder_anon() { awk '/^RssAnon/ {print $2}' "/proc/$(pgrep -x -P "$(cat "$SANDBOXD_PID_FILE")" sandboxd-holder)/status"; }

wrk -t1 -c4 -d2s -H "$A" "$SANDBOXD_URL/api/v3/user" >/dev/null
read -r b50 b99 _ _ <<<"$(user_latency "$A")"
echo
echo "GET /api/v3/user, 4 workers, 4 clients, ${SECS}s, $(nproc) cores"
printf '%-44s %9s %9s\n' "while" "p50 ms" "p99 ms"
printf '%-44s %9s %9s\n' "nothing runs" "$b50" "$b99"

round() { # NAME ACCEPT
	local anon0 anon1 i dir=$VAR/$1 ok hz=0 hzbad=0
	mkdir -p "$dir"
	anon0=$(holder_anon)
	for ((i = 0; i < HELD; i++)); do
		curl -sS -o "$dir/$i.body" -w '%{http_code}' --max-time $((SLEEP + 60)) -H "$A" \
			-H "Accept: $2" -d "{\"cmd\":\"sleep $SLEEP; echo $1\"}" \
			"$SB/${IDS[i % 10]}/exec" >"$dir/$i.status" 2>/dev/null &
	done
	for _ in $(seq 600); do
		[ "$(sqlb "select count(*) from held_execs where holder is not null")" -ge "$HELD" ] && break
		sleep 0.1
	done
	local held_now
	held_now=$(sqlb "select count(*) from held_execs where holder is not null")
	anon1=$(holder_anon)
	( for _ in $(seq "$SECS"); do
		c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$SANDBOXD_URL/healthz") || c=000
		echo "$c"; sleep 1
	done ) >"$dir/healthz" &
	read -r d50 d99 _ _ <<<"$(user_latency "$A")"
	wait 2>/dev/null || true
	hz=$(grep -c '^200$' "$dir/healthz" || true)
	hzbad=$(grep -vc '^200$' "$dir/healthz" || true)
	ok=0
	for ((i = 0; i < HELD; i++)); do
		[ "$(cat "$dir/$i.status")" = 200 ] && grep -q '"exitCode":0' "$dir/$i.body" && ok=$((ok + 1))
	done
	printf '%-44s %9s %9s\n' "$HELD $1 'sleep $SLEEP' execs run ($held_now held)" "$d50" "$d99"
	echo "  $1: $ok of $HELD answered 200 with exit 0; /healthz 200 $hz times, other $hzbad times"
	echo "  $1: audit rows with exit_code 0: $(sqlb "select count(*) from audit_log where action = 'sandbox.exec' and details->>'cmd' = 'sleep $SLEEP; echo $1' and (details->>'exit_code')::int = 0")"
	awk -v a="$anon0" -v b="$anon1" -v n="$HELD" \
		'BEGIN { printf "  %s: the holder'"'"'s RssAnon %d KiB idle, %d KiB holding: %.1f KiB per parked exec\n", "'"$1"'", a, b, (b - a) / n }'
	awk -v d="$d99" -v b="$b99" 'BEGIN { printf "  ratio: p99 while they run / p99 with nothing: %.2fx (goal: p99 <= 50 ms)\n", d / b }'
}
round attached application/json
round streamed application/x-ndjson
for id in "${IDS[@]}"; do curl -s -H "$A" -X POST "$SB/$id/close" >/dev/null; done

# Execs that wait for clones that hang (git's workers stopped): handed over before they
# start, so that the workers stay free while the clones are stuck.
clone_round() {
	local dir=$VAR/clonewait i ok=0 held_now gw cids=()
	mkdir -p "$dir"
	gw=$(pgrep -x -P "$(cat "$SANDBOXD_PID_FILE")" sandboxd-git | tr '\n' ' ')
	# shellcheck disable=SC2086
	kill -STOP $gw
	trap 'kill -CONT '"$gw"' 2>/dev/null; bench_cleanup' EXIT
	for _ in $(seq 4); do cids+=("$(curl -sf -H "$A" -d '{}' "$SB" | jq -r .id)"); done
	for ((i = 0; i < 20; i++)); do
		curl -sS -o "$dir/$i.body" -w '%{http_code}' --max-time 240 -H "$A" \
			-d '{"cmd":"git log -1 --format=%s"}' "$SB/${cids[i % 4]}/exec" >"$dir/$i.status" 2>/dev/null &
	done
	for _ in $(seq 600); do
		[ "$(sqlb "select count(*) from held_execs where holder is not null")" -ge 20 ] && break
		sleep 0.1
	done
	held_now=$(sqlb "select count(*) from held_execs where holder is not null")
	read -r d50 d99 _ _ <<<"$(user_latency "$A")"
	# shellcheck disable=SC2086
	kill -CONT $gw
	wait 2>/dev/null || true
	for ((i = 0; i < 20; i++)); do
		[ "$(cat "$dir/$i.status")" = 200 ] && grep -q '"exitCode":0' "$dir/$i.body" && ok=$((ok + 1))
	done
	printf '%-44s %9s %9s\n' "20 execs wait for hung clones ($held_now held)" "$d50" "$d99"
	echo "  clone waits: once git ran again, $ok of 20 answered 200 with exit 0"
	for id in "${cids[@]}"; do curl -s -H "$A" -X POST "$SB/$id/close" >/dev/null; done
}
clone_round
