#!/usr/bin/env bash
# bench/ab.sh OLD_BUILD: make bench's figures for two builds of sandboxd, alternated in one
# run (old, new, old, new, …), as ratios new/old. Absolute figures on these machines move by
# 2x between runs; alternating the two builds makes both sides see the same machine.
#
#   git worktree add /tmp/old <commit> && make -C /tmp/old all
#   bash bench/ab.sh /tmp/old/build        # beside this tree's build/
#
# Each round runs bench/run.sh once per build (BENCH_PARTS, default "user sandboxes": the
# floor GET and the sandbox operations), its stack started on that build's sandboxd, agent
# and sandboxctl (SANDBOXD_BUILD). Per figure: the median over every run of each build's
# samples, the ratio new/old, and "!" where it is off by more than AB_LIMIT (10) percent.
# Settings: AB_ROUNDS (2), AB_LIMIT (10), and bench/run.sh's own.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
OLD=${1:?usage: bench/ab.sh OLD_BUILD_DIR (a build/ of another commit)}
OLD=$(cd "$OLD" && pwd -P)
for b in sandboxd sandboxd-agent sandboxctl sandboxd-hook; do
	[[ -x $OLD/$b ]] || { echo "ab: $OLD/$b is missing: build that tree first" >&2; exit 2; }
done
ROUNDS=${AB_ROUNDS:-2}
LIMIT=${AB_LIMIT:-10}
OUT=$(mktemp -d /tmp/sandboxd-ab.XXXXXXXX)
# local-stack.sh takes the binaries from $ROOT/$SANDBOXD_BUILD: the old build goes there
# under a name of the run's own, removed at the end.
LINK=build-ab-old.$$
ln -s "$OLD" "$ROOT/$LINK"
trap 'rm -f "$ROOT/$LINK"' EXIT
export BENCH_PARTS=${BENCH_PARTS:-user sandboxes}

for ((r = 1; r <= ROUNDS; r++)); do
	for side in old new; do
		build=build
		[[ $side == old ]] && build=$LINK
		echo "ab: round $r, $side ($build)" >&2
		mkdir -p "$OUT/$side.$r"
		SANDBOXD_BUILD=$build BENCH_PLOT_DIR=$OUT/$side.$r bash "$ROOT/bench/run.sh" \
			>"$OUT/$side.$r/out.txt" 2>"$OUT/$side.$r/err.txt" ||
			{ echo "ab: bench/run.sh failed ($side, round $r): $OUT/$side.$r/err.txt" >&2; exit 1; }
		# The floor GET's req/s, p50 and p99 (the "user" part prints them on one line).
		awk '$1 == "GET" && $2 == "/api/v3/user" && NF == 5 {
			printf "GET /api/v3/user req/s\tsandboxd\t%s\n", $3
			printf "GET /api/v3/user p50 ms\tsandboxd\t%s\n", $4
			printf "GET /api/v3/user p99 ms\tsandboxd\t%s\n", $5 }' \
			"$OUT/$side.$r/out.txt" >>"$OUT/$side.$r/samples.tsv"
	done
done

# Per figure (sandboxd's side only; the raw baselines are the machine, not us).
for side in old new; do
	cat "$OUT/$side".*/samples.tsv | awk -F'\t' -v s="$side" '$2 == "sandboxd" { print s "\t" $1 "\t" $3 }'
done | awk -F'\t' -v limit="$LIMIT" '
	{ key = $2; order[key] = order[key] ? order[key] : ++n; names[order[key]] = key
	  v[$1, key, ++c[$1, key]] = $3 }
	function median(side, key,    i, m, a, t, j) {
		m = c[side, key]
		for (i = 1; i <= m; i++) a[i] = v[side, key, i]
		for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
		return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
	}
	END {
		printf "%-36s %12s %12s %8s\n", "figure (median of every run)", "old", "new", "new/old"
		for (i = 1; i <= n; i++) {
			k = names[i]
			if (!c["old", k] || !c["new", k]) continue
			o = median("old", k); w = median("new", k)
			r = o ? w / o : 0
			off = (r > 1 + limit / 100 || r < 1 - limit / 100) ? " !" : ""
			bad += off != ""
			printf "%-36s %12.2f %12.2f %8.3f%s\n", k, o, w, r, off
		}
		printf "%d figure(s) off by more than %d%%\n", bad, limit
	}'
echo "ab: every run's output and samples: $OUT" >&2
