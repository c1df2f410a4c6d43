# detach.sh: what a detached exec runs (bash -c, after tree.sh): $1 the exec id, $2 the
# time limit in ms, $3 the command. Output goes through fifos into split's 8 MiB chunks,
# pruned to the newest 8 of each stream while it runs; past the limit the whole tree is
# ended as for an attached exec (exit 124). The exit code is written last (renamed into
# place), so that a reader that sees it also sees all the output. pid and tree name the
# command's process group and mark, for a kill.
# shellcheck shell=bash

exec </dev/null >/dev/null 2>&1
d=/tmp/.sandboxd/x/$1
mkdir -p "$d" && mkfifo "$d/o" "$d/e" || exit 125
date +%s%3N >"$d/start"
prune() {
	local s
	for s in out err; do
		find "$d" -maxdepth 1 -name "$s.*" | sort | head -n -8 | xargs -r rm -f
	done
}
split -b 8388608 -a 4 -d - "$d/out." <"$d/o" &
so=$!
split -b 8388608 -a 4 -d - "$d/err." <"$d/e" &
se=$!
tree=SANDBOXD_TREE=$$.$(now_us)
deadline=$(($(now_us) + $2 * 1000))
set -m
SANDBOXD_TREE=${tree#*=} bash -c "$3" >"$d/o" 2>"$d/e" &
p=$!
set +m
echo "$p" >"$d/pid"
echo "$tree" >"$d/tree"
n=0 rc=
while kill -0 "$p" 2>/dev/null; do
	if [ "$(now_us)" -ge "$deadline" ]; then
		end_tree
		rc=124
		break
	fi
	sleep 0.2
	n=$((n + 1))
	[ $((n % 10)) = 0 ] && prune
done
if [ -z "$rc" ]; then
	wait "$p"
	rc=$?
fi
# Output still held open by a background job is not waited for past 2 s.
(
	sleep 2
	kill "$so" "$se" 2>/dev/null
) &
k=$!
wait "$so" "$se"
kill "$k" 2>/dev/null
prune
date +%s%3N >"$d/end"
echo "$rc" >"$d/rc.t" && mv "$d/rc.t" "$d/rc"
