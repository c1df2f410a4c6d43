# shellcheck shell=bash disable=SC2034
# lib.sh: helpers sourced by every tests/integration/t_*.sh.
#
# The tests talk to the real stack that run.sh started (nginx + sandboxd +
# PostgreSQL on loopback); run.sh exports local.env before running them.
# Each check prints one line, "ok   <file>: <name>" or "FAIL <file>: <name>",
# and appends its outcome to $IT_RESULTS, which run.sh counts. A failing check
# also prints the last request, its status and body.
#
#   api METHOD PATH [BODY] [TOKEN]
#       one request through nginx; sets STATUS, BODY, HEADERS and REQ_ID.
#       Extra request headers: API_HEADERS=('Name: value' …).
#       BODY is JSON text, or @FILE to send a file; "" sends no body.
#       TOKEN defaults to $SANDBOXD_TOKEN; "-" sends no Authorization header;
#       "raw:<value>" sends "Authorization: <value>" as given.
#   expect_status CODE [NAME]
#   expect_schema OPERATION_ID STATUS [NAME]
#       STATUS, and BODY valid against docs/openapi.yaml's schema for that answer (Ajv).
#   expect_json FILTER VALUE [NAME]     jq -r FILTER on BODY equals VALUE
#   expect_message TEXT [NAME]          .message equals TEXT
#   expect_keys FILTER 'k1,k2,…' [NAME] the object's keys are exactly these
#   expect_header NAME VALUE [LABEL]    header value equals VALUE
#   expect_header_match NAME REGEX [LABEL]
#   check NAME CMD…  /  check_eq NAME EXPECTED ACTUAL
#   sql 'query'                         psql -Atq with the PG* settings (the database owner)
#   sql_super 'query'                   the same as the cluster's superuser
#   mk_account LOGIN [flags]            sandboxctl account create
#   mk_token LOGIN [scope] [flags]      prints the token; last_token_id gives its id
#   wait_until SECONDS CMD…             poll CMD every 0.1 s
#   ok NAME / fail NAME DETAIL / finish
#   skip NAME                           a check this machine or stack cannot run: its own
#                                       outcome, counted apart by run.sh (and a failure
#                                       under CI=true unless the schedule says may-skip)
#   it_tokens TEXT                      record the tokens in TEXT (see below)
#
# Every token the suite mints is recorded in $IT_TOKENS (one a line), so that run.sh can
# look for each of them in the logs and the audit log at the end: api records the tokens
# in response bodies, $SANDBOXCTL is a wrapper that records what sandboxctl prints, and a
# sandbox's token (which no response shows) is read from its container once it is made.

set -u

IT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$IT_DIR/../.." && pwd)
SANDBOXCTL="$ROOT/${SANDBOXD_BUILD:-build}/sandboxctl"

LOCAL_STACK="$ROOT/deploy/local-stack.sh"
TEST_NAME=$(basename "$0" .sh)

: "${SANDBOXD_URL:?run the tests through tests/integration/run.sh (or source local.env first)}"
: "${SANDBOXD_TOKEN:?SANDBOXD_TOKEN is not set}"
: "${SANDBOXD_VAR:?SANDBOXD_VAR is not set}"
export SANDBOXD_REPOS_DIR=${SANDBOXD_REPOS_DIR:-$SANDBOXD_VAR/repos}
REPOS_DIR=$SANDBOXD_REPOS_DIR
SANDBOXD_URL=${SANDBOXD_URL%/}

# The user sandboxes run as on the stack's engine (GET /healthz, boxuser.h): root on an
# engine that remaps it, else the fallback uid. Tests that look into a container with
# docker exec (DOCKER_HOST, from local.env: the stack's engine) act as that user.
BOX_UID=$(curl -s -m 10 "$SANDBOXD_URL/healthz" 2>/dev/null | jq -r '.sandbox_user.uid // 61000' 2>/dev/null)
[[ $BOX_UID =~ ^[0-9]+$ ]] || BOX_UID=61000
BOX_USER=$BOX_UID:$BOX_UID
BOX_HOME=/home/sandbox
[[ $BOX_UID != 0 ]] || BOX_HOME=/root

# --- recording minted tokens ------------------------------------------------------------------
: "${IT_TOKENS:=$SANDBOXD_VAR/it-tokens}"
# personal, job and sandbox tokens (prefix, 36 + 6 base62), and JWTs (git URLs)
IT_TOKEN_RE='d(fy|jt|st)_[0-9A-Za-z]{42}|eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{20,}'
it_tokens() { grep -oE "$IT_TOKEN_RE" <<<"$*" >>"$IT_TOKENS" 2>/dev/null || true; }
# sandboxctl through a wrapper that records the tokens it prints (token create, git-url).
_it_ctl_wrapper() {
	local real=$SANDBOXCTL w=$SANDBOXD_VAR/it-bin/sandboxctl
	if [[ -x $w ]] && grep -qF "\"$real\"" "$w"; then
		SANDBOXCTL=$w
		return 0
	fi
	mkdir -p "${w%/*}" || return 0
	{
		printf '#!/usr/bin/env bash\n'
		printf '# Written by tests/integration/lib.sh: sandboxctl, recording the tokens it prints.\n'
		printf 'set -o pipefail\n'
		printf '"%s" "$@" | tee >(grep -oE %q >>%q || true)\n' "$real" "$IT_TOKEN_RE" "$IT_TOKENS"
		printf 'exit "${PIPESTATUS[0]}"\n'
	} >"$w.new" && chmod 0755 "$w.new" && mv -f "$w.new" "$w" && SANDBOXCTL=$w
}
_it_ctl_wrapper

# The password of the first "Authorization: Basic …" header in the text (a clone's git
# config holds the sandbox token so: app/sandbox/sh/clone.sh).
_basic_password() {
	local b
	b=$(grep -oiE 'authorization: basic [A-Za-z0-9+/=]+' <<<"$1" | head -n 1 | awk '{print $3}')
	[[ -n $b ]] && base64 -d <<<"$b" 2>/dev/null | sed 's/^[^:]*://'
}

# A new sandbox's token lives only in its container (an Authorization header in the clone's
# git config, before that in the clone's environment, and before that the clone's parameter
# file): read it from there while the container runs.
_it_sandbox_token() { # SANDBOX_ID
	local cid out i
	for ((i = 0; i < 150; i++)); do
		cid=$(docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$1")" 2>/dev/null)
		[[ -n $cid ]] || break
		# While the clone runs, the header is in its git's environment only (clone.sh).
		out=$(docker exec -u "$BOX_USER" "$cid" sh -c 'cat /tmp/.sandboxd/clone 2>/dev/null;
			cat /workspace/repo/.git/config 2>/dev/null
			for f in /proc/[0-9]*/environ; do tr "\0" "\n" <"$f"; done 2>/dev/null |
				grep "^GIT_CONFIG_VALUE_0=Authorization"' 2>/dev/null)
		out+=$'\n'$(_basic_password "$out")
		if [[ $out =~ dst_[0-9A-Za-z]{42} ]]; then
			printf '%s\n' "${BASH_REMATCH[0]}" >>"$IT_TOKENS"
			return 0
		fi
		sleep 0.2
	done
	printf '%s\n' "$1" >>"$IT_TOKENS.missed"
}

# The label value a sandbox's container carries: the sandbox's id, or, for a container
# from the warm pool, its pool row's (pool:wc_…), given before any sandbox asked for it.
owner_label_of() { # SANDBOX_ID
	local w=""
	[[ $1 =~ ^sb_[0-9a-f]{24}$ ]] &&
		w=$(psql -X -Atq -c "SELECT id FROM warm_containers WHERE claimed_by = '$1'" 2>/dev/null)
	if [[ -n $w ]]; then printf 'pool:%s\n' "$w"; else printf '%s\n' "$1"; fi
}

# The sandbox token of container CID, from its clone's git config (app/sandbox/sh/clone.sh). Older
# clones held it in the remote URL: that form is read too, so that a test run against an
# older build shows what it checks fail, not a missing token.
box_token_of() { # CID
	local cfg
	cfg=$(docker exec -u "$BOX_USER" "$1" cat /workspace/repo/.git/config 2>/dev/null)
	_basic_password "$cfg" | grep -oE '^dst_[0-9A-Za-z]{42}$' ||
		sed -n 's/.*x-access-token:\(dst_[0-9A-Za-z]*\)@.*/\1/p' <<<"$cfg"
}

# mk_bridge NAME: a bridge of the test's own on a free /24 of 10.200-249.x (no address or
# route of the host there); GW gets its address (.1). The caller removes it (ip link del).
mk_bridge() {
	local i net
	GW=''
	for ((i = 0; i < 50; i++)); do
		net="10.$((200 + SRANDOM % 50)).$((SRANDOM % 256))"
		ip -4 route | grep -q "^$net\." && continue
		ip -4 addr | grep -q " $net\." && continue
		GW=$net.1
		break
	done
	[[ -n $GW ]] && ip link add "$1" type bridge && ip addr add "$GW/24" dev "$1" && ip link set "$1" up
}

# A TCP port nothing on this machine listens on or uses.
free_port() {
	local p
	while :; do
		p=$((20000 + SRANDOM % 40000))
		ss -Htan | awk '{print $4}' | grep -qE "[:.]$p\$" || { echo "$p"; return; }
	done
}

# ---- a Docker engine of the test's own ----------------------------------------------------------
# The host's dockerd is shared (other stacks, other people's tests), so a test that stops an
# engine or takes an address away starts one of its own: own data and exec roots, socket,
# bridge (mk_bridge), containerd namespace and cgroup parent; no iptables. Never
# --bridge=none: that deletes the host's docker0.
#
#   private_engine_dir PREFIX     D (in the stack's var dir: run.sh's last sweep finds what
#                                 names it; a short path, as containerd's sockets live under
#                                 the exec root and sun_path is 108 bytes), NS, BR, SOCK;
#                                 private_engine_down runs at exit. Once per test.
#   private_engine_up PREFIX [DOCKERD_ARG…]
#                                 private_engine_dir, the bridge, the engine (with the extra
#                                 arguments), and the runner image loaded into it; a failure
#                                 is reported and ends the test.
#   private_engine_start          dockerd again with the same arguments (after a kill)
#   private_engine_down           everything above and the stacks private_stack_up started,
#                                 whatever happened, within seconds: it is all throwaway, so
#                                 nothing is stopped gracefully. Each stack's sandboxd log is
#                                 kept (log/faults-docker-sandboxd.log for t_faults_docker's
#                                 stack "stack", log/hosts-b-sandboxd.log for t_hosts' "b").
#   dk ARG…                       docker against that engine; ping_ok: it answers
#
# Stacks of the test's own (PostgreSQL, sandboxd, nginx), on those engines:
#   private_stack_up NAME LABEL [SETTING=VALUE …]
#                                 deploy/local-stack.sh up in $D/NAME: its own SANDBOXD_VAR,
#                                 free HTTP and PostgreSQL ports, SANDBOXD_SKIP_DEPS=1,
#                                 SANDBOXD_SKIP_BUILD=1 and SANDBOXD_SKIP_IMAGE=1 (the engine
#                                 has the minimal image private_engine_up loaded: name only it
#                                 in SANDBOXD_IMAGES), then the settings given (they win; an
#                                 empty value counts as unset for local-stack.sh); ok LABEL
#                                 once it is up, else fail LABEL with the end of $D/NAME-up.log,
#                                 and the test ends. private_engine_down stops it.
#   private_stack_use NAME        its local.env in this shell (SANDBOXD_URL, SANDBOXD_TOKEN,
#                                 PG*, …: api, sql and ctl talk to it from here) and REPOS_DIR
DOCKERD=$(command -v dockerd || echo /usr/sbin/dockerd)
PS_NAMES=()
declare -A PS_ENV=()
PE_PREFIX='' PE_ARGS=()
dk() { docker -H "unix://$SOCK" "$@"; }
ping_ok() { [[ $(curl -s -m 3 --unix-socket "$SOCK" http://d/_ping 2>/dev/null) == OK ]]; }
dockerd_pid() { cat "$D/docker.pid" 2>/dev/null; }
pid_in() { local p; p=$(head -n 1 "$1" 2>/dev/null | tr -cd '0-9'); [[ -n $p ]] && echo "$p"; }

# Bridges: a killed dockerd leaves the links of its networks' bridges behind (a stack's
# <network>-web and -none, sbx…w and sbx…n, or br-…), and each holds one of Docker's default
# address pools: enough of them and the next engine cannot make a network ("could not find
# an available, non-overlapping IPv4 address pool"). So private_engine_down removes the
# bridges of its own stacks and Docker's default-named ones that appeared since
# private_engine_dir and that neither the stack's engine nor the host's has a network for.
bridges_now() { ip -o link show type bridge 2>/dev/null | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | sort -u; }
engines_bridges() {
	local h id name
	for h in "${DOCKER_HOST:-unix:///var/run/docker.sock}" unix:///var/run/docker.sock; do
		for id in $(docker -H "$h" network ls -q --no-trunc --filter driver=bridge 2>/dev/null); do
			name=$(docker -H "$h" network inspect -f '{{index .Options "com.docker.network.bridge.name"}}' "$id" 2>/dev/null)
			echo "${name:-br-${id:0:12}}"
		done
	done | sort -u
}
private_engine_bridges_down() {
	local b keep now ours=' ' name sum
	# Only what this suite's engines and stacks can have left: its stacks' bridges
	# (local-stack.sh names them sbx<cksum of the var dir>, and its w and n) and Docker's
	# default names (br-<id>). Never another stack's: run.sh runs stacks side by side, and
	# this shell's DOCKER_HOST may name the private engine, not theirs.
	for name in "${PS_NAMES[@]+"${PS_NAMES[@]}"}"; do
		sum=$(printf '%s' "$(realpath -m "$D/$name")" | cksum | cut -d' ' -f1)
		ours+="sbx$sum sbx${sum}w sbx${sum}n "
	done
	# The bridges first, the engines' networks after: a network made in between is then
	# either in both or in neither.
	now=$(bridges_now)
	keep=$(engines_bridges)
	comm -23 <(printf '%s\n' "$now") <(printf '%s\n' "$PE_BRIDGES_BEFORE") | while read -r b; do
		[[ -n $b ]] || continue
		[[ $ours == *" $b "* || $b =~ ^br-[0-9a-f]{12}$ ]] || continue
		grep -qxF -- "$b" <<<"$keep" || ip link del "$b" 2>/dev/null
	done
	return 0
}
PE_BRIDGES_BEFORE=''

private_engine_dir() {
	[[ -n $PE_PREFIX ]] && return 0
	PE_BRIDGES_BEFORE=$(bridges_now)
	PE_PREFIX=$1
	MAIN_VAR=$SANDBOXD_VAR
	D=$(mktemp -d "$SANDBOXD_VAR/$1.XXXXXX")
	NS=$1$SFX
	BR=$1${SFX:0:8}
	SOCK=$D/docker.sock
	AT_EXIT+=(private_engine_down)
}

private_engine_start() { # in a subshell: not a job of this shell (no "Killed" notice)
	(setsid "$DOCKERD" --config-file "$D/daemon.json" --data-root "$D/data" --exec-root "$D/exec" \
		--pidfile "$D/docker.pid" -H "unix://$SOCK" "${PE_ARGS[@]+"${PE_ARGS[@]}"}" \
		--bridge "$BR" --iptables=false \
		--ip-masq=false --ip-forward=false --containerd-namespace "$NS" \
		--containerd-plugins-namespace "${NS}p" --cgroup-parent "$NS" --shutdown-timeout 3 \
		--log-level warn </dev/null >>"$D/dockerd.log" 2>&1 &)
}

private_engine_up() {
	private_engine_dir "$1"
	shift
	PE_ARGS=("$@")
	if ! mk_bridge "$BR"; then
		fail "a bridge of its own ($BR, $GW/24)" 'ip link add … type bridge failed'
		finish
	fi
	ok "a bridge of its own: $BR $GW/24"
	echo '{}' >"$D/daemon.json"
	# Its images and containers in memory: loading the image is quicker, and removing it is
	# one umount (on disk, a slow rm -rf is left for the end).
	mkdir -p "$D/data"
	mount -t tmpfs -o size=2g,mode=0710 sandboxd-it-engine "$D/data" 2>/dev/null || true
	private_engine_start
	if ! wait_until 60 ping_ok; then
		fail 'a dockerd of its own answers within 60 s' "$(tail -n 5 "$D/dockerd.log")"
		finish
	fi
	ok "a dockerd of its own answers (pid $(dockerd_pid), $SOCK, bridge $BR)"
	if docker save sandboxd-runner:minimal | dk load -q >/dev/null; then
		ok 'the runner image is loaded into it'
	else
		fail 'the runner image is loaded into it' 'docker save | docker load failed'
		finish
	fi
}

private_stack_up() { # NAME LABEL [SETTING=VALUE …]
	local name=$1 label=$2 dir=$D/$1
	shift 2
	local settings=(SANDBOXD_VAR="$dir" SANDBOXD_HTTP_PORT="$(free_port)" SANDBOXD_PG_PORT="$(free_port)"
		SANDBOXD_SKIP_DEPS=1 SANDBOXD_SKIP_BUILD=1 SANDBOXD_SKIP_IMAGE=1 "$@")
	PS_NAMES+=("$name")
	PS_ENV[$name]=$(printf '%q ' "${settings[@]}")
	if ! env "${settings[@]}" timeout -k 10 300 bash "$LOCAL_STACK" up >"$dir-up.log" 2>&1 </dev/null; then
		fail "$label" "$(tail -n 8 "$dir-up.log")"
		finish
	fi
	ok "$label"
}

private_stack_use() { # NAME
	set -a
	# shellcheck disable=SC1090
	. "$D/$1/local.env"
	set +a
	SANDBOXD_URL=${SANDBOXD_URL%/}
	REPOS_DIR=$SANDBOXD_REPOS_DIR
}

# Each stack, the last made first (a stack that shares another's database goes before it):
# its egress rules go with its down (while its engine still answers); then sandboxd (it
# leads its own process group: workers, reaper), nginx and PostgreSQL, whatever is left.
private_stacks_down() {
	local i n dir p f=${TEST_NAME#t_}
	for ((i = ${#PS_NAMES[@]} - 1; i >= 0; i--)); do
		n=${PS_NAMES[$i]} dir=$D/${PS_NAMES[$i]}
		eval "env ${PS_ENV[$n]} timeout -k 2 20 bash \"\$LOCAL_STACK\" down" >>"$dir-down.log" 2>&1 </dev/null
		p=$(pid_in "$dir/run/sandboxd/sandboxd.pid") && [[ $(cat "/proc/$p/comm" 2>/dev/null) == sandboxd ]] &&
			kill -KILL -- "-$p" 2>/dev/null
		p=$(pid_in "$dir/run/nginx.pid") && kill -TERM "$p" 2>/dev/null
		p=$(pid_in "$dir/pg/postmaster.pid") && kill -QUIT "$p" 2>/dev/null
		# run.sh looks for sanitizer reports in its own log folder
		[[ $n == stack ]] && n='' || n=-$n
		[[ -f $dir/log/sandboxd.log ]] && cp "$dir/log/sandboxd.log" "$MAIN_VAR/log/${f//_/-}$n-sandboxd.log"
	done
	return 0
}

private_engine_down() {
	set +e
	local t0=$SECONDS p f i
	[[ -n $PE_PREFIX && -d $D ]] || return 0
	private_stacks_down
	# the engine: its containers' processes (its cgroup parent), then dockerd, its containerd and
	# the shims (their command lines name $D), which also ends the second stack's leftovers
	for f in /sys/fs/cgroup/*/"$NS" /sys/fs/cgroup/"$NS"; do
		# shellcheck disable=SC2038 # xargs gets the pids the cgroup.procs files hold
		[[ -d $f ]] && find "$f" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -KILL 2>/dev/null
	done
	p=$(pid_in "$D/docker.pid") && kill -KILL "$p" 2>/dev/null
	pgrep -f -- "$D/" | grep -vx "$$" | xargs -r kill -KILL 2>/dev/null
	for ((i = 0; i < 30; i++)); do [[ -z $(pgrep -f -- "$D/") ]] && break; sleep 0.1; done
	for f in /sys/fs/cgroup/*/"$NS" /sys/fs/cgroup/"$NS"; do
		[[ -d $f ]] && find "$f" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	findmnt -rn -o TARGET | grep -F "$D/" | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
	ip link del "$BR" 2>/dev/null
	private_engine_bridges_down
	[[ $D == */"$PE_PREFIX".* ]] && rm -rf -- "$D"
	printf '# the private engine and stack are removed (%s s)\n' "$((SECONDS - t0))"
	return 0
}

# ---- a second engine beside it, on the same bridge (t_engines) ------------------------------------
#   second_engine_up [DOCKERD_ARG…]  after private_engine_up: another dockerd in $D/b (own roots,
#                                 socket SOCK2, containerd namespace and cgroup parent NS2), on
#                                 the same bridge BR so that its sandboxes reach the stack's git
#                                 and agents alike; it gives out the upper half of the bridge's
#                                 addresses (--fixed-cidr), which the first engine, counting up
#                                 from .2, never reaches in a test. The runner image is loaded.
#   second_engine_apart [DOCKERD_ARG…]
#                                 the same, but on a bridge of its own (BR2, its address GW2:
#                                 mk_bridge), as the engine of another host would be: the
#                                 whole of its /24 is its own
#   second_engine_start           it again with the same arguments (after second_engine_kill)
#   second_engine_kill            SIGKILL to its dockerd (its containers live on, as in a crash)
#   dk2 ARG…, ping2_ok            docker against it; it answers
D2='' SOCK2='' NS2='' SE_ARGS=() SE_BRIDGE=() BR2='' GW2=
dk2() { docker -H "unix://$SOCK2" "$@"; }
ping2_ok() { [[ $(curl -s -m 3 --unix-socket "$SOCK2" http://d/_ping 2>/dev/null) == OK ]]; }
second_engine_start() {
	(setsid "$DOCKERD" --config-file "$D/daemon.json" --data-root "$D2/data" --exec-root "$D2/exec" \
		--pidfile "$D2/docker.pid" -H "unix://$SOCK2" "${SE_ARGS[@]+"${SE_ARGS[@]}"}" \
		"${SE_BRIDGE[@]}" --iptables=false \
		--ip-masq=false --ip-forward=false --containerd-namespace "$NS2" \
		--containerd-plugins-namespace "${NS2}p" --cgroup-parent "$NS2" --shutdown-timeout 3 \
		--log-level warn </dev/null >>"$D2/dockerd.log" 2>&1 &)
}
second_engine_kill() { local p; p=$(pid_in "$D2/docker.pid") && kill -KILL "$p" 2>/dev/null; }
second_engine_apart() {
	local gw=$GW
	BR2=${BR}b
	AT_EXIT=("ip link del '$BR2' 2>/dev/null" "${AT_EXIT[@]}")
	if ! mk_bridge "$BR2"; then
		fail "a bridge of its own for the second engine ($BR2)" 'ip link add … type bridge failed'
		finish
	fi
	GW2=$GW GW=$gw
	ok "a bridge of its own for the second engine: $BR2 $GW2/24"
	SE_BRIDGE=(--bridge "$BR2")
	second_engine_up "$@"
}

second_engine_up() {
	SE_ARGS=("$@")
	((${#SE_BRIDGE[@]})) || SE_BRIDGE=(--bridge "$BR" --fixed-cidr "${GW%.1}.128/25")
	D2=$D/b SOCK2=$D/b/docker.sock NS2=${NS}b
	mkdir -p "$D2/data"
	AT_EXIT=(second_engine_down "${AT_EXIT[@]}")
	mount -t tmpfs -o size=2g,mode=0710 sandboxd-it-engine "$D2/data" 2>/dev/null || true
	second_engine_start
	if ! wait_until 60 ping2_ok; then
		fail 'a second dockerd answers within 60 s' "$(tail -n 5 "$D2/dockerd.log")"
		finish
	fi
	ok "a second dockerd answers (pid $(pid_in "$D2/docker.pid"), $SOCK2, ${SE_BRIDGE[*]})"
	if docker save sandboxd-runner:minimal | dk2 load -q >/dev/null; then
		ok 'the runner image is loaded into it'
	else
		fail 'the runner image is loaded into it' 'docker save | docker load failed'
		finish
	fi
}
second_engine_down() { # its containers' processes (its cgroup parent), then the engine itself
	set +e
	local f
	[[ -n $D2 && -d $D2 ]] || return 0
	for f in /sys/fs/cgroup/*/"$NS2" /sys/fs/cgroup/"$NS2"; do
		# shellcheck disable=SC2038 # xargs gets the pids the cgroup.procs files hold
		[[ -d $f ]] && find "$f" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -KILL 2>/dev/null
	done
	second_engine_kill
	pgrep -f -- "$D2/" | grep -vx "$$" | xargs -r kill -KILL 2>/dev/null
	for f in /sys/fs/cgroup/*/"$NS2" /sys/fs/cgroup/"$NS2"; do
		[[ -d $f ]] && find "$f" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	return 0
}

# tls_certs DIR: a CA of its own (ca.pem), an engine's certificate for 127.0.0.1 (server.pem,
# server-key.pem) and the service's (client.pem, client-key.pem: readable by the service's
# group only, as a deployment keeps it). Fails when openssl does.
tls_certs() {
	local t=$1 grp
	mkdir -p "$t"
	_mkcert() { # NAME SUBJECT EXTENSIONS: NAME.pem and NAME-key.pem, signed by ca.pem
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$t/$1-key.pem" \
			-out "$t/$1.csr" -subj "$2" 2>/dev/null &&
			openssl x509 -req -in "$t/$1.csr" -CA "$t/ca.pem" -CAkey "$t/ca-key.pem" -CAcreateserial \
				-days 1 -out "$t/$1.pem" -extfile <(printf '%s\n' "$3") 2>/dev/null
	}
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
		-keyout "$t/ca-key.pem" -out "$t/ca.pem" -subj "/CN=sandboxd test CA $SFX" 2>/dev/null &&
		_mkcert server /CN=127.0.0.1 $'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth' &&
		_mkcert client /CN=sandboxd 'extendedKeyUsage=clientAuth' || return 1
	grp=$(id -gn sandboxd 2>/dev/null || echo root)
	chgrp "$grp" "$t/client-key.pem" && chmod 0640 "$t/client-key.pem" && chmod 0755 "$t"
}

# scratch space; run.sh points IT_TMP into its var dir, so nothing outlives a run
_T=$(mktemp -d "${IT_TMP:-${TMPDIR:-/tmp}}/sandboxd-it-$TEST_NAME.XXXXXX")
: "${IT_RESULTS:=$_T/results}"
: >>"$IT_RESULTS"
AT_EXIT=()
_lib_exit() {
	local f
	for f in "${AT_EXIT[@]+"${AT_EXIT[@]}"}"; do eval "$f" || true; done
	rm -rf "$_T"
}
trap _lib_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A suffix that makes this file's logins and repository names unique per run.
SFX=$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')

STATUS='' BODY='' HEADERS='' REQ_ID='' LAST_REQ='(no request yet)'
RFC3339_UTC='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z$'

_mask() { # show a token's first characters only
	local t=$1
	if ((${#t} > 10)); then printf '%s…' "${t:0:10}"; else printf '%s' "$t"; fi
}

# call_bg NAME METHOD PATH [BODY] [MAXTIME] [CONTENT-TYPE] [ACCEPT]: a call with curl in
# the background, as $BG_TOKEN (default $OT, else the admin's); its status, body, headers and
# curl's stderr land in $_T/NAME.{status,body,headers,err}, its pid in BG_PID, and it is
# killed at the suite's end. BODY "@file" sends a file. /mcp calls say MCP_VERSION
# (2025-06-18) and accept JSON or SSE; others accept ACCEPT (application/json). Read it
# back with bg_status NAME once the pid has ended.
call_bg() {
	local name=$1 method=$2 path=$3 body=${4:-} max=${5:-120} ctype=${6:-application/json}
	local accept=${7:-application/json} tok=${BG_TOKEN:-${OT:-$SANDBOXD_TOKEN}}
	local -a mcp=()
	if [[ $path == /mcp ]]; then
		mcp=(-H "MCP-Protocol-Version: ${MCP_VERSION:-2025-06-18}")
		accept=${7:-application/json, text/event-stream}
	fi
	curl -sS -o "$_T/$name.body" -D "$_T/$name.headers" -w '%{http_code}' --max-time "$max" \
		-X "$method" -H "Authorization: Bearer $tok" -H "Content-Type: $ctype" -H 'Expect:' \
		-H "Accept: $accept" "${mcp[@]+"${mcp[@]}"}" ${body:+--data-binary "$body"} \
		"$SANDBOXD_URL$path" >"$_T/$name.status" 2>"$_T/$name.err" &
	BG_PID=$!
	AT_EXIT+=("kill $BG_PID 2>/dev/null")
}

api() {
	local method=$1 path=$2 body=${3-} token=${4-$SANDBOXD_TOKEN}
	local -a args=(-sS -X "$method" -o "$_T/body" -D "$_T/headers"
		-w '%{http_code}' --max-time "${API_TIMEOUT:-30}" -H 'Expect:')
	local auth_desc
	case $token in
	-) auth_desc='no auth' ;;
	raw:*)
		args+=(-H "Authorization: ${token#raw:}")
		auth_desc="Authorization: $(_mask "${token#raw:}")"
		;;
	*)
		args+=(-H "Authorization: Bearer $token")
		auth_desc="Bearer $(_mask "$token")"
		;;
	esac
	local h
	for h in "${API_HEADERS[@]+"${API_HEADERS[@]}"}"; do args+=(-H "$h"); done
	local body_desc=''
	if [[ -n $body ]]; then
		args+=(-H 'Content-Type: application/json' --data-binary "$body")
		if [[ $body == @* ]]; then
			body_desc=" [body: file ${body#@}, $(stat -c %s "${body#@}") bytes]"
		else
			body_desc=" $body"
			((${#body_desc} > 300)) && body_desc="${body_desc:0:300}…"
		fi
	fi
	LAST_REQ="$method $path ($auth_desc)$body_desc"
	: >"$_T/body"
	: >"$_T/headers"
	STATUS=$(curl "${args[@]}" "$SANDBOXD_URL$path" 2>"$_T/curl.err") || STATUS=000
	BODY=$(cat "$_T/body")
	HEADERS=$(tr -d '\r' <"$_T/headers")
	REQ_ID=$(header X-Request-Id || true)
	it_tokens "$BODY"
	if [[ $method == POST && $path == */diffinery/sandboxes && $STATUS == 201 ]]; then
		local sid
		sid=$(jq -r '.id // empty' <<<"$BODY" 2>/dev/null)
		[[ -n $sid ]] && _it_sandbox_token "$sid"
	fi
	return 0
}

# header NAME: the value of the last response's header NAME (case-insensitive).
header() {
	local want=${1,,} line v
	while IFS= read -r line; do
		if [[ ${line,,} == "$want:"* ]]; then
			v=${line#*:}
			v="${v#"${v%%[![:space:]]*}"}"
			v="${v%"${v##*[![:space:]]}"}"
			printf '%s\n' "$v"
			return 0
		fi
	done <<<"$HEADERS"
	return 1
}

_record() { printf '%s\t%s\t%s\n' "$1" "$TEST_NAME" "$2" >>"$IT_RESULTS"; }

ok() {
	printf 'ok   %s: %s\n' "$TEST_NAME" "$1"
	_record ok "$1"
}

skip() {
	printf 'skip %s: %s\n' "$TEST_NAME" "$1"
	_record skip "$1"
}

fail() {
	local name=$1 detail=${2-}
	printf 'FAIL %s: %s\n' "$TEST_NAME" "$name"
	[[ -n $detail ]] && printf '       %s\n' "$detail"
	printf '       request: %s\n' "$LAST_REQ"
	printf '       status:  %s\n' "$STATUS"
	local b=$BODY
	((${#b} > 600)) && b="${b:0:600}…"
	printf '       body:    %s\n' "$b"
	[[ -s $_T/curl.err ]] && printf '       curl:    %s\n' "$(head -c 300 "$_T/curl.err")"
	_record fail "$name"
	return 0
}

check_eq() { # NAME EXPECTED ACTUAL
	if [[ "$2" == "$3" ]]; then ok "$1"; else fail "$1" "expected '$2', got '$3'"; fi
}

# check_cond NAME 'shell condition': ok when the condition (eval'd) holds
check_cond() {
	if eval "$2"; then ok "$1"; else fail "$1" "condition failed: $2"; fi
}

check() { # NAME CMD…
	local name=$1
	shift
	if "$@"; then ok "$name"; else fail "$name" "command failed: $*"; fi
}

expect_status() {
	local want=$1 name=${2:-"$LAST_REQ -> $1"}
	if [[ $STATUS == "$want" ]]; then ok "$name"; else fail "$name" "expected status $want, got $STATUS"; fi
}

_json() { jq -r "$1" <<<"$BODY" 2>/dev/null; }

expect_json() {
	local filter=$1 want=$2 name=${3:-"$1 == $2"} got
	if ! got=$(_json "$filter"); then
		fail "$name" "body is not JSON (wanted $filter == $want)"
		return 0
	fi
	if [[ $got == "$want" ]]; then ok "$name"; else fail "$name" "$filter: expected '$want', got '$got'"; fi
}

expect_json_match() { # FILTER REGEX [NAME]
	local filter=$1 re=$2 name=${3:-"$1 ~ /$2/"} got
	if ! got=$(_json "$filter"); then
		fail "$name" "body is not JSON"
		return 0
	fi
	if [[ $got =~ $re ]]; then ok "$name"; else fail "$name" "$filter: '$got' does not match /$re/"; fi
}

expect_message() {
	expect_json .message "$1" "${2:-"$LAST_REQ -> message '$1'"}"
}

expect_keys() { # FILTER 'a,b,c' [NAME]
	local filter=$1 want name=${3:-"keys of $1 are $2"} got
	want=$(tr ',' '\n' <<<"$2" | sort | paste -sd, -)
	if ! got=$(jq -r "$filter | keys | sort | join(\",\")" <<<"$BODY" 2>/dev/null); then
		fail "$name" "body is not a JSON object at $filter"
		return 0
	fi
	if [[ $got == "$want" ]]; then ok "$name"; else fail "$name" "expected keys [$want], got [$got]"; fi
}

# The body is exactly this JSON document (key order and spacing aside).
expect_body() {
	local want name=${2:-"$LAST_REQ -> body $1"} got
	want=$(jq -S -c . <<<"$1")
	if ! got=$(jq -S -c . <<<"$BODY" 2>/dev/null) || [[ -z $BODY ]]; then
		fail "$name" "body is not JSON"
		return 0
	fi
	if [[ $got == "$want" ]]; then ok "$name"; else fail "$name" "expected body $want"; fi
}

# expect_schema OPERATION_ID STATUS [NAME]: the last answer's status is STATUS and its body
# valid against the schema docs/openapi.yaml gives that operation's STATUS answer (Ajv,
# JSON Schema 2020-12, formats checked: tests/openapi/validate.mjs), so the document and
# the live answers cannot part. The pinned Ajv comes from tests/openapi/ensure.sh (npm ci
# once); the document is converted once a suite with /usr/bin/python3's yaml.
expect_schema() {
	local op=$1 st=$2 name=${3:-"$1 $2: the answer matches docs/openapi.yaml"} err
	if [[ $STATUS != "$st" ]]; then
		fail "$name" "expected status $st, got $STATUS"
		return 0
	fi
	if [[ ! -s $_T/openapi.json ]]; then
		if ! err=$(bash "$ROOT/tests/openapi/ensure.sh" 2>&1 &&
			/usr/bin/python3 -c 'import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), open(sys.argv[2], "w"))' \
				"$ROOT/docs/openapi.yaml" "$_T/openapi.json" 2>&1); then
			rm -f "$_T/openapi.json"
			fail "$name" "the validator could not be set up: $err"
			return 0
		fi
	fi
	if err=$(node "$ROOT/tests/openapi/validate.mjs" "$_T/openapi.json" "$op" "$st" <<<"$BODY" 2>&1); then
		ok "$name"
	else
		fail "$name" "$err"
	fi
}

expect_empty_body() {
	local name=${1:-"$LAST_REQ -> empty body"}
	if [[ -z $BODY ]]; then ok "$name"; else fail "$name" "expected an empty body"; fi
}

expect_header() {
	local h=$1 want=$2 name=${3:-"header $1: $2"} got
	if ! got=$(header "$h"); then
		fail "$name" "no $h header; headers were: $(tr '\n' '|' <<<"$HEADERS")"
		return 0
	fi
	if [[ $got == "$want" ]]; then ok "$name"; else fail "$name" "$h: expected '$want', got '$got'"; fi
}

expect_header_match() {
	local h=$1 re=$2 name=${3:-"header $1 ~ /$2/"} got
	if ! got=$(header "$h"); then
		fail "$name" "no $h header; headers were: $(tr '\n' '|' <<<"$HEADERS")"
		return 0
	fi
	if [[ $got =~ $re ]]; then ok "$name"; else fail "$name" "$h: '$got' does not match /$re/"; fi
}

# The standard error body: exact status, exact message, nothing else in it.
expect_error() { # STATUS MESSAGE [NAME]
	local name=${3:-"$LAST_REQ -> $1 '$2'"}
	if [[ $STATUS != "$1" ]]; then
		fail "$name" "expected status $1 with message '$2', got $STATUS"
		return 0
	fi
	local got
	if ! got=$(jq -c . <<<"$BODY" 2>/dev/null) || [[ -z $BODY ]]; then
		fail "$name" "body is not JSON"
		return 0
	fi
	if [[ $(jq -r '.message' <<<"$BODY") == "$2" && $(jq -r 'keys|join(",")' <<<"$BODY") == message ]]; then
		ok "$name"
	else
		fail "$name" "expected body {\"message\":\"$2\"}"
	fi
}

# A 400 whose message names FIELD in quotes ('field' or `field`).
expect_names_field() { # STATUS FIELD [NAME]
	local name=${3:-"$LAST_REQ -> $1 naming '$2'"} msg
	msg=$(_json .message) || msg=''
	if [[ $STATUS == "$1" && ( $msg == *"'$2'"* || $msg == *"\`$2\`"* ) ]]; then
		ok "$name"
	else
		fail "$name" "expected $1 with a message naming '$2'"
	fi
}

sql() {
	psql -X -Atq -v ON_ERROR_STOP=1 -c "$1" 2>"$_T/sql.err"
	local rc=$?
	if ((rc != 0)); then
		printf '       sql error: %s\n' "$(head -c 400 "$_T/sql.err")" >&2
	fi
	return $rc
}

# create_audit SANDBOX FIELD...: those fields of the details of SANDBOX's sandbox.create
# audit row, joined by '|' (a field it lacks is empty): how the create was made, e.g.
# `create_audit "$ID" pooled handed_by` says "true|agent".
create_audit() {
	local id=$1 f cols=()
	shift
	for f; do cols+=("coalesce(details->>'$f', '')"); done
	local IFS=,
	sql "select concat_ws('|', ${cols[*]}) from audit_log where action = 'sandbox.create' and sandbox_id = '$id'"
}

# sql_super 'query': as the cluster's superuser (sees every session in pg_stat_activity);
# falls back to sql when there is none to use.
sql_super() {
	if psql -X -Atq -U "${IT_PG_SUPERUSER:-postgres}" -d "${PGDATABASE:-postgres}" -c 'select 1' >/dev/null 2>&1; then
		psql -X -Atq -v ON_ERROR_STOP=1 -U "${IT_PG_SUPERUSER:-postgres}" -d "${PGDATABASE:-postgres}" -c "$1"
	else
		sql "$1"
	fi
}

# stack_up [VAR=value…]: deploy/local-stack.sh up again with these settings on top of the
# stack's (nginx reloads; sandboxd restarts only when one of its own settings changed).
# Output appended to $_T/up.log.
stack_up() {
	local port=${SANDBOXD_URL##*:}
	env SANDBOXD_HTTP_PORT="${SANDBOXD_HTTP_PORT:-${port%%/*}}" \
		SANDBOXD_PG_PORT="${SANDBOXD_PG_PORT:-$PGPORT}" SANDBOXD_SKIP_DEPS=1 \
		SANDBOXD_SKIP_BUILD=1 SANDBOXD_SKIP_IMAGE=1 "$@" \
		timeout -k 10 300 bash "$LOCAL_STACK" up >>"$_T/up.log" 2>&1 </dev/null
}
# stack_restart NAME [VAR=value…]: stack_up, checked (its log's end shown when it fails).
stack_restart() {
	local name=$1 rc
	shift
	stack_up "$@"
	rc=$?
	check_eq "the stack is up again ($name)" 0 "$rc"
	((rc == 0)) || tail -n 20 "$_T/up.log" | sed 's/^/#   /'
}

ctl() { # sandboxctl with the stack's settings; output in CTL_OUT/CTL_ERR, code in CTL_RC
	"$SANDBOXCTL" "$@" >"$_T/ctl.out" 2>"$_T/ctl.err"
	CTL_RC=$?
	CTL_OUT=$(cat "$_T/ctl.out")
	CTL_ERR=$(cat "$_T/ctl.err")
	return $CTL_RC
}

mk_account() { # LOGIN [flags…]
	if ! ctl account create "$@"; then
		LAST_REQ="sandboxctl account create $*"
		STATUS="exit $CTL_RC"
		BODY="$CTL_OUT $CTL_ERR"
		fail "sandboxctl account create $1" "exit $CTL_RC"
		return 1
	fi
}

# mk_token LOGIN [SCOPE] [flags…]: prints the token; its id is kept for last_token_id.
mk_token() {
	local login=$1 scope=${2:-write}
	shift
	(($# > 0)) && shift
	if ! ctl token create "$login" --scope "$scope" "$@"; then
		LAST_REQ="sandboxctl token create $login --scope $scope $*"
		STATUS="exit $CTL_RC"
		BODY="$CTL_OUT $CTL_ERR"
		fail "sandboxctl token create $login" "exit $CTL_RC" >&2
		return 1
	fi
	# stderr names the id, e.g. "token id 17 for bob, …"; take the number after "id"
	sed -n 's/.*\<id[^0-9]*\([0-9][0-9]*\).*/\1/p' <<<"$CTL_ERR" | head -n 1 >"$_T/last_token_id"
	printf '%s\n' "$CTL_OUT"
}

last_token_id() { cat "$_T/last_token_id" 2>/dev/null; }

# A user account with a write token: sets TOKEN_<var> … use as: user_with_token LOGIN; tok=$LAST_TOKEN
mk_user() { # LOGIN [account flags…] -> LAST_TOKEN (write scope)
	local login=$1
	shift
	mk_account "$login" "$@" || return 1
	LAST_TOKEN=$(mk_token "$login" write) || return 1
	LAST_TOKEN_ID=$(last_token_id)
}

# Polls every 0.1 s for the first 2 s, every 0.25 s up to 10 s, then every 0.5 s: a poll
# forks a docker, psql or curl (50-120 ms of CPU each), and run.sh runs suites side by
# side on 2 cores. SECONDS counts the pauses, not the polls' own time (as it always has).
wait_until() { # SECONDS CMD…: true once CMD succeeds, false after SECONDS
	local ticks=$((${1%.*} * 20)) waited=0 step pause # in 50 ms ticks
	shift
	while ((waited < ticks)); do
		"$@" && return 0
		if ((waited < 40)); then step=2; elif ((waited < 200)); then step=5; else step=10; fi
		((step > ticks - waited)) && step=$((ticks - waited))
		printf -v pause '%d.%02d' $((step / 20)) $(((step % 20) * 5))
		sleep "$pause"
		waited=$((waited + step))
	done
	"$@"
}

# warm_ready_at_least N: this stack's engine has at least N ready warm containers (the pool).
warm_ready_at_least() {
	(($(sql "select count(*) from warm_containers where state = 'ready' and instance = '$SANDBOXD_INSTANCE'") >= $1))
}

# ---- the stack's processes, by its master's pid $M (set by the suite, again after a restart) ---
# The API workers (not the reaper, the holder or git's).
workers() { pgrep -x -P "$M" sandboxd 2>/dev/null | sort -n; }
# git's workers, on one line.
gitworkers() { pgrep -x -P "$M" sandboxd-git 2>/dev/null | tr '\n' ' '; }
# The API workers that hold one of nginx's FastCGI connections (a request in flight).
busy_workers() {
	ss -xpH state established 2>/dev/null | grep -F " $SANDBOXD_VAR/run/sandboxd/fcgi.sock " |
		grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u | grep -xF "$(workers)"
}
busy_count() { busy_workers | wc -l; }
# holder_metric KIND: sandboxd_holder_calls{kind=KIND} on /metrics (the admin's token).
holder_metric() {
	curl -sS --max-time 10 -H "Authorization: Bearer $SANDBOXD_TOKEN" "$SANDBOXD_URL/metrics" |
		awk -v k="sandboxd_holder_calls{kind=\"$1\"}" '$1 == k { print $2 }'
}
# others_answer TOKEN: 0 when GET /api/v3/user and /healthz each answer 200 within 5 s, 5
# times: what a long call must not take from the others.
others_answer() {
	local slow=0 code hz
	for _ in 1 2 3 4 5; do
		code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 -H "Authorization: Bearer $1" \
			"$SANDBOXD_URL/api/v3/user") || slow=1
		[[ $code == 200 ]] || slow=1
		hz=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 "$SANDBOXD_URL/healthz") || slow=1
		[[ $hz == 200 ]] || slow=1
	done
	return $slow
}

# mk_repo LOGIN NAME: a user (token in OT), a private repository LOGIN/NAME (R) with one
# commit on main (a file x holding "x"; the worktree in W), and its sandboxes route (SB).
mk_repo() {
	W=$_T/repo-$2
	mk_user "$1" || exit 1
	OT=$LAST_TOKEN
	R="$1/$2"
	api POST /api/v3/user/repos "{\"name\":\"$2\",\"visibility\":\"private\"}" "$OT"
	expect_status 201 "repository $R created"
	git init -q -b main "$W"
	echo x >"$W/x" && git -C "$W" add x &&
		git -C "$W" -c user.name=t -c user.email=t@t commit -qm x
	git -C "$W" push -q "http://t:$OT@${SANDBOXD_URL#http://}/$R.git" main
	SB=/api/v3/repos/$R/diffinery/sandboxes
}

# lfs_repo NAME: the repository $O/NAME made (mk_repo: R, OT) and git-lfs set up for it:
# HOSTPORT, URL (its URL with the owner's token), G (git with an author), a HOME of its own
# with git-lfs installed; lfs_sha FILE, and object_file OID: where the service keeps it.
lfs_repo() {
	mk_repo "$O" "$1"
	LFS_REPO=$1
	HOSTPORT=${SANDBOXD_URL#http://}
	URL="http://t:$OT@$HOSTPORT/$R.git"
	G=(git -c user.name=t -c user.email=t@t -c lfs.locksverify=false)
	export GIT_TERMINAL_PROMPT=0 GIT_LFS_SKIP_PUSH=0 HOME=$_T/home
	mkdir -p "$HOME"
	git lfs install --skip-repo >/dev/null
}
lfs_sha() { sha256sum "$1" | cut -d' ' -f1; }
object_file() {
	printf '%s/%s/%s.git/lfs/objects/%s/%s/%s' "$REPOS_DIR" "$O" "$LFS_REPO" "${1:0:2}" "${1:2:2}" "$1"
}

# mk_sandbox LOGIN NAME: mk_repo, and a sandbox on it (ID).
mk_sandbox() {
	mk_repo "$1" "$2"
	api POST "$SB" '{}' "$OT"
	expect_status 201 'sandbox created'
	ID=$(_json .id)
}

# close_open_sandboxes: closes every sandbox of $SB still starting or ready, as $OT: a
# suite's AT_EXIT entry (a failure midway leaves none running) and its last step.
close_open_sandboxes() {
	local id
	api GET "$SB" '' "$OT" >/dev/null 2>&1
	for id in $(jq -r '.[] | select(.state == "ready" or .state == "starting") | .id' <<<"$BODY" 2>/dev/null); do
		api POST "$SB/$id/close" '' "$OT" >/dev/null 2>&1
	done
}

# mk_writer LOGIN: another user with the write role on $R (made by mk_repo; its owner's
# token in OT), its token in OT2; disabled at the end.
mk_writer() {
	mk_user "$1" || exit 1
	OT2=$LAST_TOKEN
	AT_EXIT+=("ctl token revoke $LAST_TOKEN_ID; ctl account disable $1")
	api PUT "/api/v3/repos/$R/collaborators/$1" '{"role":"write"}' "$OT"
	expect_status 204 'a second user with the write role on the repository'
}

# checks_from_lines KIND FILE: one check per line of FILE, as a test runner of another
# language prints them ("ok<TAB>NAME", "skip<TAB>NAME", "fail<TAB>NAME<TAB>WHY"), each named
# "KIND: NAME", so that a failure is named; other lines are ignored. N_LINES: how many.
checks_from_lines() {
	local outcome name why
	N_LINES=0
	while IFS=$'\t' read -r outcome name why; do
		case $outcome in
		ok) ok "$1: $name" ;;
		skip) skip "$1: $name" ;;
		fail) STATUS="$1 test failed" BODY=$why fail "$1: $name" "$why" ;;
		*) continue ;;
		esac
		N_LINES=$((N_LINES + 1))
	done <"$2"
}

epoch() { date -u -d "$1" +%s 2>/dev/null; }

basic() { # the Authorization value for HTTP Basic with the token as password
	printf 'raw:Basic %s' "$(printf '%s:%s' "${2:-x}" "$1" | base64 -w0)"
}

# egress_lab PORT…: what the egress suites reach: a network namespace of the test's own
# (NS; the host's side HOST_IP on the veth VH) with a web server on each PORT at NS_IP, a
# stand-in for an address of the Internet (a /30 of TEST-NET-2, 198.51.100.0/24, which this
# machine routes nowhere else); and behind it, on port 80 each, the stand-ins of what no
# sandbox may reach: META (169.254.169.254, the clouds' metadata service) and PRIV (a 10.x
# host of the private network), with a DNS server (dns_stub.py) on PRIV:53 that answers
# every name with NS_IP. The host routes META and PRIV to the namespace (/32 routes, checked
# with `ip route get` before any packet goes), so nothing ever leaves this machine. And one
# server on the host at the default bridge's address (GW:HOST_PORT, pid HOSTSRV). Each
# serves "egress-ok-$SFX" (answers URL checks it). egress_lab_down removes it all: put it
# in AT_EXIT. run.sh removes namespaces named after its var dir that a killed test left.
# The lab's /32 route to 169.254.169.254 is host-wide: one lab at a time on this machine,
# whatever run or stack it belongs to (an flock held by this suite's shell until it ends,
# kept from the lab's servers; run.sh also never runs two egress suites at once).
EGRESS_LAB_LOCK=${IT_EGRESS_LAB_LOCK:-/run/lock/sandboxd-it-egress-lab}
egress_lab() {
	local vsum x i port a
	exec {EGRESS_LAB_FD}>>"$EGRESS_LAB_LOCK"
	if ! flock -w 900 "$EGRESS_LAB_FD"; then
		fail 'the egress lab is free (another suite held it for 15 minutes)' "flock $EGRESS_LAB_LOCK"
		finish
	fi
	vsum=$(printf '%s' "$SANDBOXD_VAR" | cksum | cut -d' ' -f1)
	NS=sbxit-$vsum-$SFX
	VH=sbxh$SFX      # host side, 12 characters (interface names hold 15)
	VN=sbxn$SFX
	PY=$(command -v /usr/bin/python3 python3 | head -n 1)
	for ((i = 0; i < 50; i++)); do
		x=$((SRANDOM % 64 * 4))
		ip -4 addr show | grep -q "inet 198\.51\.100\.$((x + 1))/" && { x=; continue; }
		ip -4 route show | grep -q "^198\.51\.100\.$x/" && { x=; continue; }
		a=$((SRANDOM % 250 + 2))
		ip -4 route show | grep -q "^10\.213\.$((x / 4))\.$a " && { x=; continue; }
		break
	done
	[ -n "$x" ] || { fail 'a free /30 in 198.51.100.0/24'; finish; }
	HOST_IP=198.51.100.$((x + 1))
	NS_IP=198.51.100.$((x + 2))
	META=169.254.169.254
	PRIV=10.213.$((x / 4)).$a
	ip netns add "$NS" &&
		ip link add "$VH" type veth peer name "$VN" &&
		ip link set "$VN" netns "$NS" &&
		ip addr add "$HOST_IP/30" dev "$VH" && ip link set "$VH" up &&
		ip -n "$NS" addr add "$NS_IP/30" dev "$VN" && ip -n "$NS" link set "$VN" up &&
		ip -n "$NS" link set lo up &&
		ip -n "$NS" addr add "$META/32" dev lo && ip -n "$NS" addr add "$PRIV/32" dev lo &&
		ip route add "$META/32" via "$NS_IP" dev "$VH" && ip route add "$PRIV/32" via "$NS_IP" dev "$VH"
	check "namespace $NS with $NS_IP, $META and $PRIV; host side $HOST_IP" [ $? -eq 0 ]
	for a in "$NS_IP" "$META" "$PRIV"; do
		if ! ip route get "$a" | grep -q " dev $VH "; then
			fail "the host routes $a to the test's namespace (no packet may leave the machine)" \
				"$(ip route get "$a" 2>&1)"
			egress_lab_down
			finish
		fi
	done
	mkdir -p "$_T/www" && echo "egress-ok-$SFX" >"$_T/www/index.html"
	chmod 0755 "$_T" "$_T/www"
	for a in "$@" "$META:80" "$PRIV:80"; do
		[[ $a == *:* ]] || a=$NS_IP:$a
		ip netns exec "$NS" "$PY" -m http.server "${a##*:}" --bind "${a%:*}" --directory "$_T/www" \
			>"$_T/srv$a.log" 2>&1 </dev/null {EGRESS_LAB_FD}>&- &
		disown   # egress_lab_down kills them; no job notices
	done
	ip netns exec "$NS" "$PY" "$IT_DIR/dns_stub.py" "$PRIV" "$NS_IP" >"$_T/dns.log" 2>&1 </dev/null {EGRESS_LAB_FD}>&- &
	disown
	for port in "$@"; do
		check "the listener on port $port answers the host" wait_until 15 answers "http://$NS_IP:$port/"
	done
	check "the metadata stand-in $META answers the host" wait_until 15 answers "http://$META/"
	check "the private stand-in $PRIV answers the host" wait_until 15 answers "http://$PRIV/"
	# The sandboxes' sandboxd.internal (Docker's host-gateway: the default bridge's address),
	# on a port that is not git's. Read from the bridge interface: a freshly started dockerd's
	# `network inspect bridge` has only a Subnet in its IPAM config, no Gateway.
	local brif
	brif=$(docker network inspect -f '{{index .Options "com.docker.network.bridge.name"}}' bridge 2>/dev/null)
	GW=$(ip -4 -o addr show dev "${brif:-docker0}" 2>/dev/null | awk '{ sub(/\/.*/, "", $4); print $4; exit }')
	check "the default bridge ${brif:-docker0} has an address ($GW)" [ -n "$GW" ]
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		HOST_PORT=$((20000 + SRANDOM % 40000))
		[ -z "$(ss -Hltn "sport = :$HOST_PORT")" ] && break
	done
	"$PY" -m http.server "$HOST_PORT" --bind "$GW" --directory "$_T/www" >"$_T/hostsrv.log" 2>&1 </dev/null {EGRESS_LAB_FD}>&- &
	HOSTSRV=$!
	disown
	check "a host listener on $GW:$HOST_PORT" wait_until 15 answers "http://$GW:$HOST_PORT/"
}
answers() { [ "$(curl -s -m 2 "$1")" = "egress-ok-$SFX" ]; }
egress_lab_down() {
	local p
	for p in $(ip netns pids "$NS" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
	[ -n "${HOSTSRV:-}" ] && kill -KILL "$HOSTSRV" 2>/dev/null
	ip netns del "$NS" 2>/dev/null   # takes the veth pair with it
	ip link del "$VH" 2>/dev/null
	true
}

finish() {
	local p f
	local s
	p=$(grep -c "^ok	$TEST_NAME	" "$IT_RESULTS" || true)
	f=$(grep -c "^fail	$TEST_NAME	" "$IT_RESULTS" || true)
	s=$(grep -c "^skip	$TEST_NAME	" "$IT_RESULTS" || true)
	if ((s > 0)); then
		printf '# %s: %s passed, %s failed, %s skipped\n' "$TEST_NAME" "$p" "$f" "$s"
	else
		printf '# %s: %s passed, %s failed\n' "$TEST_NAME" "$p" "$f"
	fi
	((f == 0 && p + s > 0))
	exit $?
}
