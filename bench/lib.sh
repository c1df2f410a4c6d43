# bench/lib.sh: what the bench scripts share (sourced).

# A TCP port nothing on this machine listens on.
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 40000))
		ss -Htan | awk '{print $4}' | grep -qE "[:.]$p\$" || { echo "$p"; return; }
	done
}

# one_worker_stack TAG: a throwaway stack with one worker in $VAR (the caller's, removed by
# its cleanup), its local.env read, AUTH and JSON set for curl.
one_worker_stack() {
	SANDBOXD_HTTP_PORT=$(free_port)
	SANDBOXD_PG_PORT=$(free_port)
	export SANDBOXD_VAR=$VAR SANDBOXD_HTTP_PORT SANDBOXD_PG_PORT
	export SANDBOXD_WORKERS=1 SANDBOXD_SKIP_DEPS=${SANDBOXD_SKIP_DEPS:-1}
	echo "$1: starting a throwaway stack with one worker in $VAR" >&2
	bash "$ROOT/deploy/local-stack.sh" up >"$VAR/up.log" 2>&1 || { tail -30 "$VAR/up.log"; exit 1; }
	# shellcheck disable=SC1091
	. "$VAR/local.env"
	AUTH="Authorization: Bearer $SANDBOXD_TOKEN"
	JSON='Content-Type: application/json'
}

# sandbox_with_clone NAME: the admin's private repository NAME with one commit, a sandbox on
# it (SB its route, SID its id) and its clone done. With one worker an exec must not wait
# for the clone (the worker would wait for a clone that needs a worker to fetch from): a
# GET asks the sandbox without waiting.
sandbox_with_clone() {
	local _
	curl -sf -o /dev/null -H "$AUTH" -H "$JSON" -d "{\"name\":\"$1\",\"visibility\":\"private\"}" \
		"$SANDBOXD_URL/api/v3/user/repos"
	SRC=$VAR/src
	git init -q -b main "$SRC"
	echo "$1" >"$SRC/README"
	git -C "$SRC" add README && git -C "$SRC" -c user.name=b -c user.email=b@b commit -qm "$1"
	git -C "$SRC" push -q "http://t:$SANDBOXD_TOKEN@${SANDBOXD_URL#http://}/admin/$1.git" main
	SB=$SANDBOXD_URL/api/v3/repos/admin/$1/diffinery/sandboxes
	SID=$(curl -sf -H "$AUTH" -H "$JSON" -d '{}' "$SB" | jq -r .id)
	for _ in $(seq 600); do
		[ "$(curl -sf -H "$AUTH" "$SB/$SID" | jq -r .clone.state)" = "done" ] && return 0
		sleep 0.1
	done
	echo "$1: the sandbox's clone did not finish in 60 s" >&2
	exit 1
}

# the_worker TAG: the stack's one worker's pid (MASTER, W); more or fewer stops the bench.
the_worker() {
	MASTER=$(cat "$SANDBOXD_PID_FILE")
	W=$(ps -o pid=,comm= --ppid "$MASTER" | awk '$2 == "sandboxd" {print $1}')
	[ "$(wc -w <<<"$W")" = 1 ] || { echo "$1: expected one worker, found: $W" >&2; exit 1; }
}

# stack_of_four: a throwaway stack with 4 workers and no warm pool in $VAR (the caller's; set
# other settings before), nginx's per-address rate limit out of the way (every client of a
# bench is 127.0.0.1, and the bursts are the point), its local.env read; sqlb asks its
# database. bench_cleanup stops it and removes $VAR (the caller traps it on EXIT).
stack_of_four() {
	command -v wrk >/dev/null || { echo "bench: wrk is missing (apt-get install wrk)" >&2; exit 1; }
	SANDBOXD_HTTP_PORT=$(free_port)
	SANDBOXD_PG_PORT=$(free_port)
	export SANDBOXD_VAR=$VAR SANDBOXD_HTTP_PORT SANDBOXD_PG_PORT
	export SANDBOXD_WORKERS=4 SANDBOXD_SKIP_DEPS=${SANDBOXD_SKIP_DEPS:-1} SANDBOXD_POOL_SIZE=0
	export SANDBOXD_SANDBOX_MEMORY_MB=256 SANDBOXD_RATE_LIMIT=10000r/s SANDBOXD_RATE_BURST=10000
	echo "bench: starting a throwaway stack in $VAR" >&2
	bash "$ROOT/deploy/local-stack.sh" up >"$VAR/up.log" 2>&1 || { tail -30 "$VAR/up.log"; exit 1; }
	# shellcheck disable=SC1091
	. "$VAR/local.env"
}
# bench_cleanup: background jobs killed, the sandbox SID of SB (sandbox_with_clone's) closed
# when there is one, the stack stopped, $VAR removed (kept, and said, with BENCH_KEEP=1).
bench_cleanup() {
	jobs -p | xargs -r kill 2>/dev/null || true
	if [ -n "${SID:-}" ]; then
		curl -s -o /dev/null -X POST -H "Authorization: Bearer $SANDBOXD_TOKEN" "$SB/$SID/close" || true
	fi
	SANDBOXD_VAR=$VAR bash "$ROOT/deploy/local-stack.sh" down >/dev/null 2>&1 || true
	if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "bench: kept $VAR" >&2; else rm -rf -- "$VAR"; fi
}
sqlb() { psql "$SANDBOXD_DATABASE_URL" -Atc "$1"; }

# to_ms WRK_FIGURE: wrk's "812.00us", "3.20ms" or "1.02s" in milliseconds.
to_ms() { awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /[0-9]s$/) n *= 1000; printf "%.2f", n }'; }

# user_latency AUTH_HEADER: "p50 p99 answered timeouts" of GET /api/v3/user, 4 clients, SECS
# seconds; wrk's timeout is 2 s, and a request not answered by then is counted apart (not in
# the percentiles), so that a stack that answers nothing cannot look fast.
user_latency() {
	local out n t
	out=$(wrk -t2 -c4 -d"${SECS}s" --timeout 2s --latency -H "$1" "$SANDBOXD_URL/api/v3/user")
	if grep -q 'Non-2xx' <<<"$out"; then echo "bench: non-2xx answers: $out" >&2; exit 1; fi
	n=$(awk '$2 == "requests" && $3 == "in" {print $1}' <<<"$out")
	t=$(sed -n 's/.*timeout \([0-9]*\).*/\1/p' <<<"$out")
	echo "$(to_ms "$(awk '$1 == "50%" {print $2}' <<<"$out")") $(to_ms "$(awk '$1 == "99%" {print $2}' <<<"$out")") ${n:-0} ${t:-0}"
}
