# lib_guard.sh: guarded helpers for the integration suites, sourced after lib.sh by those
# that use them. A call that fails (the engine does not answer, psql cannot connect, a
# container that is not there) never reads as "nothing there" or "refused": each helper
# fails then, so a check built on it fails instead of passing whatever happens (issue 31,
# item 7). The process helpers are t_faults_exec.sh's procs/running/not_running.

# box_cid SANDBOX_ID: the full id of the sandbox's container (empty when there is none).
box_cid() { docker ps -q --no-trunc --filter "label=sandboxd.sandbox=$(owner_label_of "$1")"; }

# box_procs CID: "pid args" of every process in the container, as the host sees it (no exec
# into it). Fails when the engine cannot say: a container that is gone or an engine that
# does not answer is not a container where nothing runs.
box_procs() {
	local out
	out=$(docker top "$1" -o pid,args 2>/dev/null) || return 1
	tail -n +2 <<<"$out"
}
# box_running CID REGEX: a process of the container matches (its args).
box_running() { local p; p=$(box_procs "$1") && grep -qE -- "$2" <<<"$p"; }
# box_ended CID REGEX: the engine lists the container's processes and none matches.
box_ended() { local p; p=$(box_procs "$1") && ! grep -qE -- "$2" <<<"$p"; }

# box_root CID SHELL_CMD: SHELL_CMD run as root in the container through the engine (not as
# the sandbox's user, not through the service); fails when it or the engine call does.
box_root() { docker exec -u 0 "$1" sh -c "$2"; }

# engine_out DOCKER_ARGS…: docker's output, failing (docker's error in $_T/engine.err) when
# docker does; `x=$(engine_out volume ls -q …) && [[ -z $x ]]` is "none", not "no answer".
engine_out() { docker "$@" 2>"$_T/engine.err"; }

# refused_saying TEXT ERRFILE CMD…: CMD fails and what it wrote to ERRFILE (CMD's own
# redirection; emptied first, so an earlier call's text cannot count) holds TEXT. A failure
# for another reason (no connection, a typo) says so and does not pass for the refusal.
refused_saying() {
	local want=$1 errf=$2
	shift 2
	: >"$errf"
	if "$@"; then
		printf '       it succeeded\n'
		return 1
	fi
	grep -qF -- "$want" "$errf" && return 0
	printf '       it failed, but said: %s\n' "$(head -c 400 "$errf" | tr '\n' ' ')"
	return 1
}

# audit_mark: the newest audit row's id now; audited_since ACTION STATUS FIELD TEXT [REPO]:
# an audit row after the mark with that action and status whose details->>FIELD is TEXT
# (and, given REPO, of that repository): the refusal happened, for that reason. (At least
# one: git may ask again, with and without its credentials.)
audit_mark() { AUDIT_MARK=$(sql 'select coalesce(max(id), 0) from audit_log'); }
audited_since() {
	local repo=${5:+" and repository = '$5'"} n
	n=$(sql "select count(*) from audit_log where id > ${AUDIT_MARK:-0} and action = '$1'
	  and status = $2 and details->>'$3' = \$q\$$4\$q\$$repo")
	[[ $n =~ ^[1-9][0-9]*$ ]] && return 0
	printf '       %s audit rows %s %s with %s = %s since row %s\n' "${n:-no}" "$1" "$2" "$3" "$4" "${AUDIT_MARK:-0}"
	return 1
}
