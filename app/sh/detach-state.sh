# detach-state.sh: the state of detached exec $1, one line each: per stream "name first last
# size" (chunk numbers, the last one's size), "start <ms> <the container's clock, ms>",
# and "rc <code> <end ms>" once it ended. Exit 3: no such exec. The service parses this
# with bounds: the files are the sandbox user's to change.
# shellcheck shell=bash

cd "/tmp/.sandboxd/x/$1" 2>/dev/null || exit 3
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
exit 0
