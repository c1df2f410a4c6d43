# detach-state.sh: the state of detached execs $1 …: for each one that exists a line "exec
# <id>", then one line each: per stream "name first last size" (chunk numbers, the last
# one's size), "start <ms> <the container's clock, ms>", "rc <code> <end ms>" once it
# ended, and "killed" once a kill was asked for. Exit 3: none of them exists. The service
# parses this with bounds: the files are the sandbox user's to change.
# shellcheck shell=bash

found=
for id in "$@"; do
	cd "/tmp/.sandboxd/x/$id" 2>/dev/null || continue
	found=1
	echo "exec $id"
	for s in out err; do
		f=$(find . -maxdepth 1 -name "$s.*" | sort | head -n 1)
		l=$(find . -maxdepth 1 -name "$s.*" | sort | tail -n 1)
		f=${f#./} l=${l#./}
		if [ -n "$l" ]; then
			echo "$s ${f#"$s".} ${l#"$s".} $(stat -c %s "$l")"
		else
			echo "$s 0 0 0"
		fi
	done
	echo "start $(cat start) $(date +%s%3N)"
	[ -f rc ] && echo "rc $(cat rc) $(cat end)"
	[ -f killed ] && echo killed
done
[ -n "$found" ] || exit 3
exit 0
