# detach-kill.sh: ends detached exec $1's process tree with signal $2 (TERM, KILL, INT or
# HUP: the service checks), then SIGKILL to what is left of it 5 s later, as a time limit
# does (tree.sh). It marks the exec killed first, so that a reader that sees it ended also
# sees why. Run detached: the service answers at once. Exit 3: no such exec.
# shellcheck shell=bash disable=SC2034

d=/tmp/.sandboxd/x/$1
p=$(cat "$d/pid" 2>/dev/null) && tree=$(cat "$d/tree" 2>/dev/null) || exit 3
[ -f "$d/rc" ] && exit 0
: >"$d/killed"
signal_tree "$2"
[ "$2" = KILL ] && exit 0
until=$(($(now_us) + 5000000))
while tree_alive && [ "$(now_us)" -lt "$until" ]; do sleep 0.1; done
signal_tree KILL
