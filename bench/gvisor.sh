#!/usr/bin/env bash
# bench/gvisor.sh: what gVisor costs beside runc (issue 32 C, decision 0084). An
# engine of its own (its bridge, data root in memory, --userns-remap=default as the local
# stack's) with runsc as a runtime (deploy/runsc-netstack.sh, --platform=ptrace,
# --file-access=shared, as docs/operations.md sets it up) and a throwaway stack on it with the
# warm pool off, so that both kinds start cold. The same operations on a sandbox of
# isolation container (runc) and one of isolation gvisor (runsc), alternated, a new pair each
# round: create (until 201); create to the first exec's answer (the clone of a repository of
# BENCH_GVISOR_REPO_MB, default 20, MB of small files included); an exec of `true` (through
# the agent; the median of BENCH_GVISOR_EXECS, 20, per sandbox); `git clone --no-local` of
# that repository inside (git's own work: pack, index, checkout); a dependency-free
# `npm ci`. Medians of BENCH_GVISOR_RUNS (5) rounds; prints each pair and the ratio.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
VAR=$(mktemp -d /tmp/sandboxd-bench-gvisor.XXXXXXXX)
chmod 755 "$VAR"
RUNS=${BENCH_GVISOR_RUNS:-5}
EXECS=${BENCH_GVISOR_EXECS:-20}
MB=${BENCH_GVISOR_REPO_MB:-20}
E=$VAR/e SOCK=$VAR/e/docker.sock NS=bgv$$ BR=bgv$$
IMAGE=sandboxd-runner:standard
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
say() { echo "bench gvisor: $*" >&2; }

cleanup() {
	set +e
	[ -f "$VAR/stack/local.env" ] && SANDBOXD_VAR=$VAR/stack bash "$ROOT/deploy/local-stack.sh" down >/dev/null 2>&1
	local f p
	for f in /sys/fs/cgroup/*/"$NS" /sys/fs/cgroup/"$NS"; do
		# shellcheck disable=SC2038 # xargs gets the pids the cgroup.procs files hold
		[ -d "$f" ] && find "$f" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -KILL
	done
	p=$(cat "$E/docker.pid" 2>/dev/null) && [ -n "$p" ] && kill -KILL "$p" 2>/dev/null
	pgrep -f -- "$VAR/" | grep -vx "$$" | xargs -r kill -KILL 2>/dev/null
	sleep 1
	for f in /sys/fs/cgroup/*/"$NS" /sys/fs/cgroup/"$NS"; do
		[ -d "$f" ] && find "$f" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	findmnt -rn -o TARGET | grep -F "$VAR/" | sort -r | while read -r m; do umount -l "$m"; done
	ip link del "$BR" 2>/dev/null
	rm -rf -- "$VAR"
}
trap cleanup EXIT INT TERM

command -v runsc >/dev/null || { say "runsc is missing (apt-get install runsc)"; exit 1; }
[ "$(id -u)" = 0 ] || { say "an engine of its own needs root"; exit 1; }
SRC_HOST=${DOCKER_HOST:-$(bash "$ROOT/deploy/sandbox-engine.sh" host)}
docker -H "$SRC_HOST" image inspect "$IMAGE" >/dev/null 2>&1 ||
	{ say "$IMAGE is not in $SRC_HOST (deploy/build-runner-image.sh)"; exit 1; }

# ---- the engine: its bridge on a free /24 of 10.200-249.x, runsc as a runtime -------------------------
NET=''
for _ in $(seq 50); do
	n="10.$((200 + RANDOM % 50)).$((RANDOM % 256))"
	ip -4 route | grep -q "^$n\." || ip -4 addr | grep -q " $n\." || { NET=$n; break; }
done
[ -n "$NET" ] || { say "no free /24 for a bridge"; exit 1; }
ip link add "$BR" type bridge && ip addr add "$NET.1/24" dev "$BR" && ip link set "$BR" up
mkdir -p "$E/data"
chmod 0711 "$E" # the service's user reaches the engine's socket inside
mount -t tmpfs -o size=3g,mode=0710 sandboxd-bench-engine "$E/data"
jq -n --arg p "$ROOT/deploy/runsc-netstack.sh" \
	'{runtimes: {runsc: {path: $p, runtimeArgs: ["--platform=ptrace", "--file-access=shared"]}}}' >"$E/daemon.json"
(setsid dockerd --config-file "$E/daemon.json" --data-root "$E/data" --exec-root "$E/exec" \
	--pidfile "$E/docker.pid" -H "unix://$SOCK" --userns-remap=default --bridge "$BR" \
	--iptables=false --ip-masq=false --ip-forward=false --containerd-namespace "$NS" \
	--containerd-plugins-namespace "${NS}p" --cgroup-parent "$NS" --shutdown-timeout 3 \
	--log-level warn </dev/null >>"$E/dockerd.log" 2>&1 &)
for _ in $(seq 120); do
	[ "$(curl -s -m 3 --unix-socket "$SOCK" http://d/_ping 2>/dev/null)" = OK ] && break
	sleep 0.5
done
say "loading $IMAGE into an engine of its own ($SOCK)"
docker -H "$SRC_HOST" save "$IMAGE" | docker -H "unix://$SOCK" load -q >/dev/null

# ---- a stack on it ------------------------------------------------------------------------------------
mkdir -p "$VAR/stack"
say "starting a throwaway stack in $VAR/stack"
env SANDBOXD_VAR="$VAR/stack" SANDBOXD_HTTP_PORT="$(free_port)" SANDBOXD_PG_PORT="$(free_port)" \
	SANDBOXD_SKIP_DEPS=1 SANDBOXD_SKIP_IMAGE=1 SANDBOXD_DOCKER_HOST="unix://$SOCK" \
	SANDBOXD_BRIDGE="$BR" SANDBOXD_ENGINE_NAME=bench SANDBOXD_POOL_SIZE=0 SANDBOXD_WORKERS=4 \
	SANDBOXD_SANDBOX_NETWORK=bridge SANDBOXD_EGRESS=open SANDBOXD_IMAGES="standard=$IMAGE" \
	bash "$ROOT/deploy/local-stack.sh" up >"$VAR/up.log" 2>&1 || { tail -30 "$VAR/up.log"; exit 1; }
# shellcheck disable=SC1091
. "$VAR/stack/local.env"
"$ROOT/build/sandboxctl" engine runtime bench runsc >/dev/null
AUTH="Authorization: Bearer $SANDBOXD_TOKEN"
JSON='Content-Type: application/json'

# ---- the repository: MB of small text files, one commit ------------------------------------------------
curl -sf -o /dev/null -H "$AUTH" -H "$JSON" -d '{"name":"gv","visibility":"private"}' "$SANDBOXD_URL/api/v3/user/repos"
SRC=$VAR/src
git init -q -b main "$SRC"
head -c $((MB * 786432)) /dev/urandom | base64 -w 76 | split -l 130 -a 4 - "$SRC/f"
git -C "$SRC" add -A && git -C "$SRC" -c user.name=b -c user.email=b@b commit -qm files
git -C "$SRC" push -q "http://t:$SANDBOXD_TOKEN@${SANDBOXD_URL#http://}/admin/gv.git" main
SB=$SANDBOXD_URL/api/v3/repos/admin/gv/diffinery/sandboxes
FILES=$(git -C "$SRC" ls-files | wc -l)

BODY=$VAR/body
req() { # curl args: prints the ms; a status that is not 2xx stops the bench
	local out code
	out=$(curl -s -o "$BODY" -w '%{http_code} %{time_total}' --max-time 600 "$@")
	code=${out% *}
	[[ $code == 2* ]] || { say "$* answered $code: $(head -c 300 "$BODY")"; exit 1; }
	awk -v t="${out#* }" 'BEGIN { printf "%.1f", t * 1000 }'
}
ex() { # SANDBOX CMD: the ms of the exec call; the command must exit 0
	local t
	t=$(req -H "$AUTH" -H "$JSON" -d "$(jq -nc --arg c "$2" '{cmd: $c}')" "$SB/$1/exec")
	[ "$(jq -r .exitCode "$BODY")" = 0 ] || { say "'$2' failed: $(head -c 300 "$BODY")"; exit 1; }
	echo "$t"
}
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
PKG='{"name":"b","version":"1.0.0","scripts":{"postinstall":"node -e \"console.log(42)\""}}'
LOCK='{"name":"b","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{"":{"name":"b","version":"1.0.0","hasInstallScript":true}}}'
NPM="mkdir -p /tmp/n && cd /tmp/n && printf '%s' '$PKG' >package.json && printf '%s' '$LOCK' >package-lock.json && npm ci --offline --no-audit --no-fund >/dev/null 2>&1"

declare -A F
add() { F[$1,$2]+="$3 "; }
for round in $(seq "$RUNS"); do
	for iso in container gvisor; do
		c=$(req -H "$AUTH" -H "$JSON" -d "{\"isolation\":\"$iso\"}" "$SB")
		sid=$(jq -r .id "$BODY")
		e=$(ex "$sid" true)
		add create "$iso" "$c"
		add first "$iso" "$(awk -v a="$c" -v b="$e" 'BEGIN { printf "%.1f", a + b }')"
		m=$(for _ in $(seq "$EXECS"); do ex "$sid" true; done | median)
		add exec "$iso" "$m"
		add clone "$iso" "$(ex "$sid" 'git clone -q --no-local /workspace/repo /tmp/c && rm -rf /tmp/c')"
		add npm "$iso" "$(ex "$sid" "$NPM")"
		curl -s -o /dev/null -X POST -H "$AUTH" "$SB/$sid/close"
	done
	say "round $round of $RUNS done"
done

row() { # KEY LABEL
	local a b
	a=$(tr ' ' '\n' <<<"${F[$1,container]}" | grep . | median)
	b=$(tr ' ' '\n' <<<"${F[$1,gvisor]}" | grep . | median)
	printf '  %-52s runc %9.1f ms   runsc %9.1f ms   x%.1f\n' "$2" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { print b / a }')"
}
echo "gVisor beside runc: medians of $RUNS rounds, each a new sandbox of each (standard image, cold,"
echo "remapped engine; runsc $(runsc --version 2>/dev/null | head -n 1 | awk '{print $3}'), --platform=ptrace, netstack, --file-access=shared)"
row create 'create (until 201)'
row first "create to the first exec (clone of $MB MB, $FILES files)"
row exec "exec true (agent), median of $EXECS per sandbox"
row clone "git clone --no-local of it, inside"
row npm 'npm ci, dependency-free (node starts, postinstall)'
