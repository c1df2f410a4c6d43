# tree.sh: ending an exec's whole process tree (SPEC.md §4 Exec), shared by exec.sh and
# detach.sh (deploy/embed-sh.sh puts it in front of each). The tree is the command's
# process group ($p, made by `set -m`) and every process whose environment carries the
# mark $tree (SANDBOXD_TREE=<unique value>, set on the command): processes that left the
# group or the session (setsid, double forks) keep the environment they were started with.
# shellcheck shell=bash disable=SC2154

now_us() { local t=${EPOCHREALTIME/[.,]/}; echo "$t"; }

# The marked processes' pids (a zombie's environ reads empty: it no longer counts).
marked() {
	local f
	grep -lzxF -- "$tree" /proc/[0-9]*/environ 2>/dev/null | while read -r f; do
		f=${f#/proc/}
		echo "${f%/environ}"
	done
}

signal_tree() { # SIG
	kill -"$1" -- -"$p" 2>/dev/null
	local q
	for q in $(marked); do kill -"$1" "$q" 2>/dev/null; done
}

tree_alive() { kill -0 -- -"$p" 2>/dev/null || [ -n "$(marked)" ]; }

# SIGTERM to the tree, SIGKILL to what is left of it 5 s later (or at once when all of it
# ended), then a moment for the kernel to take the killed processes away.
end_tree() {
	local until
	signal_tree TERM
	until=$(($(now_us) + 5000000))
	while tree_alive && [ "$(now_us)" -lt "$until" ]; do sleep 0.1; done
	signal_tree KILL
	until=$(($(now_us) + 2000000))
	while tree_alive && [ "$(now_us)" -lt "$until" ]; do sleep 0.05; done
}
