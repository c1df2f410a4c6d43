# file-write.sh: puts a staged file in place for the file API (bash -c, as the sandbox's
# user, as exec runs). $1 the staged file (in /.sandboxd-stage, which only root can change:
# the service put it there through the engine's archive API), $2 the target path
# (absolute), $3 its mode (octal). Parents are created; the file is written beside the
# target and renamed over it, so that no partial file is ever seen under its name. The
# staged file is removed whatever happens. Exit 3: the target is a directory; 4: a parent
# is not a directory; 5: not permitted; 6: another failure (the failing command's words on
# stdout).
# shellcheck shell=bash

staged=$1 f=$2 tmp=
trap 'rm -f -- "$staged" ${tmp:+"$tmp"}' EXIT
[ -d "$f" ] && exit 3
d=${f%/*}
[ -n "$d" ] || d=/
if ! mkdir -p -- "$d" 2>/dev/null; then
	p=$d
	while [ ! -e "$p" ]; do
		p=${p%/*}
		[ -n "$p" ] || p=/
	done
	[ -d "$p" ] || exit 4
	exit 5
fi
[ -w "$d" ] && [ -x "$d" ] || exit 5
tmp=$(mktemp -p "$d" .sandboxd-write.XXXXXX 2>/dev/null) || exit 5
if ! out=$(cat -- "$staged" 2>&1 >"$tmp" && chmod -- "$3" "$tmp" 2>&1 && mv -f -- "$tmp" "$f" 2>&1); then
	printf '%s\n' "$out"
	exit 6
fi
tmp=
