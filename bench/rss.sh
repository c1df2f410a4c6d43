#!/usr/bin/env bash
# bench/rss.sh (make bench-rss, and the end of make bench): does a worker keep a flat
# resident size? A throwaway stack with ONE worker (SANDBOXD_WORKERS=1), so that every
# request is served by the same process; its /proc/<pid>/status (VmRSS, RssAnon, RssFile,
# VmHWM) at 0 requests and after each point of RSS_POINTS (default 1000 2500 5000 10000)
# requests of a mix, one client after the other (curl, one connection):
#
#   GET /api/v3/user, GET /api/v3/repos/admin/rss, POST …/exec {"cmd":"echo hi; true"},
#   POST …/write (a 4 KiB file), POST …/read (the same file)
#
# in the proportions RSS_MIX (default user=4,repo=3,exec=1,write=1,read=1), interleaved.
# Any answer but 200 fails the run, as does a worker other than the one that started.
# "0" is after the setup (a repository, a push, a sandbox and its first exec).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
POINTS=${RSS_POINTS:-1000 2500 5000 10000}
MIX=${RSS_MIX:-user=4,repo=3,exec=1,write=1,read=1}
VAR=$(mktemp -d /tmp/sandboxd-rss.XXXXXXXX)
chmod 755 "$VAR"
SID=''

cleanup() {
	if [ -n "$SID" ]; then
		curl -s -o /dev/null -X POST -H "Authorization: Bearer $SANDBOXD_TOKEN" \
			"$SANDBOXD_URL/api/v3/repos/admin/rss/diffinery/sandboxes/$SID/close" || true
	fi
	SANDBOXD_VAR=$VAR bash "$ROOT/deploy/local-stack.sh" down >/dev/null 2>&1 || true
	if [ "${RSS_KEEP:-0}" = 1 ]; then echo "rss: kept $VAR" >&2; else rm -rf -- "$VAR"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

one_worker_stack rss

# ---- setup: a repository with a commit, a sandbox, its first exec -------------------------
sandbox_with_clone rss
curl -sf -o /dev/null -H "$AUTH" -H "$JSON" -d '{"cmd":"true"}' "$SB/$SID/exec"

the_worker rss
worker() { ps -o pid=,comm= --ppid "$MASTER" | awk '$2 == "sandboxd" {print $1}'; }

# ---- the mix, as curl config blocks -----------------------------------------------------
mkdir -p "$VAR/req"
echo '{"cmd":"echo hi; true"}' >"$VAR/req/exec.json"
jq -n --arg c "$(head -c 4096 /dev/zero | tr '\0' x | base64 -w0)" '{path: "rss.txt", content: $c}' \
	>"$VAR/req/write.json"
echo '{"path":"rss.txt"}' >"$VAR/req/read.json"
block() { # ROUTE: one curl config block for one request of that route
	local common="header = \"$AUTH\"
output = \"/dev/null\"
write-out = \"%{http_code} $1\\n\""
	case $1 in
	user) printf 'url = "%s"\n%s\n' "$SANDBOXD_URL/api/v3/user" "$common" ;;
	repo) printf 'url = "%s"\n%s\n' "$SANDBOXD_URL/api/v3/repos/admin/rss" "$common" ;;
	exec | write | read)
		printf 'url = "%s"\n%s\nheader = "%s"\ndata-binary = "@%s"\n' \
			"$SB/$SID/$1" "$common" "$JSON" "$VAR/req/$1.json" ;;
	*) echo "rss: unknown route $1 in RSS_MIX" >&2; exit 2 ;;
	esac
}
# The mix interleaved: round k takes each route whose weight is over k.
CYCLE=()
maxw=$(tr ',' '\n' <<<"$MIX" | cut -d= -f2 | sort -n | tail -n 1)
for ((k = 0; k < maxw; k++)); do
	for rw in ${MIX//,/ }; do
		((${rw#*=} > k)) && CYCLE+=("${rw%%=*}")
	done
done
# The first request of the mix is a write, so that every read finds the file.
for i in "${!CYCLE[@]}"; do [ "${CYCLE[$i]}" = write ] && break; done
CYCLE=("${CYCLE[@]:$i}" "${CYCLE[@]:0:$i}")
POS=0
batch() { # N: N more requests of the mix; all must answer 200
	local n=$1 j cfg=$VAR/batch.cfg
	: >"$cfg"
	for ((j = 0; j < n; j++)); do
		((j == 0)) || echo next >>"$cfg"
		block "${CYCLE[$POS]}" >>"$cfg"
		POS=$(((POS + 1) % ${#CYCLE[@]}))
	done
	curl -s -K "$cfg" >"$VAR/batch.out" || true
	local got bad
	got=$(wc -l <"$VAR/batch.out")
	bad=$(awk '$1 != 200' "$VAR/batch.out" | sort | uniq -c | tr '\n' ';')
	if [ "$got" != "$n" ] || [ -n "$bad" ]; then
		echo "rss: $n requests sent, $got answered; not 200: ${bad:-none}" >&2
		exit 1
	fi
}

status() { # the worker's memory figures, KiB: VmRSS RssAnon RssFile VmHWM
	awk '/^(VmRSS|RssAnon|RssFile|VmHWM):/ {v[$1] = $2}
		END {print v["VmRSS:"], v["RssAnon:"], v["RssFile:"], v["VmHWM:"]}' "/proc/$W/status"
}

echo "worker $W resident memory over a mix of $MIX ($(nproc) cores)"
printf '%9s %10s %10s %10s %10s %8s\n' requests 'VmRSS KiB' 'RssAnon' 'RssFile' 'VmHWM' 'seconds'
read -r rss anon file hwm <<<"$(status)"
printf '%9d %10d %10d %10d %10d %8s\n' 0 "$rss" "$anon" "$file" "$hwm" -
FIRST=$rss
done_n=0
for p in $POINTS; do
	t0=$(date +%s)
	batch $((p - done_n))
	done_n=$p
	[ "$(worker)" = "$W" ] || { echo "rss: worker $W was replaced by $(worker)" >&2; exit 1; }
	read -r rss anon file hwm <<<"$(status)"
	printf '%9d %10d %10d %10d %10d %8d\n' "$p" "$rss" "$anon" "$file" "$hwm" $(($(date +%s) - t0))
done
echo "VmRSS: $FIRST KiB at 0, $rss KiB after $done_n requests, all answered 200 by worker $W"
