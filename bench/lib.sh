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
