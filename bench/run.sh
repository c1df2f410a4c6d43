#!/usr/bin/env bash
# make bench: figures and ratios against raw baselines, on loopback, bounded in time.
# Starts a throwaway stack (like the integration tests), measures, removes everything.
#
#   1. GET /api/v3/user through nginx + sandboxd, 16 clients, beside nginx answering a
#      static `return 200` (a second nginx with the same worker count) in the same run.
#   2. Full and shallow clones of a repository of BENCH_REPO_MB (default 60) MB through
#      sandboxd, beside plain `git http-backend` behind nginx + fcgiwrap, medians of
#      BENCH_CLONES (default 5) runs each.
#   3. A push of a BENCH_PUSH_MB (50) MB history of BENCH_PUSH_BLOBS (5,000) text blobs into
#      an empty repository through sandboxd (its hook: ref checks, push protection, audit),
#      beside plain `git http-backend` with receive.fsckObjects=true (sandboxd runs git with
#      it too), alternating, medians of BENCH_PUSHES (default 5) runs each; and beside the
#      same http-backend behind an nginx that buffers the body whole first (a second line:
#      what sandboxd's git location cost pushes before their bodies streamed).
#
#   4. (after the sandboxes) the sandbox operations beside the raw Docker Engine API.
#   5. GET /metrics, a scrape of every process's slot (BENCH_SCRAPES, default 200, one after
#      the other through nginx, curl's own timer): median and p99 beside the goal of 5 ms,
#      and the handler's own mean from the route's histogram.
#   6. create -> first exec result on a history of BENCH_HISTORY (20,000) commits: a full,
#      a shallow (depth 1) and a blobless clone.
#   7. bench/held.sh: BENCH_HELD (200) running execs at once on 4 workers, attached then
#      streamed, and GET /api/v3/user's latency meanwhile beside its latency with nothing
#      running; the holder's memory per parked exec.
#   8. bench/files.sh: a 100 MiB raw file PUT and GET through nginx beside the engine's
#      archive API on the same bytes; the worker's private memory meanwhile.
#   9. bench/gvisor.sh: gVisor beside runc on an engine of its own with runsc as a runtime:
#      create, create to the first exec (a clone), exec, git clone and npm ci inside.
#  10. bench/abuse.sh: one account floods its execs (detached, attached, its agent stopped)
#      while another works: the other's GET /api/v3/user beside it quiet, goal p99 <= 50 ms.
#  11. bench/sdk_js.sh, bench/sdk_python.sh: each SDK's exec beside a bare call of the same
#      route, in one process: the SDK's overhead per exec, goal <= 1 ms.
#
# Settings: BENCH_SECONDS (default 10), BENCH_CLIENTS (16), BENCH_WORKERS (16).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
SECONDS_EACH=${BENCH_SECONDS:-10}
CLIENTS=${BENCH_CLIENTS:-16}
VAR=$(mktemp -d /tmp/sandboxd-bench.XXXXXXXX)
chmod 755 "$VAR"
STATIC_PID=""

cleanup() {
	[ -n "$STATIC_PID" ] && kill "$STATIC_PID" 2>/dev/null || true
	pkill -f "$VAR/plain/fcgiwrap.sock" 2>/dev/null || true
	docker rm -f -v $(docker ps -aq --filter "label=sandboxd.bench=$VAR") >/dev/null 2>&1 || true
	[ -f "$VAR/static/nginx.pid" ] && kill "$(cat "$VAR/static/nginx.pid")" 2>/dev/null || true
	SANDBOXD_VAR=$VAR bash "$ROOT/deploy/local-stack.sh" down >/dev/null 2>&1 || true
	[ "${BENCH_KEEP:-0}" = 1 ] && echo "bench: kept $VAR" >&2 || rm -rf -- "$VAR"
}
trap cleanup EXIT INT TERM

# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

# Every run's figure, for the plot (bench/plot.sh): operation <TAB> raw|sandboxd <TAB> ms.
PLOT_DIR=${BENCH_PLOT_DIR:-$ROOT/build/bench}
mkdir -p "$PLOT_DIR"
SAMPLES=$PLOT_DIR/samples.tsv
: >"$SAMPLES"
sample() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$SAMPLES"; }

PARTS=" ${BENCH_PARTS:-user clones push sandboxes metrics history held files gvisor abuse sdk} "
part() { [[ "$PARTS" == *" $1 "* ]]; }
command -v wrk >/dev/null || { echo "bench: wrk is missing (apt-get install wrk)" >&2; exit 1; }
export SANDBOXD_VAR=$VAR SANDBOXD_HTTP_PORT=$(free_port) SANDBOXD_PG_PORT=$(free_port)
export SANDBOXD_WORKERS=${BENCH_WORKERS:-16} SANDBOXD_SKIP_DEPS=${SANDBOXD_SKIP_DEPS:-1}
# The reaper refills the warm pool: each second, so that each run starts with it full.
export SANDBOXD_REAPER_INTERVAL=${SANDBOXD_REAPER_INTERVAL:-1}
echo "bench: starting a throwaway stack in $VAR" >&2
bash "$ROOT/deploy/local-stack.sh" up >"$VAR/up.log" 2>&1 || { tail -30 "$VAR/up.log"; exit 1; }
. "$VAR/local.env"

# Resident memory of the workers (KiB): the largest and the sum.
worker_rss() {
	ps -o rss=,comm= --ppid "$(cat "$SANDBOXD_PID_FILE")" |
		awk '$2 == "sandboxd" { if ($1 > m) m = $1; s += $1; n++ } END { printf "max %d KiB, total %d KiB over %d workers", m, s, n }'
}
# Private memory of the API workers (RssAnon, KiB: what a worker holds of its own; shared
# library pages are not in it): the largest and each.
worker_rss_anon() {
	local p v list="" max=0
	for p in $(pgrep -x -P "$(cat "$SANDBOXD_PID_FILE")" sandboxd); do
		v=$(awk '$1 == "RssAnon:" { print $2 }' "/proc/$p/status" 2>/dev/null) || continue
		list+="$v "
		((v > max)) && max=$v
	done
	echo "max $max KiB (each: ${list% })"
}
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
SRC=$VAR/src
git init -q -b main "$SRC"

if part user || part clones || part push; then
# The baseline: the same nginx binary, same worker count, answering from memory.
STATIC_PORT=$(free_port)
mkdir -p "$VAR/static"
cat >"$VAR/static/nginx.conf" <<CONF
user www-data;
worker_processes 2;
pid $VAR/static/nginx.pid;
error_log $VAR/static/error.log;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $VAR/static; fastcgi_temp_path $VAR/static;
	proxy_temp_path $VAR/static; uwsgi_temp_path $VAR/static; scgi_temp_path $VAR/static;
	server {
		listen 127.0.0.1:$STATIC_PORT;
		location / { default_type application/json; return 200 '{"login":"admin"}\n'; }
	}
}
CONF
mkdir -p "$VAR/plain"
chown www-data "$VAR/plain"
command -v fcgiwrap >/dev/null || { echo "bench: fcgiwrap is missing (apt-get install fcgiwrap)" >&2; exit 1; }
# fcgiwrap's children run as www-data, like nginx's workers: the socket and repos must allow it.
runuser -u www-data -- fcgiwrap -c 2 -s "unix:$VAR/plain/fcgiwrap.sock" 2>>"$VAR/fcgiwrap.log" &
echo $! >"$VAR/fcgiwrap.pid"
for _ in $(seq 50); do [ -S "$VAR/plain/fcgiwrap.sock" ] && break; sleep 0.1; done
sed -i "s|^}$||" "$VAR/static/nginx.conf"
# plain_server PORT BUFFERING: http-backend behind fcgiwrap; "on" buffers a request body
# whole before passing it on, as sandboxd's git location must (slow clients, see Hardening).
plain_server() {
	cat <<CONF
	server {
		listen 127.0.0.1:$1;
		location / {
			client_max_body_size 0;$([ "$2" = on ] && printf '\n\t\t\tclient_body_buffer_size 1m;')
			fastcgi_request_buffering $2;
			fastcgi_buffering off;
			fastcgi_param SCRIPT_FILENAME /usr/lib/git-core/git-http-backend;
			fastcgi_param GIT_PROJECT_ROOT $VAR/repos;
			fastcgi_param GIT_HTTP_EXPORT_ALL 1;
			fastcgi_param GIT_CONFIG_COUNT 1;
			fastcgi_param GIT_CONFIG_KEY_0 safe.directory;
			fastcgi_param GIT_CONFIG_VALUE_0 *;
			fastcgi_param PATH_INFO \$uri;
			fastcgi_param QUERY_STRING \$query_string;
			fastcgi_param REQUEST_METHOD \$request_method;
			fastcgi_param CONTENT_TYPE \$content_type;
			fastcgi_param CONTENT_LENGTH \$content_length;
			fastcgi_param HTTP_GIT_PROTOCOL \$http_git_protocol;
			fastcgi_pass unix:$VAR/plain/fcgiwrap.sock;
		}
	}
CONF
}
{ plain_server $((STATIC_PORT + 1)) off; plain_server $((STATIC_PORT + 2)) on; echo "}"; } \
	>>"$VAR/static/nginx.conf"
nginx -p "$VAR/static/" -c "$VAR/static/nginx.conf"

# wrk prints "Requests/sec: N" and, with --latency, "50% Xms".
measure() { # name url [header]
	local out rps p50 p99
	out=$(wrk -t2 -c"$CLIENTS" -d"${SECONDS_EACH}s" --latency ${3:+-H "$3"} "$2")
	if grep -q 'Non-2xx' <<<"$out"; then
		echo "bench: $1 had non-2xx answers:" >&2
		echo "$out" >&2
		exit 1
	fi
	rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
	p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
	p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
	printf '%s %s %s %s\n' "$1" "$rps" "$p50" "$p99"
}
fi

# --- 1. GET /api/v3/user ----------------------------------------------------------
if part user; then
RSS_BEFORE=$(worker_rss)
# Warm up the workers' connections, then measure.
wrk -t1 -c"$CLIENTS" -d2s -H "Authorization: Bearer $SANDBOXD_TOKEN" "$SANDBOXD_URL/api/v3/user" >/dev/null
base=$(measure "nginx return 200" "http://127.0.0.1:$STATIC_PORT/api/v3/user")
user=$(measure "GET /api/v3/user" "$SANDBOXD_URL/api/v3/user" "Authorization: Bearer $SANDBOXD_TOKEN")

to_ms() { # wrk latency (e.g. 1.23ms, 850.00us, 1.02s) to ms
	awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /[0-9]s$/) n *= 1000; printf "%.3f", n }'
}
echo
echo "GET /api/v3/user through nginx + sandboxd ($SANDBOXD_WORKERS workers), $CLIENTS clients, ${SECONDS_EACH}s each, $(nproc) cores"
printf '%-20s %12s %10s %10s\n' "what" "req/s" "p50 ms" "p99 ms"
for row in "$base" "$user"; do
	read -r a b rps p50 p99 <<<"$row"
	name="$a $b"
	[ "$a" = nginx ] && { read -r a b c rps p50 p99 <<<"$row"; name="$a $b $c"; }
	printf '%-20s %12.0f %10s %10s\n' "$name" "$rps" "$(to_ms "$p50")" "$(to_ms "$p99")"
done
read -r _ _ _ brps bp50 _ <<<"$base"
read -r _ _ urps up50 _ <<<"$user"
awk -v b="$brps" -v u="$urps" -v bp="$(to_ms "$bp50")" -v up="$(to_ms "$up50")" \
	'BEGIN { printf "ratio: throughput %.3f of nginx static, median latency %.2fx\n", u / b, up / bp }'
echo "worker resident memory: before $RSS_BEFORE; after $(worker_rss)"
rows=$(psql "$SANDBOXD_DATABASE_URL" -Atc "select count(*) from audit_log where action = 'user.get'")
echo "audit rows written for user.get: $rows (one per request)"
fi

# --- 2. clones ----------------------------------------------------------------------
if part clones; then
MB=${BENCH_REPO_MB:-60}
RUNS=${BENCH_CLONES:-5}
echo
echo "bench: making a ${MB} MB repository (incompressible files over 3 commits)" >&2
"$ROOT/build/sandboxctl" repo create admin/big --visibility public >/dev/null
for c in 1 2 3; do
	for i in $(seq $((MB / 3))); do head -c 1048576 /dev/urandom >"$SRC/f$c-$i"; done
	git -C "$SRC" add -A && git -C "$SRC" -c user.name=b -c user.email=b@b commit -qm "c$c"
done
git -C "$SRC" push -q "http://t:$SANDBOXD_TOKEN@${SANDBOXD_URL#http://}/admin/big.git" main
SIZE=$(du -sm "$VAR/repos/admin/big.git" | cut -f1)
# Both servers read the same bare repository; www-data (fcgiwrap) needs to read it.
chmod -R a+rX "$VAR/repos"

clone_ms() { # URL [git clone flags…]: one clone's wall time in ms
	local url=$1 t0 t1
	shift
	rm -rf "$VAR/clone"
	t0=$(date +%s%N)
	git clone -q --bare "$@" "$url" "$VAR/clone"
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}
PLAIN="http://127.0.0.1:$((STATIC_PORT + 1))/admin/big.git"
OURS="$SANDBOXD_URL/admin/big.git"
clone_ms "$PLAIN" >/dev/null; clone_ms "$OURS" >/dev/null   # warm the page cache
echo "git clone of a ${SIZE} MB bare repository (median of $RUNS, ms; alternating runs)"
printf '%-22s %14s %14s %8s\n' "what" "http-backend" "sandboxd" "ratio"
for kind in full shallow; do
	flags=(); [ "$kind" = shallow ] && flags=(--depth 1 --single-branch)
	: >"$VAR/p.txt"; : >"$VAR/o.txt"
	for _ in $(seq "$RUNS"); do
		clone_ms "$PLAIN" "${flags[@]}" >>"$VAR/p.txt"
		clone_ms "$OURS" "${flags[@]}" >>"$VAR/o.txt"
	done
	while read -r v; do sample "$kind clone" raw "$v"; done <"$VAR/p.txt"
	while read -r v; do sample "$kind clone" sandboxd "$v"; done <"$VAR/o.txt"
	p=$(median <"$VAR/p.txt"); o=$(median <"$VAR/o.txt")
	printf '%-22s %14s %14s %8s\n' "$kind clone" "$p" "$o" "$(awk -v a="$o" -v b="$p" 'BEGIN {printf "%.3f", a / b}')"
done
fi

# --- 2b. push -------------------------------------------------------------------------
if part push; then
PMB=${BENCH_PUSH_MB:-50}
PBLOBS=${BENCH_PUSH_BLOBS:-5000}
PRUNS=${BENCH_PUSHES:-5}
PSRC=$VAR/pushsrc
echo
echo "bench: making a ${PMB} MB history of ${PBLOBS} text blobs (50 commits)" >&2
git init -q -b main "$PSRC"
per=$((PBLOBS / 50)) size=$((PMB * 1048576 / PBLOBS))
for c in $(seq 50); do
	mkdir -p "$PSRC/d$c"
	# Text (base64 of random bytes, as minified code or data files look to a scanner):
	# every byte goes through the scanner's prefilter.
	for i in $(seq "$per"); do head -c $((size * 3 / 4)) /dev/urandom | base64 -w 76 >"$PSRC/d$c/f$i.txt"; done
	git -C "$PSRC" add -A && git -C "$PSRC" -c user.name=b -c user.email=b@b commit -qm "c$c"
done
# Packed once, so that each push sends the pack's data as it is (no compression on the
# client's side in the figure: what is measured is the servers).
git -C "$PSRC" repack -adq
PSIZE=$(du -sh "$PSRC/.git/objects/pack" | cut -f1)
mkdir -p "$VAR/repos/plain"
chmod a+x "$VAR/repos"
push_ms() { # URL: one push's wall time in ms
	local t0 t1
	t0=$(date +%s%N)
	git -C "$PSRC" push -q "$1" main
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}
plain_repo() { # NAME: an empty bare repository http-backend accepts pushes into, fsck on
	git init -q --bare "$VAR/repos/plain/$1.git"
	git --git-dir "$VAR/repos/plain/$1.git" config http.receivepack true
	git --git-dir "$VAR/repos/plain/$1.git" config receive.fsckObjects true
	chown -R www-data "$VAR/repos/plain/$1.git"
}
: >"$VAR/pp.txt"; : >"$VAR/po.txt"; : >"$VAR/pb.txt"
# One push of each first, not counted: the page cache and the servers warm. The third is
# http-backend behind an nginx that buffers the body whole first, as sandboxd's git location
# did for pushes until their bodies streamed.
for k in $(seq 0 "$PRUNS"); do
	plain_repo "p$k"
	plain_repo "b$k"
	"$ROOT/build/sandboxctl" repo create "admin/push$k" >/dev/null
	a=$(push_ms "http://127.0.0.1:$((STATIC_PORT + 1))/plain/p$k.git")
	b=$(push_ms "http://t:$SANDBOXD_TOKEN@${SANDBOXD_URL#http://}/admin/push$k.git")
	c=$(push_ms "http://127.0.0.1:$((STATIC_PORT + 2))/plain/b$k.git")
	[ "$k" = 0 ] && continue
	echo "$a" >>"$VAR/pp.txt"; echo "$b" >>"$VAR/po.txt"; echo "$c" >>"$VAR/pb.txt"
done
while read -r v; do sample "push ${PMB} MB" raw "$v"; done <"$VAR/pp.txt"
while read -r v; do sample "push ${PMB} MB" sandboxd "$v"; done <"$VAR/po.txt"
p=$(median <"$VAR/pp.txt"); o=$(median <"$VAR/po.txt"); pb=$(median <"$VAR/pb.txt")
echo "git push of ${PBLOBS} blobs, ${PMB} MB over 50 commits ($PSIZE packed) into an empty repository"
echo "(median of $PRUNS, ms; alternating runs; receive.fsckObjects=true on all)"
printf '%-22s %14s %14s %8s\n' "what" "http-backend" "sandboxd" "ratio"
printf '%-22s %14s %14s %8s\n' "push" "$p" "$o" "$(awk -v a="$o" -v b="$p" 'BEGIN {printf "%.3f", a / b}')"
printf '%-22s %14s %14s %8s\n' "push, body buffered" "$pb" "$o" "$(awk -v a="$o" -v b="$pb" 'BEGIN {printf "%.3f", a / b}')"
echo "runs: http-backend $(paste -sd' ' "$VAR/pp.txt"); sandboxd $(paste -sd' ' "$VAR/po.txt"); buffered $(paste -sd' ' "$VAR/pb.txt")"
echo "(\"body buffered\": nginx reads the whole body before http-backend starts, as sandboxd's"
echo " git location did for pushes until they streamed; the goal is on the first line)"
# How much of push protection's scan was done while the pushes streamed in (README: Push
# protection): the hook read and scanned the rest itself.
psql "$SANDBOXD_DATABASE_URL" -Atc "select format('scanned while streaming: %s of the pushes, %s blobs each at the median',
	count(*) filter (where (details->>'blobs_scanned_streaming')::int >= $PBLOBS) || ' of ' || count(*),
	percentile_disc(0.5) within group (order by (details->>'blobs_scanned_streaming')::int))
	from audit_log where action = 'git.push' and repository like 'admin/push%'
	and (details->>'blobs_scanned_streaming')::int > 0"
fi

# --- 3. sandboxes -------------------------------------------------------------------------
# Each operation through sandboxd (curl through nginx) beside the raw Docker Engine API
# doing the same work (curl on the socket), alternating, BENCH_SANDBOX_RUNS (15) runs,
# median and p99. Both sides are timed the same way: by curl itself (%{time_total}), one
# figure per HTTP request, summed where the raw side needs several (an exec is create,
# start and inspect); nothing else of the shell is counted (no jq, no process start), and
# BENCH_SETTLE (1) seconds pass between the two sides.
if part sandboxes; then
RSS_BEFORE=$(worker_rss)
RUNS=${BENCH_SANDBOX_RUNS:-15}
SETTLE=${BENCH_SETTLE:-1}
API=http://d/v1.41
IMAGE=sandboxd-runner:minimal
# A small repository: create-to-first-exec includes the clone.
"$ROOT/build/sandboxctl" repo create admin/small >/dev/null
git -C "$SRC" checkout -q --orphan small && git -C "$SRC" rm -rqf --ignore-unmatch . && echo small >"$SRC/README" &&
	git -C "$SRC" add README && git -C "$SRC" -c user.name=b -c user.email=b@b commit -qm small &&
	git -C "$SRC" push -q "http://t:$SANDBOXD_TOKEN@${SANDBOXD_URL#http://}/admin/small.git" small:main
SB="$SANDBOXD_URL/api/v3/repos/admin/small/diffinery/sandboxes"
AUTH="Authorization: Bearer $SANDBOXD_TOKEN"
BODY=$VAR/body
# One request, timed by curl: prints its milliseconds; its answer is in $BODY. A status
# that is not 2xx stops the bench (a figure for a failure would mean nothing).
req() {
	local out code t
	out=$(curl -s -o "$BODY" -w '%{http_code} %{time_total}' "$@")
	code=${out% *}
	t=${out#* }
	[[ "$code" == 2* ]] || { echo "bench: $* answered $code: $(head -c 300 "$BODY")" >&2; exit 1; }
	awk -v t="$t" 'BEGIN { printf "%.2f", t * 1000 }'
}
sum() { awk 'BEGIN { s = 0; for (i = 1; i < ARGC; i++) s += ARGV[i]; printf "%.2f", s }' "$@"; }
# The stack's engine (local.env's DOCKER_HOST: its own, with userns-remap, when it started).
D=(--unix-socket "$(h=${DOCKER_HOST:-unix:///var/run/docker.sock}; echo "${h#unix://}")")
# The raw side creates containers with the same hardening sandboxd uses, on the same network
# (the stack's own: a user-defined bridge costs ~80 ms more per create and start than the
# default one, measured here), labelled as the bench's own (not the instance's: the reaper
# would take them for orphans).
NET=${SANDBOXD_SANDBOX_NETWORK:-bridge}
RAW_CREATE=$(jq -cn --arg img "$IMAGE" --arg v "$VAR" --arg net "$NET" '{Image: $img, User: "61000:61000",
	Cmd: ["sleep", "infinity"], WorkingDir: "/workspace", Labels: {"sandboxd.bench": $v},
	HostConfig: {Init: true, CapDrop: ["ALL"], SecurityOpt: ["no-new-privileges"], PidsLimit: 512,
	Memory: 2147483648, MemorySwap: 2147483648, NanoCpus: 2000000000, LogConfig: {Type: "none"},
	NetworkMode: $net, ExtraHosts: ["sandboxd.internal:host-gateway"]},
	Volumes: {"/workspace": {}}}')
# What the network costs, once: the same raw create and start on Docker's default bridge.
RAW_CREATE_DEFAULT=$(jq -c '.HostConfig.NetworkMode = "bridge"' <<<"$RAW_CREATE")
RID="" CREATE_MS=""
raw_create() { # [BODY]: RID, a started container's id, and CREATE_MS, create + start
	local a b
	a=$(req "${D[@]}" -X POST -H 'Content-Type: application/json' -d "${1:-$RAW_CREATE}" "$API/containers/create")
	RID=$(jq -r .Id "$BODY")
	b=$(req "${D[@]}" -X POST "$API/containers/$RID/start")
	CREATE_MS=$(sum "$a" "$b")
}
raw_exec() { # ID CMD…: prints the ms of create + start (output read to the end) + inspect
	local id=$1 body a b c ex
	shift
	body=$(printf '%s\n' "$@" | jq -R . | jq -sc '{Cmd: ., AttachStdout: true, AttachStderr: true}')
	a=$(req "${D[@]}" -X POST -H 'Content-Type: application/json' -d "$body" "$API/containers/$id/exec")
	ex=$(jq -r .Id "$BODY")
	b=$(req "${D[@]}" -X POST -H 'Content-Type: application/json' -d '{"Detach":false,"Tty":false}' "$API/exec/$ex/start")
	c=$(req "${D[@]}" "$API/exec/$ex/json")
	sum "$a" "$b" "$c"
}
ours_exec() { # SANDBOX JSON: prints the ms of the one request
	req -H "$AUTH" -H 'Content-Type: application/json' -d "$2" "$SB/$1/exec"
}
mkdir -p "$VAR/files"
head -c 1048576 /dev/urandom >"$VAR/files/f1"
head -c 10485760 /dev/urandom >"$VAR/files/f10"
for s in 1 10; do
	tar -C "$VAR/files" -cf "$VAR/files/f$s.tar" "f$s"
	jq -n --rawfile c <(base64 -w0 "$VAR/files/f$s") "{path: \"f$s\", content: \$c}" >"$VAR/files/f$s.json"
done

# A streamed exec whose command writes the time (ns) just before it writes the line, once
# early (the worker still has it) and once after 0.2 s (the holder has it by then); the
# client notes each line's arrival (bash's EPOCHREALTIME, no process): the ms between is
# the streaming's latency (FIRST_BYTE, as "early late"). Host and container share the clock.
FIRST_EARLY="" FIRST_LATE=""
first_byte() { # SANDBOX
	local line t arrived n=0
	while IFS= read -r line; do
		arrived=${EPOCHREALTIME/./}
		[[ $line =~ \"T([0-9]+) ]] || continue
		t=$(((arrived - BASH_REMATCH[1] / 1000)))
		if ((n++ == 0)); then FIRST_EARLY+="$(awk -v u="$t" 'BEGIN {printf "%.2f", u / 1000}') "
		else FIRST_LATE+="$(awk -v u="$t" 'BEGIN {printf "%.2f", u / 1000}') "; fi
	done < <(curl -sN -H "$AUTH" -H 'Content-Type: application/json' -H 'Accept: application/x-ndjson' \
		-d '{"cmd":"echo T$(date +%s%N); sleep 0.2; echo T$(date +%s%N); sleep 0.1"}' "$SB/$1/exec")
}
declare -A RAW OURS
add() { RAW[$1]+="$2 "; OURS[$1]+="$3 "; }
# The plot's figures, in the table's order, once the runs are done.
plot_samples() {
	local k v
	for k in "$@"; do
		[[ -n ${OURS[$k]:-} ]] || continue
		for v in ${RAW[$k]}; do sample "$k" raw "$v"; done
		for v in ${OURS[$k]}; do sample "$k" sandboxd "$v"; done
	done
}
settle() { sleep "$SETTLE"; }
POOL=${SANDBOXD_POOL_SIZE:-2}
sqlb() { psql "$SANDBOXD_DATABASE_URL" -Atc "$1"; }
pool_wait() { # until the warm pool is full again (the reaper refills it)
	local i
	for ((i = 0; i < 600; i++)); do
		(($(sqlb "select count(*) from warm_containers where state = 'ready'") >= POOL)) && return 0
		sleep 0.1
	done
	echo "bench: the warm pool did not fill in 60 s" >&2
	exit 1
}
for _ in $(seq "$RUNS"); do
	# create (until 201 / until started) and the first exec result after it, with the
	# pool full (the pool-empty figures come after this loop, with the pool off)
	raw_create; c_raw=$CREATE_MS rid=$RID; e_raw=$(raw_exec "$rid" true); settle
	((POOL > 0)) && pool_wait
	c_ours=$(req -H "$AUTH" -d '{}' "$SB"); sid=$(jq -r .id "$BODY")
	e_ours=$(ours_exec "$sid" '{"cmd":"true"}'); settle
	how="pool empty"
	[[ $(sqlb "select details->>'pooled' from audit_log where action = 'sandbox.create' and sandbox_id = '$sid'") == true ]] && how="pool warm"
	add "create, $how" "$c_raw" "$c_ours"
	add "create to exec, $how" "$(sum "$c_raw" "$e_raw")" "$(sum "$c_ours" "$e_ours")"
	raw_create "$RAW_CREATE_DEFAULT"; add "raw create, default bridge" "$CREATE_MS" 0
	curl -s "${D[@]}" -X DELETE "$API/containers/$RID?force=1&v=1" >/dev/null
	a=$(raw_exec "$rid" true); settle; b=$(ours_exec "$sid" '{"cmd":"true"}'); settle
	add "exec true" "$a" "$b"
	a=$(raw_exec "$rid" head -c 1048576 /dev/zero); settle
	b=$(ours_exec "$sid" '{"cmd":"head -c 1048576 /dev/zero"}'); settle
	add "exec 1 MiB out" "$a" "$b"
	first_byte "$sid"
	for s in 1 10; do
		a=$(req "${D[@]}" -X PUT -H 'Content-Type: application/x-tar' --data-binary "@$VAR/files/f$s.tar" \
			"$API/containers/$rid/archive?path=/tmp"); settle
		b=$(req -H "$AUTH" -H 'Content-Type: application/json' --data-binary "@$VAR/files/f$s.json" \
			"$SB/$sid/write"); settle
		add "write $s MiB" "$a" "$b"
		a=$(req "${D[@]}" "$API/containers/$rid/archive?path=/tmp/f$s"); settle
		b=$(req -H "$AUTH" -d "{\"path\":\"f$s\"}" "$SB/$sid/read"); settle
		add "read $s MiB" "$a" "$b"
	done
	a=$(req "${D[@]}" -X DELETE "$API/containers/$rid?force=1&v=1"); settle
	b=$(req -H "$AUTH" -X POST "$SB/$sid/close"); settle
	add close "$a" "$b"
done
# The pool empty: sandboxd restarted with SANDBOXD_POOL_SIZE=0, so that no refill runs
# beside the creates (a refill right after a claim competes with a cold create for the
# engine: measured apart, it would be that contention, not the cold path). 50 execs in a
# row in one sandbox, too.
if ((POOL > 0)); then
	SANDBOXD_POOL_SIZE=0 bash "$ROOT/deploy/local-stack.sh" up >>"$VAR/up.log" 2>&1 || { tail -30 "$VAR/up.log"; exit 1; }
fi
for _ in $(seq "$RUNS"); do
	raw_create; c_raw=$CREATE_MS rid=$RID; e_raw=$(raw_exec "$rid" true); settle
	c_ours=$(req -H "$AUTH" -d '{}' "$SB"); sid=$(jq -r .id "$BODY")
	e_ours=$(ours_exec "$sid" '{"cmd":"true"}'); settle
	add "create, pool empty" "$c_raw" "$c_ours"
	add "create to exec, pool empty" "$(sum "$c_raw" "$e_raw")" "$(sum "$c_ours" "$e_ours")"
	a=0 b=0
	for _ in $(seq 50); do a=$(sum "$a" "$(raw_exec "$rid" true)"); done; settle
	for _ in $(seq 50); do b=$(sum "$b" "$(ours_exec "$sid" '{"cmd":"true"}')"); done; settle
	add "50 execs in a row" "$a" "$b"
	curl -s "${D[@]}" -X DELETE "$API/containers/$rid?force=1&v=1" >/dev/null
	req -H "$AUTH" -X POST "$SB/$sid/close" >/dev/null
done
# The p99 of n figures: the nearest rank (with 15 runs, the largest).
p99() { sort -n | awk '{a[NR] = $1} END {i = int(NR * 0.99 + 0.999); print a[i < 1 ? 1 : i]}'; }
echo
echo "sandboxes: sandboxd beside the raw Docker Engine API ($RUNS runs, ms, curl's own timer)"
printf '%-22s %9s %9s %9s %9s %8s %8s\n' "what" "raw p50" "ours p50" "raw p99" "ours p99" "p50 x" "p99 x"
for k in "create, pool warm" "create to exec, pool warm" "create, pool empty" \
	"create to exec, pool empty" "exec true" "50 execs in a row" "exec 1 MiB out" "write 1 MiB" "read 1 MiB" \
	"write 10 MiB" "read 10 MiB" close; do
	[[ -n ${OURS[$k]:-} ]] || continue # e.g. no pool (SANDBOXD_POOL_SIZE=0)
	a=$(tr ' ' '\n' <<<"${RAW[$k]}" | grep . | median)
	b=$(tr ' ' '\n' <<<"${OURS[$k]}" | grep . | median)
	c=$(tr ' ' '\n' <<<"${RAW[$k]}" | grep . | p99)
	d=$(tr ' ' '\n' <<<"${OURS[$k]}" | grep . | p99)
	printf '%-22s %9.1f %9.1f %9.1f %9.1f %8s %8s\n' "$k" "$a" "$b" "$c" "$d" \
		"$(awk -v a="$b" -v b="$a" 'BEGIN {printf "%.2f", a / b}')" \
		"$(awk -v a="$d" -v b="$c" 'BEGIN {printf "%.2f", a / b}')"
done
plot_samples "create, pool warm" "create to exec, pool warm" "create, pool empty" \
	"create to exec, pool empty" "exec true" "exec 1 MiB out" "write 1 MiB" "read 1 MiB" \
	"write 10 MiB" "read 10 MiB" close
# Which backend ran the execs (README "The agent"): a fallback must not pass for the agent.
echo "exec backends (audit log): $(psql "$SANDBOXD_DATABASE_URL" -Atc "select string_agg(b || ' ' || n, ', ' order by b) from (select coalesce(details->>'backend', '?') || coalesce(' (' || (details->>'agent_error') || ')', '') b, count(*) n from audit_log where action = 'sandbox.exec' group by 1) t")"
echo "streamed exec, a line's latency (the command writes it -> the client has it, ms): early p50 $(tr ' ' '\n' <<<"$FIRST_EARLY" | grep . | median) p99 $(tr ' ' '\n' <<<"$FIRST_EARLY" | grep . | p99); after 0.2 s (through the holder) p50 $(tr ' ' '\n' <<<"$FIRST_LATE" | grep . | median) p99 $(tr ' ' '\n' <<<"$FIRST_LATE" | grep . | p99) (goal: <= 10 ms)"
# Where a cold create's time goes, from sandboxd's log (a "started in" line per cold
# create: README Benchmarks): the p50 of each step and of the whole.
LOG=$VAR/log/sandboxd.log
if [[ -r $LOG ]] && grep -q ': started in ' "$LOG"; then
	steps=$(grep -o ': started in .*' "$LOG" | awk -F'[:,] *' '
		{ split($2, t, " "); v["whole"] = v["whole"] " " t[3]
		  for (i = 3; i <= NF; i++) { split($i, kv, " "); v[kv[1]] = v[kv[1]] " " kv[2] } }
		END { n = split("whole rows create parameters start running", o, " ")
		      for (i = 1; i <= n; i++) if (o[i] in v) print o[i] v[o[i]] }' |
		while read -r k vals; do
			printf '%s %s, ' "$k" "$(tr ' ' '\n' <<<"$vals" | grep . | median)"
		done)
	echo "cold creates in sandboxd's log, ms (p50 of each step, $(grep -c ': started in ' "$LOG") creates): ${steps%, }"
fi
k="raw create, default bridge"
echo "raw create and start on Docker's default bridge instead: $(tr ' ' '\n' <<<"${RAW[$k]}" | grep . | median) ms"
# 1,000 more requests, then the workers' resident memory.
for _ in $(seq 1000); do echo "url = \"$SANDBOXD_URL/api/v3/user\""; done >"$VAR/urls"
curl -s -H "$AUTH" --parallel --parallel-max 16 -K "$VAR/urls" >/dev/null 2>&1
echo "worker resident memory before the sandbox work: $RSS_BEFORE"
echo "worker resident memory after sandbox work and 1,000 more requests: $(worker_rss)"
echo "worker private memory (RssAnon) after them: $(worker_rss_anon) (goal: <= 4 MiB)"
fi

# --- 5. a metrics scrape --------------------------------------------------------------------
# After the other parts, so that the exposition holds what a busy service's does (every route
# and status seen so far, the Docker operations); the admin token, as Prometheus would send it.
if part metrics; then
SCRAPES=${BENCH_SCRAPES:-200}
MAUTH="Authorization: Bearer $SANDBOXD_TOKEN"
# seq_ms PATH OUT: SCRAPES requests one after the other, curl's time_total of each (ms) into
# OUT; anything but 200 stops the bench.
seq_ms() {
	local out
	: >"$2"
	for _ in $(seq "$SCRAPES"); do
		out=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' -H "$MAUTH" "$SANDBOXD_URL$1")
		[ "${out% *}" = 200 ] || { echo "bench: GET $1 answered ${out% *}" >&2; exit 1; }
		awk -v t="${out#* }" 'BEGIN { printf "%.3f\n", t * 1000 }' >>"$2"
	done
}
p99() { sort -n "$1" | awk '{a[NR] = $1} END {i = int(NR * 0.99); if (i < 1) i = 1; print a[i]}'; }
curl -sf -o "$VAR/scrape.0" -H "$MAUTH" "$SANDBOXD_URL/metrics"  # warm-up, and the start
# Alternating halves, so that a machine busy for a while weighs on both alike.
SCRAPES=$((SCRAPES / 2))
seq_ms /metrics "$VAR/scrapes.1"; seq_ms /api/v3/user "$VAR/users.1"
seq_ms /metrics "$VAR/scrapes.2"; seq_ms /api/v3/user "$VAR/users.2"
cat "$VAR/scrapes.1" "$VAR/scrapes.2" >"$VAR/scrapes.txt"
cat "$VAR/users.1" "$VAR/users.2" >"$VAR/users.txt"
curl -sf -o "$VAR/scrape.txt" -H "$MAUTH" "$SANDBOXD_URL/metrics"
series=$(grep -vc '^#' "$VAR/scrape.txt")
bytes=$(wc -c <"$VAR/scrape.txt")
# The time inside sandboxd: the route's own histogram, between the scrape before the runs
# and the one after (so the user part's concurrent load is not in it).
mean() { # ROUTE: mean ms of sandboxd_http_request_duration_seconds{route=ROUTE} meanwhile
	awk -v r="{route=\"$1\"}" '
		index($1, "sandboxd_http_request_duration_seconds_sum" r) == 1 { s[FILENAME] = $2 }
		index($1, "sandboxd_http_request_duration_seconds_count" r) == 1 { n[FILENAME] = $2 }
		END { a = ARGV[1]; b = ARGV[2]; d = n[b] - n[a]
		      printf "%.3f", d ? (s[b] - s[a]) / d * 1000 : 0 }' "$VAR/scrape.0" "$VAR/scrape.txt"
}
echo
echo "metrics scrape: GET /metrics through nginx, $((SCRAPES * 2)) one after the other (alternating"
echo "with as many GET /api/v3/user: the same token check and audit row), $series series, $bytes bytes"
printf '%-22s %9s %9s %14s\n' "what" "p50 ms" "p99 ms" "in sandboxd ms"
printf '%-22s %9s %9s %14s\n' "metrics scrape" "$(median <"$VAR/scrapes.txt")" "$(p99 "$VAR/scrapes.txt")" "$(mean /metrics)"
printf '%-22s %9s %9s %14s\n' "GET /api/v3/user" "$(median <"$VAR/users.txt")" "$(p99 "$VAR/users.txt")" "$(mean /api/v3/user)"
echo "goal: a scrape under 5 ms (\"in sandboxd\": the mean of the route's own histogram over these runs)"
fi

# --- 6. clones of a long history ---------------------------------------------------------------
# create -> the first exec's result (the exec waits for the clone) on a repository of
# BENCH_HISTORY (20,000) small commits, for a full, a shallow (depth 1) and a blobless clone,
# alternating, BENCH_HISTORY_RUNS (5) runs each.
if part history; then
N=${BENCH_HISTORY:-20000}
H=$VAR/long
git init -q -b main "$H"
for ((i = 1; i <= N; i++)); do
	c="$i"$'\n'
	printf 'commit refs/heads/main\ncommitter b <b@b> %d +0000\ndata 2\nc\nM 644 inline f%d\ndata %d\n%s\n' \
		$((1700000000 + i)) $((i % 100)) ${#c} "$c"
done | git -C "$H" fast-import --quiet
"$ROOT/build/sandboxctl" repo create admin/long >/dev/null
git -C "$H" push -q "http://t:$SANDBOXD_TOKEN@${SANDBOXD_URL#http://}/admin/long.git" main
LB="$SANDBOXD_URL/api/v3/repos/admin/long/diffinery/sandboxes"
HAUTH="Authorization: Bearer $SANDBOXD_TOKEN"
HBODY=$VAR/hbody
hreq() { # one request, timed by curl: its ms; a status that is not 2xx stops the bench
	local out
	out=$(curl -s -o "$HBODY" -w '%{http_code} %{time_total}' -H "$HAUTH" "$@")
	[[ $out == 2* ]] || { echo "bench: $* answered ${out% *}: $(head -c 300 "$HBODY")" >&2; exit 1; }
	awk -v t="${out#* }" 'BEGIN { printf "%.2f", t * 1000 }'
}
hp99() { sort -n | awk '{a[NR] = $1} END {i = int(NR * 0.99 + 0.999); print a[i < 1 ? 1 : i]}'; }
declare -A HIST
for _ in $(seq "${BENCH_HISTORY_RUNS:-5}"); do
	for mode in full depth blobless; do
		case $mode in
		full) body='{}' ;;
		depth) body='{"depth":1}' ;;
		blobless) body='{"filter":"blob:none"}' ;;
		esac
		a=$(hreq -H 'Content-Type: application/json' -d "$body" "$LB"); s=$(jq -r .id "$HBODY")
		b=$(hreq -H 'Content-Type: application/json' -d '{"cmd":"git log --oneline | wc -l"}' "$LB/$s/exec")
		HIST[$mode]+="$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a + b }') "
		hreq -X POST "$LB/$s/close" >/dev/null
		sleep "${BENCH_SETTLE:-1}"
	done
done
echo
echo "create -> first exec result on a history of $N commits (ms, ${BENCH_HISTORY_RUNS:-5} runs)"
for mode in full depth blobless; do
	printf '%-10s p50 %9.1f  p99 %9.1f\n' "$mode" "$(tr ' ' '\n' <<<"${HIST[$mode]}" | grep . | median)" \
		"$(tr ' ' '\n' <<<"${HIST[$mode]}" | grep . | hp99)"
done
fi

# --- 7. running commands cost no worker (bench/held.sh: a stack of its own, 4 workers) ------
if part held; then
	bash "$ROOT/bench/held.sh"
fi

# --- 8. raw files beside the engine's archive API (bench/files.sh: a stack of one worker) ------
if part files; then
	bash "$ROOT/bench/files.sh"
fi

# --- 9. gVisor beside runc (bench/gvisor.sh: an engine and a stack of its own) -------------------
if part gvisor; then
	bash "$ROOT/bench/gvisor.sh"
fi

# --- 10. one account's execs flood, another's calls answer (bench/abuse.sh: a stack of its own)
if part abuse; then
	bash "$ROOT/bench/abuse.sh"
fi

# --- 11. the SDKs' overhead per exec (bench/sdk_js.sh, bench/sdk_python.sh: a stack of one
# worker each) ---------------------------------------------------------------------------------
if part sdk; then
	bash "$ROOT/bench/sdk_js.sh"
	bash "$ROOT/bench/sdk_python.sh"
fi

# --- the plot: every figure above with a raw baseline beside it ---------------------------
if [ -s "$SAMPLES" ]; then
	if command -v gnuplot >/dev/null; then
		bash "$ROOT/bench/plot.sh" "$SAMPLES" "$PLOT_DIR/latency.png"
	else
		echo "bench: no plot (gnuplot is missing: apt-get install gnuplot-nox)" >&2
	fi
fi
