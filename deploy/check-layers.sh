#!/bin/sh
# check-layers.sh OBJDIR "LAYERS": app/ is cut into layers, lowest first (the Makefile's
# LAYERS, docs/architecture.md). A layer uses only itself and the layers before it:
#   - calls: an object of app/L/ may use a symbol defined in app/L2/ only when L2 is not
#     after L (from nm, as the linker sees it), and no call cycle runs between modules;
#   - includes: a file of app/L/ or include/sandboxd/L/ may include sandboxd/L2/*.h only
#     when L2 is not after L, and the headers' include graph has no cycle;
#   - app/agent/ (static, inside sandboxes) includes only sandboxd/common/;
#   - the engine behind its interface (engine/box.h, decision 0080): nothing but the Docker
#     client itself (app/engine/docker*.c) and box.c, which names the kinds of engine, uses
#     a symbol the Docker client defines or includes engine/docker.h or docker_int.h; of
#     the tests, only those of Docker itself do (tests/docker/, tests/unit/test_docker.c,
#     tests/fuzz/fuzz_info.c: the /info parser).
# So domain code (forge, git, sandbox and below) cannot include http/http.h; a grep also
# keeps libfcgi's headers and any struct req out of it. Prints every edge that breaks the rule; fails when there is one.
set -eu
objs=$1
layers=$2

# "from to" lines in (modules as layer/name), the cycles out: a depth-first search that
# reports each back edge.
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

# "from to [what]" lines in: every edge from a layer to a later one, out.
upward() {
	awk -v layers="$layers" -v what="$1" '
		BEGIN { n = split(layers, l, " "); for (i = 1; i <= n; i++) rank[l[i]] = i }
		{
			a = $1; sub(/\/.*/, "", a); b = $2; sub(/\/.*/, "", b)
			if (!(a in rank) || !(b in rank)) { print what ": " $1 " -> " $2 ": no such layer"; bad++; next }
			if (rank[b] > rank[a]) { print what " upward: " $0 " (" b " comes after " a ")"; bad++ }
		}
		END { if (bad) { print bad " " what " edges against the layers"; exit 1 } }'
}

calls=$(for l in $layers; do
	for o in "$objs/$l"/*.o; do
		m=$l/$(basename "$o" .o)
		nm --defined-only -g "$o" | awk -v m="$m" 'NF == 3 { print "def", $3, m }'
		nm -u "$o" | awk -v m="$m" '{ print "use", $2, m }'
	done
done | awk '$1 == "def" { owner[$2] = $3; next } { use[NR] = $2; user[NR] = $3 }
	END { for (i in use) if (owner[use[i]] != "" && owner[use[i]] != user[i])
		print user[i], owner[use[i]], use[i] }' | sort -u)

includes=$(for l in $layers; do
	for f in app/"$l"/*.c include/sandboxd/"$l"/*.h; do
		[ -f "$f" ] || continue
		m=$l/$(basename "$f" | sed 's/\.[ch]$//')
		case $f in *.h) h=header;; *) h=source;; esac
		sed -n 's|^#include "sandboxd/\(.*\)\.h".*|\1|p' "$f" | sed "s|^|$m |; s|\$| $h|"
	done
done | sort -u)

rc=0
printf '%s\n' "$calls" | awk 'NF' | upward call || rc=1
printf '%s\n' "$calls" | awk 'NF { print $1, $2 }' | cycles call || rc=1
printf '%s\n' "$includes" | awk 'NF { print $1, $2 }' | upward include || rc=1
printf '%s\n' "$includes" | awk '$3 == "header" { print $1, $2 }' | cycles include || rc=1
# Domain code and below: no HTTP. The layer rule keeps sandboxd/http/ out; this keeps out
# libfcgi itself and the request (struct req is http.h's) by name. One exception: the
# route table (lib/router.h) names struct req, opaque, as its handlers' type: the table is
# data that core/metrics counts by, and the handlers themselves live in api/.
domain="common lib proto core engine forge git sandbox"
bad=$(for l in $domain; do
	grep -nE '^#include <fcgi|struct req\b' app/"$l"/*.c include/sandboxd/"$l"/*.h 2>/dev/null
done | grep -v '^include/sandboxd/lib/router\.h:' || true)
if [ -n "$bad" ]; then
	printf '%s\n' "$bad"
	echo "domain code ($domain) takes no HTTP request: pass the caller, the database, the settings"
	rc=1
fi
# The engine interface: everything calls engine/box.h, Docker's table calls docker.h.
bad=$(printf '%s\n' "$calls" | awk 'NF && $2 ~ /^engine\/docker/ && $1 !~ /^engine\/(docker.*|box)$/ {
	print "docker call: " $1 " -> " $2 " (" $3 ")" }'
for f in app/*/*.[ch] app/*/*/*.[ch] include/sandboxd/*/*.h tests/*/*.[ch]; do
	case $f in
	app/engine/docker*.c | app/engine/box.c | include/sandboxd/engine/docker*.h) continue;;
	tests/docker/*.c | tests/unit/test_docker.c | tests/fuzz/fuzz_info.c) continue;;
	esac
	[ -f "$f" ] && grep -nE '^#include "sandboxd/engine/docker(_int)?\.h"' "$f" /dev/null
done | sort -u || true)
if [ -n "$bad" ]; then
	printf '%s\n' "$bad"
	echo "the engine is called through engine/box.h (the interface); docker.h is its Docker" \
	     "implementation's alone (app/engine/docker*.c, box.c) and Docker's own tests'"
	rc=1
fi
bad=$(grep -n '^#include "sandboxd/' app/agent/*.c app/agent/*.h | grep -v '"sandboxd/common/' || true)
if [ -n "$bad" ]; then
	printf '%s\n' "$bad"
	echo "app/agent/ includes only sandboxd/common/ (it is built with musl, without the service)"
	rc=1
fi
exit $rc
