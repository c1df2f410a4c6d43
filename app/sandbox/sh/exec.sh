# exec.sh: what an attached exec runs (bash -c, after tree.sh): the command $2 with a time
# limit of $1 ms. Its whole tree is ended when the limit passes (exit 124) or when the
# service's connection ends first: the exec's stdin, which the service never writes to,
# reads EOF when the client went away, the worker died or the service's own deadline
# passed. A command that ends by itself leaves its background jobs running (servers for
# previews start so). Nothing of this script reaches the command's stderr: its own goes
# to /dev/null, the command's to the exec's (fd 4 here).
# shellcheck shell=bash

exec 3<&0 </dev/null 4>&2 2>/dev/null
tree=SANDBOXD_TREE=$$.$(now_us)
deadline=$(($(now_us) + $1 * 1000))
why=
trap 'why=limit' ALRM
trap 'why=gone' USR1

set -m
SANDBOXD_TREE=${tree#*=} bash -c "$2" 2>&4 3<&- 4>&- &
p=$!
set +m
exec 4>&-

# The watch: one process waits for both the limit and the end of the connection.
{
	trap - ALRM USR1
	while :; do
		left=$((deadline - $(now_us)))
		# Until the script takes it (a signal just before its `wait` would be missed).
		if [ "$left" -le 0 ]; then while kill -ALRM $$; do sleep 0.2; done; exit 0; fi
		printf -v s '%d.%06d' $((left / 1000000)) $((left % 1000000))
		read -r -t "$s" -u 3 _
		r=$?
		if [ "$r" -ne 0 ] && [ "$r" -le 128 ]; then
			while kill -USR1 $$; do sleep 0.2; done
			exit 0
		fi
	done
} &
w=$!
exec 3<&-

rc=0
while [ -z "$why" ]; do
	wait "$p"
	rc=$?
	[ -n "$why" ] || ! kill -0 "$p" 2>/dev/null && break
done
kill "$w" 2>/dev/null
if [ -n "$why" ]; then
	end_tree
	[ "$why" = limit ] && rc=124
fi
exit "$rc"
