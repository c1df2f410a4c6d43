# file-remove.sh: removes a path for the file API (bash -c, as the sandbox's user, as exec
# runs). $1 the path (absolute, normalised, never /), $2 1 to remove a directory with what
# it holds. A symbolic link is removed itself, never followed. Exit 3: no such file; 4: a
# directory that is not empty (without $2); 5: not permitted; 6: another failure (the
# failing command's words on stdout).
# shellcheck shell=bash

f=$1
if [ ! -e "$f" ] && [ ! -L "$f" ]; then
	# Missing, or behind a directory that may not be searched (as the agent's lstat says).
	p=${f%/*}
	while [ -n "$p" ] && [ ! -e "$p" ]; do p=${p%/*}; done
	[ -z "$p" ] || [ ! -d "$p" ] || [ -x "$p" ] || exit 5
	exit 3
fi
if [ -d "$f" ] && [ ! -L "$f" ]; then
	if [ "$2" != 1 ]; then
		[ -z "$(find "$f" -mindepth 1 -maxdepth 1 -print -quit 2>/dev/null)" ] || exit 4
		rmdir -- "$f" 2>/dev/null || exit 5
		exit 0
	fi
	out=$(LC_ALL=C rm -rf --one-file-system -- "$f" 2>&1) && exit 0
else
	out=$(LC_ALL=C rm -f -- "$f" 2>&1) && exit 0
fi
case $out in
*"ermission denied"* | *"not permitted"* | *"ead-only file system"*) exit 5 ;;
esac
printf '%s\n' "$out" | head -n 1
exit 6
