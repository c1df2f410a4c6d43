#!/bin/sh
# Turns sql/NNN_name.sql files into a C table of {version, name, text} for sandboxctl migrate.
set -eu
echo '#include "sandboxd/core/migrations.h"'
i=0
for f in "$@"; do
	printf 'static const char m%d[] = {' "$i"
	od -An -v -tx1 "$f" | tr -s ' \n' ' ' | sed 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'
	echo '0};'
	i=$((i + 1))
done
echo 'const struct migration migrations[] = {'
i=0
for f in "$@"; do
	b=$(basename "$f" .sql)
	printf '\t{%d, "%s", m%d},\n' "$(echo "$b" | sed 's/_.*//; s/^0*//')" "$b" "$i"
	i=$((i + 1))
done
echo '};'
echo "const int migrations_count = $i;"
