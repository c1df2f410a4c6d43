#!/usr/bin/env bash
# bench/plot.sh SAMPLES OUT.png: each operation's latency distribution, sandboxd beside its
# raw baseline (the Docker Engine API, plain git http-backend), as box plots on a log scale:
# the box from the 25th to the 75th percentile, a bar at the median, whiskers to the
# fastest and the slowest run. SAMPLES has one line per run: operation <TAB> side <TAB> ms,
# side being "raw" or "sandboxd", operations in the order they are to be drawn.
set -euo pipefail

SAMPLES=$1
OUT=$2
command -v gnuplot >/dev/null || { echo "plot: gnuplot is missing (apt-get install gnuplot-nox)" >&2; exit 1; }
[ -s "$SAMPLES" ] || { echo "plot: $SAMPLES has no samples" >&2; exit 1; }
STATS=$(mktemp)
trap 'rm -f "$STATS"' EXIT

# One line per operation and side: x, min, p25, median, p75, max, label. The raw side left
# of the operation's tick, sandboxd right of it.
# (mawk has no sort: each line gets its operation's rank, sort(1) orders the runs.)
awk -F '\t' -v OFS='\t' '!($1 in op) { op[$1] = ++n } { print op[$1], ($2 == "sandboxd"), $3, $1 }' "$SAMPLES" |
	sort -t "$(printf '\t')" -k1,1n -k2,2n -k3,3g |
	awk -F '\t' '
	function flush(   m) {
		if (!c) return
		m = c
		printf "%d %.3f %.3f %.3f %.3f %.3f %.3f\n", side, op + (side ? 0.2 : -0.2), v[1],
			v[int(0.25 * (m - 1) + 0.5) + 1], v[int(0.5 * (m - 1) + 0.5) + 1],
			v[int(0.75 * (m - 1) + 0.5) + 1], v[m]
		c = 0
	}
	$1 != op || $2 != side { flush(); op = $1; side = $2 }
	{ v[++c] = $3 + 0 }
	END { flush() }' >"$STATS"

N=$(awk -F '\t' '!($1 in o) { o[$1]; n++ } END { print n }' "$SAMPLES")
# A tick per operation, at its middle.
TICS=$(awk -F '\t' '!($1 in o) { o[$1]; n++; gsub(/"/, "", $1); t = t (n > 1 ? ", " : "") "\"" $1 "\" " n }
	END { print t }' "$SAMPLES")
W=$((160 + 90 * N)); ((W >= 900)) || W=900
gnuplot <<GP
set terminal pngcairo size $W,600 font "sans,10"
set output "$OUT"
set title "make bench: latency per operation, sandboxd beside the raw baseline (ms, log scale)"
set logscale y
set grid ytics
set ylabel "ms"
set xrange [0.3:$N + 0.7]
set xtics rotate by -35 nomirror ($TICS)
set boxwidth 0.35
set style fill solid 0.35 border -1
set key top left
plot "$STATS" using (\$1 == 0 ? \$2 : 1/0):4:3:7:6 with candlesticks whiskerbars lc rgb "#777777" title "raw (Docker Engine API, git http-backend)", \
     "$STATS" using (\$1 == 1 ? \$2 : 1/0):4:3:7:6 with candlesticks whiskerbars lc rgb "#1f77b4" title "sandboxd", \
     "$STATS" using 2:5:5:5:5 with candlesticks lc rgb "black" lw 2 notitle
GP
echo "plot: $OUT"
