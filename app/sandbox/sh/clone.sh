# clone.sh: the container's first process: clone, check out, configure, then wait. The
# values come on its input (a cold start: the service writes them there before the start),
# or from a file the service puts in place, before the start or into a warm container that
# waits for it, removed once read (never from the container's environment, which every
# exec would inherit): the git URL
# (http://host:port/owner/name.git, no credential in it), the sandbox's token, the commit, the branch (empty: a detached
# HEAD), the author's name and email, the depth (empty: all history) and the filter (empty
# or blob:none), the agent's key. The agent (bind-mounted read-only
# from the host) starts first, in the background, so that it answers as soon as the
# container runs; its key goes to a file of its own (0400), never to an environment. The outcome goes to $state/clone.state (done or
# failed) and the reason for a failure to $state/clone.log, whose last line the service
# shows as clone.error. Its arguments: the bounds in seconds on the clone (the fetch and
# the checkout, SANDBOXD_CLONE_TIMEOUT) and on `git lfs pull` (SANDBOXD_CLONE_LFS_TIMEOUT):
# a repository's .lfsconfig may point lfs.url at a server that never answers, which would
# hold the clone pending (and the execs that wait for it) for good.
# shellcheck shell=bash

set -u
clone_timeout=${1:-1800}
lfs_timeout=${2:-600}
state=/workspace/.sandboxd
mkdir -p "$state"

agent=/usr/local/lib/sandboxd/sandboxd-agent
start_agent() {
	"$agent" --listen 0.0.0.0:7070 --key "$state/agent.key" --dir "$state/agent" \
		</dev/null >/dev/null 2>"$state/agent.log" &
	echo "$!" >"$state/agent.pid"
}
read_params() {
	read -r url && read -r token && read -r commit && read -r branch && read -r name &&
		read -r email && read -r depth && read -r filter && read -r key
}
# The container's input is a pipe the service writes to before the start: a cold
# container's clone parameters, or a warm one's agent key alone (the line "key", then the
# key). When that write failed, the service put the same as files by the archive API
# instead (the parameters and the marker, or /tmp/.sandboxd/agent.key), found here at once.
# The input is read to its end or not at all, and never again.
if [ ! -e /tmp/.sandboxd/go ] && [ ! -e /tmp/.sandboxd/agent.key ] && [ -p /dev/stdin ]; then
	got=0
	if read -r url; then
		if [ "$url" = key ]; then
			read -r key && got=key
		else
			read -r token && read -r commit && read -r branch && read -r name &&
				read -r email && read -r depth && read -r filter && read -r key && got=params
		fi
	fi
	exec </dev/null
	case $got in
	key) # a warm container's: its agent starts at once, the claim hands over through it
		(umask 0377 && printf '%s' "$key" >"$state/agent.key") && [ -x "$agent" ] && start_agent
		unset key ;;
	0)
		echo 'the sandbox parameters did not arrive whole' >"$state/clone.log"
		echo "failed" >"$state/clone.state"
		exec sleep infinity ;;
	esac
fi
# A warm container's key put as a file (the write to its input failed): the same.
if [ -x "$agent" ] && [ -s /tmp/.sandboxd/agent.key ] &&
	(umask 0377 && cat /tmp/.sandboxd/agent.key >"$state/agent.key"); then
	rm -f /tmp/.sandboxd/agent.key
	start_agent
fi

# A warm container (the pool) starts before anyone asks for it and waits here for the
# marker the service puts after the parameters file (through its agent); a cold one whose
# parameters came as files finds both at once. The wait is read's time-out on a FIFO held
# open both ways: no process is started per look.
if [ "${got:-}" != params ]; then
	if [ ! -e /tmp/.sandboxd/go ]; then
		wait_fifo=$(mktemp -u /tmp/.sandboxd-wait.XXXXXX)
		mkfifo -m 600 "$wait_fifo" && exec 9<>"$wait_fifo" && rm -f "$wait_fifo"
		until [ -e /tmp/.sandboxd/go ]; do
			read -r -t 0.01 -u 9 _ || true
		done
		exec 9<&-
	fi
	rm -f /tmp/.sandboxd/go
	read_params </tmp/.sandboxd/clone
	rm -f /tmp/.sandboxd/clone
fi

# A cold container's agent, or a warm one's that is gone (the parameters then came by the
# archive API; the key is the same).
if ! { [ -s "$state/agent.pid" ] && kill -0 "$(cat "$state/agent.pid")" 2>/dev/null; } &&
	[ -x "$agent" ] && [ -n "$key" ] && rm -f "$state/agent.key" &&
	(umask 0377 && printf '%s' "$key" >"$state/agent.key"); then
	start_agent
fi
unset key

# The token goes into the clone's git configuration as an Authorization header for the
# service's URL only (never for other remotes), and never into a URL or an argument, which
# the host's process list shows while git runs: printf is a builtin, base64 reads it from a
# pipe, and the clone itself gets the header through git's environment, until the config has
# it (two headers would be sent: a blobless checkout fetches contents as it goes).
base=${url%/*/*}/
auth="Authorization: Basic $(printf 'x-access-token:%s' "$token" | base64 -w0)"
unset token
export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0="http.$base.extraHeader" GIT_CONFIG_VALUE_0="$auth"

# A branch is checked out without porcelain, which refuses names git itself accepts in a
# push (-dash, --track=x), and `--` cannot help `checkout -B`: HEAD is pointed at the
# branch (or the commit) by hand, in git's own format, and one reset makes the branch (its
# reflog says so), the index and the files. One git process: each costs milliseconds that
# the first exec waits for.
checkout() {
	if [ -n "$branch" ]; then
		printf 'ref: refs/heads/%s\n' "$branch" >.git/HEAD
	else
		printf '%s\n' "$commit" >.git/HEAD
	fi && git reset -q --hard "$commit"
}

# quoted VAR VALUE: VALUE for git's configuration file, quoted, into VAR (no subshell):
# \ and " escaped (the service has taken newlines out of the name and the email; a ref
# name has none).
quoted() {
	local v=${2//\\/\\\\}
	printf -v "$1" '"%s"' "${v//\"/\\\"}"
}
# has_line TEXT: whether the clone's configuration has that line (read by the shell).
has_line() {
	local l
	while IFS= read -r l; do [ "$l" = "$1" ] && return 0; done <.git/config
	return 1
}
# The clone's configuration, written at once rather than by a git process per key: the
# credential's header for the service's URL only, the branch's upstream (unless git clone
# gave it one already: the remote's default branch; two would make a plain push refuse),
# the author.
configure() {
	local qb qm qn qe up=
	quoted qn "$name" && quoted qe "$email" && quoted qb "$branch" &&
		quoted qm "refs/heads/$branch" || return
	[ -z "$branch" ] || has_line "[branch $qb]" ||
		printf -v up '[branch %s]\n\tremote = origin\n\tmerge = %s\n' "$qb" "$qm"
	{
		printf '[http "%s"]\n\textraHeader = %s\n%s' "$base" "$auth" "$up"
		printf '[user]\n\tname = %s\n\temail = %s\n' "$qn" "$qe"
	} >>.git/config
}

# bounded SECONDS CMD...: CMD, ended (TERM, then KILL 10 s later) past SECONDS, saying so.
bounded() {
	local secs=$1 rc
	shift
	timeout -k 10 "$secs" "$@"
	rc=$?
	[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || echo "$1 $2: no end within ${secs} s" >&2
	return "$rc"
}

# How much to fetch: everything (the default); the last $depth commits of the one commit
# asked for, fetched by its id so that a tag or a commit off every branch tip works too,
# the branch (if any) its only remote-tracking one; or, with the filter, all history and
# file contents only when needed (git fetches them from the promisor remote).
fetch_repo() {
	if [ -n "$depth" ]; then
		git init -q repo && cd repo && git remote add origin "$url" &&
			{ [ -z "$branch" ] ||
				git config remote.origin.fetch "+refs/heads/$branch:refs/remotes/origin/$branch"; } &&
			bounded "$clone_timeout" git fetch -q --depth "$depth" ${filter:+"--filter=$filter"} origin "$commit" &&
			{ [ -z "$branch" ] || git update-ref "refs/remotes/origin/$branch" "$commit"; }
	else
		bounded "$clone_timeout" git clone -q --no-checkout ${filter:+"--filter=$filter"} -- "$url" repo || return
		cd repo || return
	fi
}

# Git LFS objects: not during the checkout (a missing object must not fail the sandbox),
# fetched after it with the clone's credential, and the clone's hooks installed so that a
# push uploads them; a failure is noted in the clone's log, the clone stands.
export GIT_LFS_SKIP_SMUDGE=1
lfs_pull() {
	command -v git-lfs >/dev/null 2>&1 && grep -qs 'filter=lfs' .gitattributes || return 0
	unset GIT_LFS_SKIP_SMUDGE
	git lfs install --local >/dev/null 2>&1
	bounded "$lfs_timeout" git lfs pull 2>>"$state/clone.log" ||
		echo 'Git LFS objects could not all be fetched' >>"$state/clone.log"
}

cd /workspace || exit 1
if fetch_repo 2>"$state/clone.log" && configure &&
	unset GIT_CONFIG_COUNT GIT_CONFIG_KEY_0 GIT_CONFIG_VALUE_0 &&
	checkout 2>>"$state/clone.log"; then
	lfs_pull
	echo "done" >"$state/clone.state"
else
	[ -s "$state/clone.log" ] || echo 'the clone or its checkout failed' >>"$state/clone.log"
	echo "failed" >"$state/clone.state"
fi
unset auth GIT_CONFIG_COUNT GIT_CONFIG_KEY_0 GIT_CONFIG_VALUE_0 GIT_LFS_SKIP_SMUDGE
exec sleep infinity
