#!/usr/bin/env bash
# t_faults_docker.sh: the Docker engine restarted under the service. The host's dockerd is
# shared (other stacks, other people's tests), so this file starts an engine of its own
# (own data and exec roots, socket, bridge, containerd namespace and cgroup parent; no
# iptables), loads the runner image into it, starts a second stack (PostgreSQL, sandboxd,
# nginx: its own database, so that its reaper is the only one that sees this engine) pointed
# at it, and restarts that engine. While it is down: /healthz 503 naming docker, a create
# takes the one warm container (its agent needs no engine) and the next fails cleanly, and
# the reaper fails nothing. Once it is back: the sandboxes whose
# containers died are failed by the reaper, their tokens revoked, their containers removed,
# and new sandboxes work. The stack reaches that engine over tcp:// with mutual TLS (certificates
# made here), as a service on another host would. Everything it starts is removed on exit,
# also on failure.
. "$(dirname "$0")/lib.sh"

for t in "$DOCKERD" ip docker; do
	if ! command -v "$t" >/dev/null 2>&1; then
		fail "$t is installed" "this test starts an engine of its own"
		finish
	fi
done
if ! docker image inspect sandboxd-runner:minimal >/dev/null 2>&1; then
	fail 'the runner image is in the host engine' 'run deploy/build-runner-image.sh'
	finish
fi

# The engine's folder first (lib.sh): its certificates go in it before it starts.
private_engine_dir sdf

# ---- certificates: a CA of its own, the engine's (for 127.0.0.1), the service's --------------------------
T=$D/tls
if ! tls_certs "$T"; then
	fail 'certificates for the engine and the service' 'openssl failed'
	finish
fi
TLS_PORT=$(free_port)

# ---- a bridge and an engine of its own (lib.sh), also on TCP with TLS ----------------------------------
private_engine_up sdf -H "tcp://127.0.0.1:$TLS_PORT" --tlsverify --tlscacert "$T/ca.pem" \
	--tlscert "$T/server.pem" --tlskey "$T/server-key.pem"

# ---- a stack of its own, on that engine ------------------------------------------------------------------
private_stack_up stack 'a second stack (PostgreSQL, sandboxd, nginx) on that engine, over tcp:// with TLS' \
	SANDBOXD_WORKERS=2 SANDBOXD_BRIDGE="$BR" \
	SANDBOXD_DOCKER_HOST="tcp://127.0.0.1:$TLS_PORT" SANDBOXD_DOCKER_CA="$T/ca.pem" \
	SANDBOXD_DOCKER_CERT="$T/client.pem" SANDBOXD_DOCKER_KEY="$T/client-key.pem" \
	SANDBOXD_REAPER_INTERVAL=1 SANDBOXD_SANDBOX_MEMORY_MB=256 SANDBOXD_POOL_SIZE=1 \
	SANDBOXD_SANDBOX_NETWORK=bridge SANDBOXD_EGRESS=open SANDBOXD_IMAGES=minimal=sandboxd-runner:minimal
# The engine takes no client without a certificate of its CA: the stack's answers below
# come through TLS with the service's own.
check 'the engine refuses a client without a certificate' \
	eval '! curl -s -m 5 --cacert "$T/ca.pem" "https://127.0.0.1:$TLS_PORT/_ping" >/dev/null'
check 'and answers one with the service'"'"'s certificate' \
	eval '[[ $(curl -s -m 5 --cacert "$T/ca.pem" --cert "$T/client.pem" --key "$T/client-key.pem" "https://127.0.0.1:$TLS_PORT/_ping") == OK ]]'
# From here on, everything (api, sql, sandboxctl) talks to the second stack.
private_stack_use stack
HOSTPORT=${SANDBOXD_URL#http://}
LOG=$D/stack/log/sandboxd.log

O="fk$SFX"
mk_repo "$O" r
api POST "$SB" '{}' "$OT"
expect_status 201 'sandbox A on the private engine'
A=$(_json .id)
api POST "$SB" '{}' "$OT"
expect_status 201 'sandbox B'
B=$(_json .id)
api POST "$SB/$A/exec" '{"cmd":"cat x"}' "$OT"
expect_json .stdout x 'A works (cloned over the private bridge)'
on_private() { dk ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$1")"; }
check_eq 'both containers run on the private engine' 2 "$({ on_private "$A"; on_private "$B"; } | wc -l)"

state() { sql "select state from sandboxes where id = '$1'"; }
is_state() { [[ $(state "$1") == "$2" ]]; }
live_tokens() { sql "select count(*) from tokens where sandbox_id = '$1' and revoked_at is null"; }
check_eq "A has a live git token" 1 "$(live_tokens "$A")"

# The pool (one container) is full again before the engine dies: the first create while it
# is down takes that container, the second has none to take.
warm_ready() { [[ $(sql "select count(*) from warm_containers where state = 'ready'") == 1 ]]; }
check 'the warm pool has its one container ready' wait_until 60 warm_ready

# ---- the engine dies (SIGKILL): unreachable, its containers may live on ------------------------
P=$(dockerd_pid)
kill -KILL "$P"
gone() { ! kill -0 "$P" 2>/dev/null; }
check 'dockerd is killed' wait_until 10 gone
api GET /healthz "" -
expect_status 503 'engine down: /healthz 503'
expect_json_match .message '[Dd]ocker' 'naming docker'
# A warm container is handed over through its agent, which needs no engine.
api POST "$SB" '{}' "$OT"
expect_status 201 'engine down: a create takes the warm container'
W=$(_json .id)
check_eq 'handed over through its agent' 'true|agent' "$(create_audit "$W" pooled handed_by)"
api POST "$SB/$W/exec" '{"cmd":"cat x"}' "$OT"
expect_json .stdout x 'and it clones and execs without the engine'
api POST "$SB" '{}' "$OT"
expect_error 503 'the sandbox container did not start; try again' 'engine down, pool empty: a create answers 503'
DOWNID=$(sql "select s.id from sandboxes s join accounts a on a.id = s.account_id where a.login = '$O' and s.id not in ('$A', '$B', '$W')")
check_eq 'and its row is failed, not left starting' failed "$(state "$DOWNID")"
# A's container lives on without its engine: a worker that already knows A's address
# reaches A's agent without Docker and serves the call; one that must ask Docker for it
# answers 503. Either answer, each exactly.
last_backend() { sql "select coalesce(details->>'backend', '') from audit_log where sandbox_id = '$A' and action = '$1' order by id desc limit 1"; }
api POST "$SB/$A/exec" '{"cmd":"cat x"}' "$OT"
if [[ $STATUS == 200 ]]; then
	expect_json .stdout x 'engine down: an exec served by the agent (its address known) gives the file'
	check_eq 'and its row says backend agent' agent "$(last_backend sandbox.exec)"
else
	expect_error 503 'docker unavailable' 'engine down: an exec answers 503 docker unavailable'
fi
api POST "$SB/$A/read" '{"path":"x"}' "$OT"
if [[ $STATUS == 200 ]]; then
	expect_json .content eAo= 'engine down: a read served by the agent (its address known) gives the file'
	check_eq 'and its row says backend agent' agent "$(last_backend sandbox.read)"
else
	expect_error 503 'docker unavailable' 'engine down: a read answers 503 docker unavailable'
fi
# The reaper goes on while the engine is away; it must not take "no answer" for "gone".
passes() { grep -c 'reaper: engine .* does not answer' "$LOG" 2>/dev/null || true; }
P0=$(passes)
two_passes() { (($(passes) >= P0 + 2)); }
check 'the reaper makes two passes while the engine is down' wait_until 20 two_passes
check_eq 'and fails nothing it cannot see: A is still ready' ready "$(state "$A")"
check_eq 'B too' ready "$(state "$B")"

private_engine_start
check 'dockerd answers again' wait_until 60 ping_ok
# Whatever the engine did with the containers it found, row and container agree: ready with
# a running container that execs, or failed with its container removed and token revoked.
agrees() { # SANDBOX
	local st cs
	st=$(state "$1")
	cs=$(dk ps -a --filter "label=sandboxd.sandbox=$(owner_label_of "$1")" --format '{{.State}}' | head -n 1)
	case $st in
	ready) [[ $cs == running ]] ;;
	failed) [[ -z $cs && $(live_tokens "$1") == 0 ]] ;;
	*) return 1 ;;
	esac
}
check 'after the crash, A agrees with its container within 20 s' wait_until 20 agrees "$A"
check 'and B' wait_until 20 agrees "$B"
check 'and W, the warm one taken while it was down' wait_until 20 agrees "$W"
printf '#   after the crash: A %s, B %s, W %s\n' "$(state "$A")" "$(state "$B")" "$(state "$W")"
if [[ $(state "$A") == ready ]]; then
	api POST "$SB/$A/exec" '{"cmd":"cat x"}' "$OT"
	expect_json .stdout x 'A, still ready, execs'
fi

# ---- the engine restarted (SIGTERM): its containers are stopped with it ----------------------------
api POST "$SB" '{}' "$OT"
expect_status 201 'sandbox E, on the engine back from its crash'
E=$(_json .id)
api POST "$SB/$E/exec" '{"cmd":"cat x"}' "$OT"
expect_json .stdout x 'E works'
P=$(dockerd_pid)
kill -TERM "$P"
check 'dockerd stops' wait_until 30 gone
private_engine_start
check 'dockerd answers again' wait_until 60 ping_ok
check 'the reaper fails E, whose container died' wait_until 20 is_state "$E" failed
check_eq "with the reason" 'container gone' "$(sql "select end_reason from sandboxes where id = '$E'")"
check_eq 'its git token is revoked' 0 "$(live_tokens "$E")"
check 'and W, whose container died now or at the crash' wait_until 20 is_state "$W" failed
check_eq 'A, B, W and E: each failure is audited once, by the reaper' 4 \
	"$(sql "select count(*) from audit_log where action = 'sandbox.reconcile' and via = 'reaper' and sandbox_id in ('$A', '$B', '$W', '$E')")"
no_containers() { [[ -z $(for s in "$A" "$B" "$W" "$E"; do dk ps -aq --filter "label=sandboxd.sandbox=$(owner_label_of "$s")"; done) ]]; }
check 'no container is left of them' wait_until 20 no_containers
api POST "$SB/$A/exec" '{"cmd":"true"}' "$OT"
expect_error 410 'sandbox is failed' 'A answers 410 sandbox is failed'
api GET /healthz "" -
expect_status 200 'engine back: /healthz 200'
api POST "$SB" '{}' "$OT"
expect_status 201 'a new sandbox'
C=$(_json .id)
api POST "$SB/$C/exec" '{"cmd":"cat x; git log --format=%s"}' "$OT"
expect_json .stdout $'x\nx' 'works: its clone and exec'
api POST "$SB/$C/close" "" "$OT"
expect_status 204 'and closes'

finish
