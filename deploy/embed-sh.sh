#!/bin/sh
# Turns the bash programs that run inside sandboxes (app/sandbox/sh/*.sh) into C strings, so that
# the service never depends on a path: sh_<name> for each program (dashes become
# underscores), with app/sandbox/sh/tree.sh put in front of exec.sh, detach.sh and detach-kill.sh, which use it.
#   usage: embed-sh.sh DIR > scripts.c
set -eu
dir=$1
echo '#include "sandboxd/sandbox/scripts.h"'
for f in "$dir"/*.sh; do
	b=$(basename "$f" .sh)
	[ "$b" = tree ] && continue
	printf 'const char sh_%s[] = {' "$(echo "$b" | tr - _)"
	case $b in
	exec | detach | detach-kill) cat "$dir/tree.sh" "$f" ;;
	*) cat "$f" ;;
	esac | od -An -v -tx1 | tr -s ' \n' ' ' | sed 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'
	echo '0};'
done
