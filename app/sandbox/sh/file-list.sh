# file-list.sh: a directory's entries for the file API's list (bash -c, as the sandbox's
# user, as exec runs: the kernel decides what it may see). $1 the directory (absolute,
# normalised), $2 the depth (1..8), $3 the most records (the service's limit plus one, so
# that it can tell a listing was cut). stdout: one record per entry, each ended by a NUL:
# "<type> <mode> <size> <mtime> <path relative to $1>" (app/proto/flist.c reads them). Symbolic
# links are listed, never followed or entered; what cannot be read is left out, as the
# agent does. Exit 3: no such directory; 4: not a directory (a symbolic link to one
# included, or a parent that is not one); 7: it may not be read, or a parent searched.
# shellcheck shell=bash

d=$1
if [ ! -e "$d" ] && [ ! -L "$d" ]; then
	# Why not: the deepest thing of its path that exists says (as the agent's lstat).
	p=${d%/*}
	while [ -n "$p" ] && [ ! -e "$p" ]; do p=${p%/*}; done
	[ -z "$p" ] || [ -d "$p" ] || exit 4
	[ -z "$p" ] || [ -x "$p" ] || exit 7
	exit 3
fi
[ -L "$d" ] && exit 4
[ -d "$d" ] || exit 4
[ -r "$d" ] && [ -x "$d" ] || exit 7
find "$d" -mindepth 1 -maxdepth "$2" -printf '%y %m %s %T@ %P\0' 2>/dev/null | head -z -n "$3"
exit 0
