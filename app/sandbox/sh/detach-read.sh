# detach-read.sh: bytes of detached exec $1's output, per stream: chunk, offset in it,
# count ($2-$4 stdout, $5-$7 stderr); stdout's bytes on stdout, stderr's on stderr. A read
# may run into the next chunk. Exit 3: no such exec; 4: a chunk was pruned meanwhile.
# shellcheck shell=bash

cd "/tmp/.sandboxd/x/$1" 2>/dev/null || exit 3
rd() {
	[ "$4" -gt 0 ] || return 0
	local f g
	f=$(printf '%s.%04d' "$1" "$2")
	g=$(printf '%s.%04d' "$1" $(($2 + 1)))
	[ -f "$f" ] || exit 4
	if [ -f "$g" ]; then cat "$f" "$g"; else cat "$f"; fi | tail -c +$(($3 + 1)) | head -c "$4"
}
rd out "$2" "$3" "$4"
rd err "$5" "$6" "$7" >&2
