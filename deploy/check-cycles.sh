#!/bin/sh
# check-cycles.sh OBJDIR INCDIR: neither the call graph between the service's modules (a
# module calls another when its object uses a symbol the other's defines) nor the include
# graph of the headers may have a cycle: each module sits on a layer and uses only the
# layers below it (README "Architecture"). Prints each cycle found; fails when there is one.
set -eu
objs=$1
incs=$2

# "from to" lines in, the cycles out (a depth-first search that reports each back edge).
cycles() {
	awk -v what="$1" '
		$1 != $2 && !(($1, $2) in edge) { edge[$1, $2] = 1; adj[$1] = adj[$1] " " $2 }
		END {
			for (m in adj) visit(m)
			if (found) { print found " " what " cycles"; exit 1 }
		}
		function visit(m,    n, k, i, p, nx) {
			if (state[m] == 2) return
			if (state[m] == 1) {
				p = m
				for (i = depth; i > 0 && stack[i] != m; i--) p = stack[i] " -> " p
				print what " cycle: " m " -> " p
				found++
				return
			}
			state[m] = 1
			stack[++depth] = m
			n = split(adj[m], nx, " ")
			for (k = 1; k <= n; k++) visit(nx[k])
			depth--
			state[m] = 2
		}'
}

rc=0
for o in "$objs"/*.o; do
	m=$(basename "$o" .o)
	nm --defined-only -g "$o" | awk -v m="$m" 'NF == 3 { print "def", $3, m }'
	nm -u "$o" | awk -v m="$m" '{ print "use", $2, m }'
done | awk '$1 == "def" { owner[$2] = $3; next } { use[NR] = $2; user[NR] = $3 }
	END { for (i in use) if (owner[use[i]] != "") print user[i], owner[use[i]] }' |
	cycles call || rc=1
for h in "$incs"/*.h; do
	sed -n 's|^#include "sandboxd/\(.*\)\.h"|\1|p' "$h" | sed "s|^|$(basename "$h" .h) |"
done | cycles include || rc=1
exit $rc
