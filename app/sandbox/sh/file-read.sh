# file-read.sh: a file's bytes for the file API (bash -c, as the sandbox's user, as exec
# runs: the kernel decides what it may read). $1 the path (absolute), $2 the most bytes.
# stdout: the file's size on one line, then its bytes. A final component that is a
# symbolic link is not followed. Exit 3: no such file; 4: not a regular file; 5: a
# directory; 6: larger than $2; 7: not readable.
# shellcheck shell=bash

f=$1
[ -L "$f" ] && exit 4
[ -d "$f" ] && exit 5
[ -e "$f" ] || exit 3
[ -f "$f" ] || exit 4
exec 3<"$f" 2>/dev/null || exit 7
# The size of what was opened, not of what the name may point at by now.
size=$(stat -L -c %s /dev/fd/3) || exit 7
[ "$size" -le "$2" ] || exit 6
printf '%s\n' "$size"
exec head -c "$size" <&3
