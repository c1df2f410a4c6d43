#!/usr/bin/env bash
# bench/files.sh (part "files" of make bench): raw file transfer (SPEC §4 "Files, raw")
# beside the engine's own archive API on the same bytes, in the same run. A throwaway stack
# with ONE worker (every request is served by the same process, whose memory is followed);
# BENCH_FILE_MB (100) MiB of random bytes:
#
#   PUT  …/files/bench.bin through nginx and sandboxd (curl -T)  vs  PUT /containers/{id}/archive
#        (the same bytes as a tar, straight to the engine's socket)
#   GET  …/files/bench.bin                                       vs  GET /containers/{id}/archive
#
# alternating, medians of BENCH_FILE_RUNS (5) each, curl's own timer; throughput as MiB/s and
# the ratio ours / raw (the goal: at least 0.8). Meanwhile the worker's private memory
# (RssAnon in /proc/<pid>/status) is read every 10 ms: its largest value during the
# transfers beside its value before them (the goal: under 4 MiB during).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
MB=${BENCH_FILE_MB:-100}
RUNS=${BENCH_FILE_RUNS:-5}
VAR=$(mktemp -d /tmp/sandboxd-files.XXXXXXXX)
chmod 755 "$VAR"
SID='' SAMPLER=''

# bench/lib.sh: closes SID, stops the stack, removes $VAR (BENCH_KEEP=1 keeps it).
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

one_worker_stack files

# ---- a repository, a sandbox with its clone done -----------------------------------------
sandbox_with_clone files
CID=$(psql "$SANDBOXD_DATABASE_URL" -Atc "select container_id from sandboxes where id = '$SID'")
D=(--unix-socket "$(h=${DOCKER_HOST:-unix:///var/run/docker.sock}; echo "${h#unix://}")")
API=http://d/v1.41
the_worker files

# ---- the bytes: the file, and the same file as a tar for the raw side ---------------------
mkdir -p "$VAR/f"
head -c $((MB << 20)) /dev/urandom >"$VAR/f/bench.bin"
tar -C "$VAR/f" -cf "$VAR/bench.tar" bench.bin
BYTES=$((MB << 20))

# One transfer, timed by curl (seconds); a status that is not 2xx stops the bench.
timed() { # CURL ARGS…
	local out
	out=$(curl -s -o "$VAR/out" -w '%{http_code} %{time_total}' "$@")
	[[ ${out% *} == 2* ]] || { echo "files: $* answered ${out% *}: $(head -c 300 "$VAR/out")" >&2; exit 1; }
	echo "${out#* }"
}
rss_anon() { awk '/^RssAnon:/ {print $2}' "/proc/$W/status"; }
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

# One of each first, not counted (page cache, the engine's and nginx's first buffers).
curl -sf -o /dev/null "${D[@]}" -X PUT -T "$VAR/bench.tar" "$API/containers/$CID/archive?path=/tmp"
curl -sf -o /dev/null -H "$AUTH" -T "$VAR/f/bench.bin" "$SB/$SID/files/bench.bin"
IDLE=$(rss_anon)
(
	m=0
	while :; do
		v=$(rss_anon) || break
		((v > m)) && m=$v && echo "$m" >"$VAR/rss.max"
		sleep 0.01
	done
) &
SAMPLER=$!
raw_put='' raw_get='' our_put='' our_get=''
for _ in $(seq "$RUNS"); do
	raw_put+="$(timed "${D[@]}" -X PUT -T "$VAR/bench.tar" "$API/containers/$CID/archive?path=/tmp") "
	our_put+="$(timed -H "$AUTH" -T "$VAR/f/bench.bin" "$SB/$SID/files/bench.bin") "
	raw_get+="$(timed "${D[@]}" "$API/containers/$CID/archive?path=/tmp/bench.bin") "
	our_get+="$(timed -H "$AUTH" "$SB/$SID/files/bench.bin") "
done
cmp -s "$VAR/out" "$VAR/f/bench.bin" || { echo "files: the GET did not give the bytes back" >&2; exit 1; }
kill "$SAMPLER" 2>/dev/null || true
wait "$SAMPLER" 2>/dev/null || true
SAMPLER=''
PEAK=$(cat "$VAR/rss.max" 2>/dev/null || echo "$IDLE")

mibs() { awk -v b="$BYTES" -v t="$1" 'BEGIN { printf "%.0f", b / 1048576 / t }'; }
line() { # WHAT RAW OURS (medians, seconds)
	printf '%-26s %10s %10s %7s\n' "$1" "$(mibs "$2")" "$(mibs "$3")" \
		"$(awk -v a="$2" -v b="$3" 'BEGIN { printf "%.2f", a / b }')"
}
echo "raw files: $MB MiB of random bytes, one worker (median of $RUNS, alternating; MiB/s)"
printf '%-26s %10s %10s %7s\n' what 'raw API' sandboxd ratio
line "PUT (archive API / files)" "$(tr ' ' '\n' <<<"$raw_put" | grep . | median)" "$(tr ' ' '\n' <<<"$our_put" | grep . | median)"
line "GET (archive API / files)" "$(tr ' ' '\n' <<<"$raw_get" | grep . | median)" "$(tr ' ' '\n' <<<"$our_get" | grep . | median)"
echo "runs (s): raw PUT $raw_put; ours $our_put; raw GET $raw_get; ours $our_get"
echo "the worker's RssAnon: $IDLE KiB before, at most $PEAK KiB during the transfers (goal: under 4096)"
echo "(the goal: ratio at least 0.8; the raw side sends a tar straight to the engine's socket and"
echo " reads one back, sandboxd's side goes through nginx, which holds each body whole first)"
