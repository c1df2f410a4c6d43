#!/usr/bin/env bash
# run.sh: the integration suites against throwaway local stacks, side by side; stops and
# removes everything it started, and ends with one line, "N passed, N failed".
#
#   bash tests/integration/run.sh                   # every suite, on IT_JOBS stacks (3)
#   bash tests/integration/run.sh t_auth t_repos.sh # these, on one stack (output as it comes)
#   bash tests/integration/run.sh -j 2 t_a t_b      # these, on 2 stacks
#   bash tests/integration/run.sh --matrix          # make test: the three passes below
#
# Shards. Each stack (a "lane") has its own var dir, ports, PostgreSQL cluster, sandboxd,
# nginx, repositories folder and Docker network; the runner images and the sandboxes' own
# engine are shared. A lane runs one suite at a time, taken from its pass's queue as soon as
# it is free (the queue is ordered by the times in tests/integration/schedule, longest
# first, so that the lanes end together). The schedule's class says what a suite may share:
# the stack-disturbing ones ("last": killed workers, PostgreSQL stopped) are taken after all
# others; "egress", "engine", "heavy" and "load" hold host-wide locks (the egress lab's
# route to 169.254.169.254; private engines and bridges; the CPU), so no two of a kind run
# at once, in any pass. One PostgreSQL cluster per lane (initdb takes about a second), not
# one cluster with a database per lane: deploy/local-stack.sh names its database, and
# t_faults_pg and t_database stop and kill the cluster under their stack.
#
# The matrix (make test), on 2 cores and 24 GiB:
#   normal     every suite (or IT_NORMAL_SUITES), on IT_LANES_NORMAL lanes (1)
#   agent-off  IT_AGENT_OFF_SUITES with SANDBOXD_AGENT=0 SANDBOXD_POOL_SIZE=0 (Docker exec
#              only, every create cold), on IT_LANES_AGENT_OFF lanes (1)
#   sanitize   IT_SANITIZE_SUITES on the ASan + UBSan build (build-san), on
#              IT_LANES_SANITIZE lanes (1), once the step that builds it is done
#   steps      make unit; make valgrind (niced); make SANITIZE=1 all build-san/docker-smoke
#              (niced; the sanitize lanes wait for it), then make SANITIZE=1 unit (niced),
#              all beside the normal pass
# The passes run in turn (normal, agent-off, sanitize) unless IT_PASSES_AT_ONCE=1. Measured
# on these 2-core machines: the suites are CPU-bound, so that a suite beside N others takes
# about N + 1 times as long (3 normal lanes, 1 agent-off and 2 sanitize at once: load 12,
# t_holder 836 s instead of 90, t_egress 721 s instead of 40, timing checks failing), and
# side by side gains nothing on 2 cores. On a machine with more cores, raise the lanes and
# set IT_PASSES_AT_ONCE=1.
# The first lane comes up alone (it may build the runner images and make the service's
# user); the others follow. Each suite's output goes to its log; a line per suite says how
# it went and how long it took; the end lists every suite, then each failure with its
# failed checks and its log's last lines, the counts per pass, the skips, and the closing
# "N passed, N failed".
#
# Settings: SANDBOXD_SKIP_DEPS (default 1: do not apt-get), IT_WORKERS (default 4),
# IT_JOBS (lanes without --matrix), IT_KEEP=1 keeps the var dirs (processes are still
# stopped), IT_TEST_TIMEOUT (600 s a suite; 900 with --matrix). SANDBOXD_* settings in the environment reach
# every stack's sandboxd: SANDBOXD_AGENT=0 runs the suites with execs through Docker exec
# only (t_agent then asserts backend docker). Skips are counted apart; under CI=true a skip
# fails the run unless the schedule says the suite may skip.

set -u

IT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$IT_DIR/../.." && pwd)
cd "$ROOT" || exit 2

RUN=''              # the run's folder: lanes' var dirs, logs, queues, locks, results
VAR=''              # a lane's var dir
RESULTS=/dev/null   # a lane's results, once its var dir exists: $VAR/it-results
CLEANED=0
SEED_SKIP=()        # what the first lane's stack-up may skip
STREAM=0            # one lane: its suites' output goes to the terminal as it comes
LANE=''
HELD=()

log() { printf '# %s\n' "$*"; }

pg_ctl_bin() {
	if command -v pg_ctl >/dev/null 2>&1; then
		command -v pg_ctl
	else
		ls /usr/lib/postgresql/*/bin/pg_ctl 2>/dev/null | sort -V | tail -n 1
	fi
}

# pids of processes whose command line names our (unique, mktemp-made) var dir
var_pids() {
	[[ -n $VAR ]] || return 0
	local p
	# (lanes are <pass>-NN: no lane's var dir is a prefix of another's)
	for p in $(pgrep -f -- "$VAR" 2>/dev/null); do
		[[ $p == "$$" || $p == "$BASHPID" ]] && continue
		printf '%s\n' "$p"
	done
}

# A lane's stack, down: local-stack.sh down, then whatever is left of it.
cleanup() {
	((CLEANED)) && return 0
	CLEANED=1
	trap - EXIT INT TERM
	locks_give
	[[ -n $VAR && -d $VAR ]] || return 0
	log "stopping the stack"
	SANDBOXD_VAR=$VAR timeout -k 5 60 bash "$ROOT/deploy/local-stack.sh" down >>"$VAR/stack-down.log" 2>&1 </dev/null ||
		log "local-stack.sh down failed (exit $?); see below"
	# Whatever is left: the master from the pid file, PostgreSQL, anything naming $VAR.
	local pidf=${SANDBOXD_PID_FILE:-$VAR/run/sandboxd/sandboxd.pid} p i
	if [[ -f $pidf ]]; then
		p=$(cat "$pidf" 2>/dev/null)
		if [[ $p =~ ^[0-9]+$ ]] && kill -0 "$p" 2>/dev/null && [[ $(cat "/proc/$p/comm" 2>/dev/null) == sandboxd ]]; then
			log "sandboxd master $p still running: SIGTERM"
			kill -TERM "$p"
			for ((i = 0; i < 100; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
			if kill -0 "$p" 2>/dev/null; then
				log "sandboxd master $p did not stop: SIGKILL to its process group"
				pkill -KILL -P "$p" 2>/dev/null
				kill -KILL "$p" 2>/dev/null
			fi
		fi
	fi
	if [[ -f $VAR/pg/postmaster.pid ]]; then
		p=$(head -n 1 "$VAR/pg/postmaster.pid")
		if [[ $p =~ ^[0-9]+$ ]] && kill -0 "$p" 2>/dev/null; then
			log "PostgreSQL $p still running: pg_ctl stop"
			su postgres -s /bin/sh -c "$(pg_ctl_bin) -D '$VAR/pg' stop -m immediate -w -t 20" >/dev/null 2>&1 </dev/null ||
				kill -QUIT "$p" 2>/dev/null
		fi
	fi
	local left i
	for ((i = 0; i < 50; i++)); do
		left=$(var_pids)
		[[ -z $left ]] && break
		((i == 0)) && log "left over after down: $(tr '\n' ' ' <<<"$left")"
		# shellcheck disable=SC2086
		kill -TERM $left 2>/dev/null
		sleep 0.1
	done
	left=$(var_pids)
	if [[ -n $left ]]; then
		log "killing with SIGKILL: $(tr '\n' ' ' <<<"$left")"
		# shellcheck disable=SC2086
		kill -KILL $left 2>/dev/null
	fi
	# Network namespaces that a killed t_egress left (named after this var dir), with
	# whatever runs in them; their veth pairs go with them.
	local vsum ns
	vsum=$(printf '%s' "$VAR" | cksum | cut -d' ' -f1)
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^sbxit-$vsum-"); do
		log "removing network namespace $ns"
		for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		ip netns del "$ns" 2>/dev/null
	done
	if [[ ${IT_KEEP:-0} == 1 ]]; then
		log "keeping $VAR"
	elif [[ $VAR == */sandboxd-it.* ]]; then
		rm -rf -- "$VAR"
	fi
}

# Children run in the background and are waited for, so that a signal is handled at once
# (bash runs traps only between foreground commands).
CUR_PID=''
run_child() { # CMD…: run in the background, wait, return its status
	"$@" &
	CUR_PID=$!
	wait "$CUR_PID"
	local rc=$?
	CUR_PID=''
	return $rc
}

lane_signal() {
	log "interrupted"
	if [[ -n $CUR_PID ]] && kill -0 "$CUR_PID" 2>/dev/null; then
		kill -TERM "$CUR_PID" 2>/dev/null
		local i
		for ((i = 0; i < 50; i++)); do
			kill -0 "$CUR_PID" 2>/dev/null || break
			sleep 0.1
		done
		# timeout(1) leads its own process group: end the test and all it started
		if kill -0 "$CUR_PID" 2>/dev/null && [[ $(ps -o pgid= -p "$CUR_PID" | tr -d ' ') == "$CUR_PID" ]]; then
			kill -KILL -- "-$CUR_PID" 2>/dev/null
		fi
		wait "$CUR_PID" 2>/dev/null
	fi
	cleanup
	exit 130
}

port_free() {
	! ss -Htan 2>/dev/null | awk '{print $4}' | grep -q -E "[:.]$1\$"
}

# pick_port VAR: a free loopback TCP port that no lane of this run picked, into VAR
pick_port() {
	local p i fd
	exec {fd}>>"$RUN/ports"
	flock "$fd"
	for ((i = 0; i < 200; i++)); do
		p=$((20000 + (SRANDOM % 40000)))
		grep -qx "$p" "$RUN/ports" && continue
		if port_free "$p"; then
			echo "$p" >>"$RUN/ports"
			exec {fd}>&-
			printf -v "$1" '%s' "$p"
			return 0
		fi
	done
	exec {fd}>&-
	echo "no free port found" >&2
	return 1
}

# record_token: the stack's admin token (local.env) counts as minted too; a test may have
# made a new one (t_workers restarts the stack).
record_token() {
	[[ -n ${SANDBOXD_TOKEN:-} ]] && printf '%s\n' "$SANDBOXD_TOKEN" >>"$VAR/it-tokens"
}

# No secret anywhere it should not be: every token the lane minted (recorded by lib.sh in
# $VAR/it-tokens: API responses, sandboxctl's output, each sandbox's token read from its
# container, the admin token) is looked for in the stack's logs (sandboxd, nginx's access
# and error logs, PostgreSQL's) and in every audit_log row. One hit fails the run.
secrets_check() {
	local all=$VAR/it-tokens.all audit=$VAR/it-audit.txt hits=$VAR/it-secret-hits n missed kinds
	grep -E '^[A-Za-z0-9_.-]{20,}$' "$VAR/it-tokens" 2>/dev/null | sort -u >"$all"
	n=$(wc -l <"$all")
	kinds=$(sed -E 's/^(dfy|djt|dst)_.*/\1/; s/^eyJ.*/jwt/' "$all" | sort | uniq -c | awk '{printf "%s%s %s", sep, $1, $2; sep=", "}')
	missed=$(sort -u "$VAR/it-tokens.missed" 2>/dev/null | wc -l)
	((missed > 0)) && log "note: $missed sandbox token(s) could not be read (their container ended first)"
	if ! psql -X -Atq -v ON_ERROR_STOP=1 -c 'SELECT row_to_json(a)::text FROM audit_log a' >"$audit" 2>"$audit.err"; then
		printf 'FAIL run: the audit log could be read for the secret check: %s\n' "$(head -c 300 "$audit.err")"
		printf 'fail\trun\taudit log unreadable for the secret check\n' >>"$RESULTS"
		return 0
	fi
	local logs=("$VAR"/log/*.log)
	: >"$hits"
	if ((n > 0)); then
		grep -HnoF -f "$all" "${logs[@]}" "$audit" >"$hits" 2>/dev/null
	fi
	if [[ -s $hits ]]; then
		printf 'FAIL run: minted tokens appear in logs or the audit log (%s hits):\n' "$(wc -l <"$hits")"
		# file:line: and the token's first characters only
		sed -E 's/^([^:]*):([0-9]+):(.{10}).*/       \1:\2: \3…/' "$hits" | sed "s|$VAR/||" | sort -u | head -n 20
		printf 'fail\trun\tminted tokens in the logs or the audit log\n' >>"$RESULTS"
	elif ((n == 0)); then
		printf 'FAIL run: no minted token was recorded, so none could be looked for\n'
		printf 'fail\trun\tno token recorded for the secret check\n' >>"$RESULTS"
	else
		printf 'ok   run: none of the %s tokens minted (%s) is in %s or %s audit rows\n' \
			"$n" "$kinds" "$(printf '%s ' "${logs[@]##*/}" | sed 's/ $//')" "$(wc -l <"$audit")"
		printf 'ok\trun\tno minted token in the logs or the audit log\n' >>"$RESULTS"
	fi
}

# ---- the schedule, the queues and the locks ------------------------------------------------

declare -A CLASS=() SECS=() MAYSKIP=()
read_schedule() {
	local name cls secs flag
	while read -r name cls secs flag; do
		[[ -z $name || $name == \#* ]] && continue
		CLASS[$name]=$cls
		SECS[$name]=${secs:-30}
		[[ ${flag:-} == may-skip ]] && MAYSKIP[$name]=1
	done <"$IT_DIR/schedule"
}

locks_of() { # CLASS: the host-wide locks a suite of this class holds while it runs
	case $1 in
	egress) echo egress ;;
	engine) echo engine ;;
	heavy) echo cpu ;;
	load) echo cpu engine ;;
	esac
}

# locks_take CLASS: all of its locks (directories in $RUN: mkdir is atomic, and no child
# inherits them, as a daemon a suite starts would an flock's descriptor), or none
locks_take() {
	local l g got=()
	for l in $(locks_of "$1"); do
		if mkdir "$RUN/lock.$l" 2>/dev/null; then
			echo "$LANE" >"$RUN/lock.$l/by"
			got+=("$l")
		else
			for g in "${got[@]}"; do rm -rf -- "$RUN/lock.$g"; done
			return 1
		fi
	done
	HELD=("${got[@]}")
}
locks_give() {
	local l
	for l in "${HELD[@]}"; do rm -rf -- "${RUN:?}/lock.$l"; done
	HELD=()
}

# take PASS: the first suite of the pass's queue whose locks are free, into TAKEN (its locks
# held), waiting while only locked ones are left; 1 when the queue is empty.
take() {
	local q=$RUN/queue.$1 fd name cls n found
	TAKEN=''
	while :; do
		exec {fd}>>"$q.lock"
		flock "$fd"
		if [[ ! -s $q ]]; then
			exec {fd}>&-
			return 1
		fi
		n=0 found=0
		while read -r name cls; do
			n=$((n + 1))
			if locks_take "$cls"; then
				found=$n
				break
			fi
		done <"$q"
		((found)) && sed -i "${found}d" "$q"
		exec {fd}>&-
		if ((found)); then
			TAKEN=$name
			return 0
		fi
		sleep 1
	done
}

# ---- a lane: one stack, suites from its pass's queue until there are none ------------------

pass_env() { # PASS: its settings, exported
	case $1 in
	agent-off) export SANDBOXD_AGENT=0 SANDBOXD_POOL_SIZE=0 ;;
	sanitize) export SANDBOXD_BUILD=build-san ;;
	esac
}

wait_for() { # FILE: until it exists (a gate: the first stack up, a build step done)
	while [[ ! -e $1 ]]; do sleep 1; done
}

# the other lanes wait for the first one's stack: it must say so whatever happens to it
SEED=0
lane_exit() {
	((SEED)) && touch "$RUN/seeded"
	cleanup
}

lane() { # PASS INDEX SEED(0|1) [GATES to wait for: "step-or-pass …"]
	local pass=$1 idx=$2 seed=$3 gate=${4:-} t name before after started rc n_ok n_fail n_skip slog verdict
	LANE=$pass-$(printf '%02d' "$idx")
	SEED=$seed
	trap lane_exit EXIT
	trap lane_signal INT TERM
	((seed)) || wait_for "$RUN/seeded"
	local g
	for g in $gate; do
		# each gate's file (a build there, an earlier pass done); a step's status if it
		# ended without making it
		while [[ ! -e $RUN/gate.$g && ! -e $RUN/step.$g.rc ]]; do sleep 1; done
		if [[ ! -e $RUN/gate.$g ]]; then
			log "$g failed: no stack for $pass"
			echo "$g" >"$RUN/lane.$LANE.nostack"
			return 0
		fi
	done
	VAR=$RUN/$LANE
	mkdir -p "$VAR"
	chmod 755 "$VAR"
	RESULTS=$VAR/it-results
	: >"$RESULTS"
	pass_env "$pass"

	export SANDBOXD_VAR=$VAR
	pick_port SANDBOXD_HTTP_PORT || return 0
	pick_port SANDBOXD_PG_PORT || return 0
	export SANDBOXD_HTTP_PORT SANDBOXD_PG_PORT
	export SANDBOXD_WORKERS=${IT_WORKERS:-4}
	export SANDBOXD_SKIP_DEPS=${SANDBOXD_SKIP_DEPS:-1}
	# Small enough that t_sandbox reaches it; containers stay small too.
	export SANDBOXD_MAX_SANDBOXES=${SANDBOXD_MAX_SANDBOXES:-4} SANDBOXD_SANDBOX_MEMORY_MB=${SANDBOXD_SANDBOX_MEMORY_MB:-512}
	# The reaper looks every second, so that t_reaper sees it act within seconds.
	export SANDBOXD_REAPER_INTERVAL=${SANDBOXD_REAPER_INTERVAL:-1}
	# And measures a disk it cannot leave to the engine every 2 s (t_disk_limit).
	export SANDBOXD_DISK_CHECK_INTERVAL=${SANDBOXD_DISK_CHECK_INTERVAL:-2}
	# And ends a held exec whose holder died after 10 s without its beat (t_holder).
	export SANDBOXD_HELD_STALE=${SANDBOXD_HELD_STALE:-10}
	# 1 MiB files, so that t_sandbox_exec reaches the limit without moving 32 MiB.
	export SANDBOXD_FILE_LIMIT=${SANDBOXD_FILE_LIMIT:-1048576}
	# nginx's rate limit on, generous enough for the tests that hammer the API from
	# 127.0.0.1; t_privilege tightens it for a moment to see the 429.
	export SANDBOXD_RATE_LIMIT=${SANDBOXD_RATE_LIMIT:-100r/s} SANDBOXD_RATE_BURST=${SANDBOXD_RATE_BURST:-400}
	export IT_RESULTS=$RESULTS
	export IT_TMP=$VAR/it-tmp
	mkdir -p "$IT_TMP"
	# PostgreSQL's own psql first: Debian's /usr/bin/psql is a Perl wrapper that costs 80 ms
	# of CPU a call, and the suites call it thousands of times (polls among them).
	local pgbin
	pgbin=$(dirname "$(readlink -f "$(pg_ctl_bin)")" 2>/dev/null)
	[[ -x $pgbin/psql ]] && export PATH=$pgbin:$PATH

	# The first lane builds what is missing (the binaries, the runner images, the service's
	# user); the others find it done.
	local skip=(SANDBOXD_SKIP_BUILD=1 SANDBOXD_SKIP_IMAGE=1)
	((seed)) && skip=("${SEED_SKIP[@]+"${SEED_SKIP[@]}"}")
	log "$LANE: var dir $VAR, http port $SANDBOXD_HTTP_PORT, pg port $SANDBOXD_PG_PORT, $SANDBOXD_WORKERS workers"
	log "$LANE: starting the stack: deploy/local-stack.sh up (log: $VAR/stack-up.log)"
	started=$SECONDS
	run_child env "${skip[@]+"${skip[@]}"}" timeout -k 10 900 bash "$ROOT/deploy/local-stack.sh" up >"$VAR/stack-up.log" 2>&1 </dev/null
	rc=$?
	((seed)) && touch "$RUN/seeded"
	if ((rc != 0)) || [[ ! -f $VAR/local.env ]]; then
		log "$LANE: local-stack.sh up failed (exit $rc); last lines of its output:"
		tail -n 40 "$VAR/stack-up.log" | sed 's/^/#   /'
		printf 'fail\trun\t%s: local-stack.sh up\n' "$LANE" >>"$RESULTS"
		cp "$RESULTS" "$RUN/res/$LANE"
		tail -n 40 "$VAR/stack-up.log" >"$RUN/log/$pass.stack-up.$LANE.log"
		echo "up" >"$RUN/lane.$LANE.nostack"
		return 0
	fi
	log "$LANE: the stack is up after $((SECONDS - started)) s"
	set -a
	# shellcheck disable=SC1091
	. "$VAR/local.env"
	set +a
	export SANDBOXD_VAR=$VAR
	export SANDBOXD_REPOS_DIR=${SANDBOXD_REPOS_DIR:-$VAR/repos}
	# The tests run as root and read repositories that the service may own.
	export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0='*'
	export IT_TOKENS=$VAR/it-tokens
	record_token

	while take "$pass"; do
		name=$TAKEN
		t=$IT_DIR/$name.sh
		slog=$RUN/log/$pass.$name.log
		log "---- $name"
		before=$(grep -c "	$name	" "$RESULTS" || true)
		started=$SECONDS
		if ((STREAM)); then
			run_child timeout -k 10 "${IT_TEST_TIMEOUT:-600}" bash "$t" </dev/null > >(tee "$slog") 2>&1
		else
			run_child timeout -k 10 "${IT_TEST_TIMEOUT:-600}" bash "$t" </dev/null >"$slog" 2>&1
		fi
		rc=$?
		locks_give
		# Each suite's time, so that the schedule can balance the lanes.
		log "$name took $((SECONDS - started)) s"
		after=$(grep -c "	$name	" "$RESULTS" || true)
		{
			if ((rc == 124 || rc == 137)); then
				printf 'FAIL %s: timed out\n' "$name"
				printf 'fail\t%s\ttimed out\n' "$name" >>"$RESULTS"
			elif ((rc != 0 && rc != 1)); then
				printf 'FAIL %s: exited with status %s\n' "$name" "$rc"
				printf 'fail\t%s\texit %s\n' "$name" "$rc" >>"$RESULTS"
			elif ((after == before)); then
				printf 'FAIL %s: no checks ran\n' "$name"
				printf 'fail\t%s\tno checks\n' "$name" >>"$RESULTS"
			elif ((rc == 1)) && ! grep -q "^fail	$name	" "$RESULTS"; then
				printf 'FAIL %s: exited with status 1\n' "$name"
				printf 'fail\t%s\texit 1\n' "$name" >>"$RESULTS"
			fi
		} | tee -a "$slog"
		n_ok=$(grep -c "^ok	$name	" "$RESULTS" || true)
		n_fail=$(grep -c "^fail	$name	" "$RESULTS" || true)
		n_skip=$(grep -c "^skip	$name	" "$RESULTS" || true)
		verdict=ok
		((n_fail > 0)) && verdict=FAIL
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$verdict" "$pass" "$name" "$((SECONDS - started))" \
			"$n_ok" "$n_fail" "$n_skip" "$LANE" >>"$RUN/progress"
		# Env may have changed if a test restarted sandboxd (a new admin token, say).
		if [[ -f $VAR/local.env ]]; then
			set -a
			# shellcheck disable=SC1091
			. "$VAR/local.env"
			set +a
			export SANDBOXD_VAR=$VAR
			record_token
		fi
	done

	log "---- $LANE: secrets: minted tokens in the logs and the audit log"
	secrets_check 2>&1 | tee -a "$RUN/log/$pass.run.$LANE.log"

	# Crashes show in the logs even when every check passed: point at them.
	local f pat
	for f in "$VAR"/log/*.log; do
		[[ -f $f ]] || continue
		pat='AddressSanitizer|UndefinedBehaviorSanitizer|runtime error:|SIGSEGV|SIGABRT|signal (6|7|11)\b|core dumped|assertion'
		if grep -qE "$pat" "$f"; then
			{
				log "crash signs in $LANE/${f#"$VAR"/} (last 10):"
				grep -E "$pat" "$f" | tail -n 10 | cut -c1-300 | sed 's/^/#   /'
				printf 'FAIL run: no crash signs in %s\n' "${f#"$VAR"/}"
			} | tee -a "$RUN/log/$pass.run.$LANE.log"
			printf 'fail\trun\tcrash signs in %s\n' "${f#"$VAR"/}" >>"$RESULTS"
		fi
	done
	cp "$RESULTS" "$RUN/res/$LANE"
	cleanup
}

# ---- steps beside the lanes (make test): each a command, its log and its exit status --------

STEP_PIDS=()
step() { # NAME CMD…: in the background, in a process group of its own
	local name=$1
	shift
	setsid bash -c '"$@" >"$0" 2>&1; echo $? >"$0.rc.part"; mv -f "$0.rc.part" "$0.rc.tmp"' \
		"$RUN/log/step.$name.log" "$@" </dev/null &
	STEP_PIDS+=("$!")
	echo "$name" >>"$RUN/steps"
}
# a step's status file appears once it is whole (lanes wait on it)
steps_settle() {
	local f
	for f in "$RUN"/log/step.*.log.rc.tmp; do
		[[ -f $f ]] || continue
		local name=${f#"$RUN/log/step."}
		name=${name%.log.rc.tmp}
		mv -f "$f" "$RUN/step.$name.rc"
		if [[ $(cat "$RUN/step.$name.rc") == 0 ]]; then
			printf 'ok   step %s (%s s)\n' "$name" "$((SECONDS - STARTED))"
		else
			printf 'FAIL step %s: exit %s (%s s)\n' "$name" "$(cat "$RUN/step.$name.rc")" "$((SECONDS - STARTED))"
		fi
	done
}

# ---- the coordinator ---------------------------------------------------------------------------

LANE_PIDS=()
coord_signal() {
	log "interrupted: stopping the lanes"
	local p
	for p in "${LANE_PIDS[@]+"${LANE_PIDS[@]}"}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${STEP_PIDS[@]+"${STEP_PIDS[@]}"}"; do kill -TERM -- "-$p" 2>/dev/null; done
	wait
	[[ -n $RUN && $RUN == */sandboxd-it.* && ${IT_KEEP:-0} != 1 ]] && rm -rf -- "$RUN"
	exit 130
}

# queue PASS SUITE…: the pass's queue, longest first, the "last" class after all others
queue() {
	local pass=$1 s
	shift
	for s in "$@"; do
		local c=${CLASS[$s]:-shared}
		printf '%d\t%s\t%s\n' "$([[ $c == last ]] && echo 1 || echo 0)" "${SECS[$s]:-30}" "$s $c"
	done | sort -t$'\t' -k1,1n -k2,2nr | cut -f3 >"$RUN/queue.$pass"
	printf '%s\n' "$@" >"$RUN/suites.$pass"
}

print_progress() { # the lines lanes added since the last call
	local total
	total=$(wc -l <"$RUN/progress")
	((total > SEEN)) || return 0
	tail -n +"$((SEEN + 1))" "$RUN/progress" | head -n "$((total - SEEN))" |
		while IFS=$'\t' read -r verdict pass name secs n_ok n_fail n_skip lane; do
			local extra=''
			((n_skip > 0)) && extra=", $n_skip skipped"
			printf '%-4s %s %s: %s passed, %s failed%s; %s took %s s (%s, %s s in)\n' "$verdict" "$pass" "$name" \
				"$n_ok" "$n_fail" "$extra" "$name" "$secs" "$lane" "$((SECONDS - STARTED))"
		done
	SEEN=$total
}

main() {
	local matrix=0 jobs=${IT_JOBS:-} a
	while (($# > 0)); do
		case $1 in
		--matrix) matrix=1 ;;
		-j) jobs=$2; shift ;;
		-j*) jobs=${1#-j} ;;
		*) break ;;
		esac
		shift
	done
	STARTED=$SECONDS
	RUN=$(mktemp -d "${TMPDIR:-/tmp}/sandboxd-it.XXXXXXXX")
	chmod 755 "$RUN"
	mkdir -p "$RUN/log" "$RUN/res"
	: >"$RUN/progress"
	: >"$RUN/ports"
	: >"$RUN/steps"
	trap coord_signal INT TERM
	read_schedule

	local all=() missing=0 t
	for t in "$IT_DIR"/t_*.sh; do
		t=${t##*/}
		all+=("${t%.sh}")
	done
	local passes=() suites=()
	declare -A LANES=() GATE=()
	if ((matrix)); then
		passes=(normal agent-off sanitize)
		# shellcheck disable=SC2086
		if [[ -n ${IT_NORMAL_SUITES:-} ]]; then queue normal $IT_NORMAL_SUITES; else queue normal "${all[@]}"; fi
		# shellcheck disable=SC2086
		queue agent-off ${IT_AGENT_OFF_SUITES:?IT_AGENT_OFF_SUITES: the Makefile sets it}
		# shellcheck disable=SC2086
		queue sanitize ${IT_SANITIZE_SUITES:?IT_SANITIZE_SUITES: the Makefile sets it}
		LANES[normal]=${IT_LANES_NORMAL:-1}
		LANES[agent-off]=${IT_LANES_AGENT_OFF:-1}
		LANES[sanitize]=${IT_LANES_SANITIZE:-1}
		GATE[sanitize]=sanitize-build
		# In turn (the default): a pass's lanes wait until the one before has ended. On
		# 2 cores the suites are CPU-bound (a suite takes about as many times longer as
		# there are stacks beside it), so stacks side by side only add load and timing
		# noise; IT_PASSES_AT_ONCE=1 runs the passes side by side.
		if ((!${IT_PASSES_AT_ONCE:-0})); then
			GATE[agent-off]='pass-normal'
			GATE[sanitize]="pass-agent-off sanitize-build"
		fi
	else
		if (($# > 0)); then
			for a in "$@"; do
				a=${a##*/}
				a=${a%.sh}
				[[ $a == t_* ]] || a="t_$a"
				if [[ ! -f $IT_DIR/$a.sh ]]; then
					echo "no such test: $IT_DIR/$a.sh" >&2
					missing=$((missing + 1))
					continue
				fi
				suites+=("$a")
			done
			jobs=${jobs:-1}
		else
			suites=("${all[@]}")
			jobs=${jobs:-3}
		fi
		passes=(run)
		queue run "${suites[@]+"${suites[@]}"}"
		((jobs > ${#suites[@]})) && jobs=${#suites[@]}
		LANES[run]=$jobs
	fi
	for a in "${passes[@]}"; do
		[[ -s $RUN/queue.$a ]] || LANES[$a]=0
	done
	local nlanes=0
	for a in "${passes[@]}"; do nlanes=$((nlanes + LANES[$a])); done
	((nlanes == 1)) && STREAM=1

	if ((matrix)); then
		# make test built everything before; suites share the CPU: more time each
		SEED_SKIP=(SANDBOXD_SKIP_BUILD=1)
		export IT_TEST_TIMEOUT=${IT_TEST_TIMEOUT:-900}
		log "run folder $RUN; lanes: normal ${LANES[normal]}, agent-off ${LANES[agent-off]}, sanitize ${LANES[sanitize]} (after its build)"
		step unit make --no-print-directory unit
		step valgrind nice -n 10 make --no-print-directory valgrind
		# the sanitize lanes start once the binaries are built; its unit run goes on beside
		# shellcheck disable=SC2016
		step sanitize-build bash -c 'nice -n 5 make --no-print-directory -j"$(nproc)" SANITIZE=1 all build-san/docker-smoke &&
			touch "$0/gate.sanitize-build" && nice -n 5 make --no-print-directory SANITIZE=1 unit' "$RUN"
	else
		log "run folder $RUN; ${LANES[run]} lane(s) for ${#suites[@]} suite(s)"
	fi

	local seed=1 i pass out
	declare -A PASS_PIDS=()
	for pass in "${passes[@]}"; do
		PASS_PIDS[$pass]=''
		for ((i = 1; i <= LANES[$pass]; i++)); do
			out=$RUN/log/lane.$pass-$(printf '%02d' "$i").log
			if ((STREAM)); then
				lane "$pass" "$i" "$seed" "${GATE[$pass]:-}" &
			else
				lane "$pass" "$i" "$seed" "${GATE[$pass]:-}" >"$out" 2>&1 &
			fi
			LANE_PIDS+=("$!")
			PASS_PIDS[$pass]+=" $!"
			seed=0
		done
	done
	((nlanes == 0)) && touch "$RUN/seeded"

	SEEN=0
	local running p
	while :; do
		steps_settle
		((STREAM)) || print_progress
		running=0
		for p in "${LANE_PIDS[@]+"${LANE_PIDS[@]}"}" "${STEP_PIDS[@]+"${STEP_PIDS[@]}"}"; do
			kill -0 "$p" 2>/dev/null && running=1
		done
		# a pass whose lanes have all ended opens its gate (the next pass, in turn)
		for pass in "${passes[@]}"; do
			[[ -e $RUN/gate.pass-$pass ]] && continue
			out=0
			for p in ${PASS_PIDS[$pass]}; do kill -0 "$p" 2>/dev/null && out=1; done
			((out)) || touch "$RUN/gate.pass-$pass"
		done
		((running)) || break
		sleep 2
	done
	wait
	steps_settle
	((STREAM)) || print_progress

	summary "$missing" "${passes[@]}"
}

# ---- the end: by suite, failures with their logs, counts per pass, the closing line ---------

summary() { # MISSING PASS…
	local missing=$1 pass f s name n_ok n_fail n_skip
	shift
	local res=$RUN/all-results
	: >"$res"
	# every check: PASS<TAB>OUTCOME<TAB>SUITE<TAB>NAME
	for f in "$RUN"/res/*; do
		[[ -f $f ]] || continue
		pass=${f##*/}
		pass=${pass%-[0-9][0-9]}
		sed "s/^/$pass	/" "$f" >>"$res"
	done
	for ((f = 0; f < missing; f++)); do printf 'run\tfail\trun\tno such test\n' >>"$res"; done
	# suites of a pass that no lane ran (no stack came up, a build failed)
	for pass in "$@"; do
		while read -r s _; do
			[[ -n $s ]] || continue
			printf '%s\tfail\t%s\tnot run: no stack of this pass\n' "$pass" "$s" >>"$res"
			printf 'FAIL %s %s: not run (no stack of this pass came up)\n' "$pass" "$s"
		done <"$RUN/queue.$pass"
	done
	# steps
	while read -r s; do
		[[ -n $s ]] || continue
		if [[ $(cat "$RUN/step.$s.rc" 2>/dev/null) == 0 ]]; then
			printf 'steps\tok\tstep\t%s\n' "$s" >>"$res"
		else
			printf 'steps\tfail\tstep\t%s\n' "$s" >>"$res"
		fi
	done <"$RUN/steps"
	# a skip that this machine should not need fails a CI run
	if [[ ${CI:-} == true ]]; then
		while IFS=$'\t' read -r pass _ s name; do
			[[ -n ${MAYSKIP[$s]:-} ]] && continue
			printf '%s\tfail\t%s\tskipped under CI=true: %s\n' "$pass" "$s" "$name" >>"$res"
		done < <(awk -F'\t' '$2 == "skip"' "$res")
	fi

	echo
	echo "==== by suite (pass, suite: passed failed skipped, seconds, stack)"
	sort -t$'\t' -k2,2 -k3,3 "$RUN/progress" | while IFS=$'\t' read -r verdict pass name secs n_ok n_fail n_skip lane; do
		printf '%-4s %-9s %-18s %4s %3s %3s %5s s  %s\n' "$verdict" "$pass" "$name" "$n_ok" "$n_fail" "$n_skip" "$secs" "$lane"
	done

	local failed_suites
	failed_suites=$(awk -F'\t' '$2 == "fail" { print $1 "\t" $3 }' "$res" | sort -u)
	if [[ -n $failed_suites ]]; then
		echo
		echo "==== failures"
		while IFS=$'\t' read -r pass s; do
			echo "---- $pass $s"
			awk -F'\t' -v p="$pass" -v s="$s" '$1 == p && $2 == "fail" && $3 == s { print "FAIL " $4 }' "$res" | head -n 30
			local logf=$RUN/log/$pass.$s.log
			[[ $s == run ]] && logf=''
			[[ $s == step ]] && logf=''
			if [[ $s == step ]]; then
				for name in $(awk -F'\t' '$2 == "fail" && $3 == "step" { print $4 }' "$res"); do
					echo "  last lines of $RUN/log/step.$name.log:"
					tail -n 40 "$RUN/log/step.$name.log" 2>/dev/null | sed 's/^/  | /'
				done
			elif [[ $s == run ]]; then
				cat "$RUN/log/$pass".run.*.log "$RUN/log/$pass".stack-up.*.log 2>/dev/null | tail -n 40 | sed 's/^/  | /'
			elif [[ -f $logf ]]; then
				# Each failed check with the lines after it (what it printed of the request
				# and the suite's own diagnostics), then the end: a tail alone loses the
				# first failures of a suite that ran on, and CI keeps only this output.
				echo "  its failed checks, each with what follows it ($logf):"
				grep -A 14 '^FAIL ' "$logf" | head -n 90 | cut -c1-400 | sed 's/^/  | /'
				echo "  its last lines:"
				tail -n 12 "$logf" | sed 's/^/  | /'
			fi
		done <<<"$failed_suites"
	fi

	local skips
	skips=$(awk -F'\t' '$2 == "skip" { print "skip " $1 " " $3 ": " $4 }' "$res")
	echo
	echo "==== counts"
	for pass in "$@" steps; do
		n_ok=$(awk -F'\t' -v p="$pass" '$1 == p && $2 == "ok"' "$res" | wc -l)
		n_fail=$(awk -F'\t' -v p="$pass" '$1 == p && $2 == "fail"' "$res" | wc -l)
		n_skip=$(awk -F'\t' -v p="$pass" '$1 == p && $2 == "skip"' "$res" | wc -l)
		((n_ok + n_fail + n_skip > 0)) || continue
		printf '%s: %s passed, %s failed, %s skipped\n' "$pass" "$n_ok" "$n_fail" "$n_skip"
	done
	[[ -n $skips ]] && printf '%s\n' "$skips"
	printf 'wall time: %s s\n' "$((SECONDS - STARTED))"
	n_ok=$(awk -F'\t' '$2 == "ok"' "$res" | wc -l)
	n_fail=$(awk -F'\t' '$2 == "fail"' "$res" | wc -l)
	n_skip=$(awk -F'\t' '$2 == "skip"' "$res" | wc -l)
	printf '%s skipped\n' "$n_skip"
	# The failed checks' names once more, at the very end: CI shows only the first and the
	# last lines of this output, and the failures block above can fall between them.
	if ((n_fail > 0)); then
		echo "==== failed checks (pass, suite: check)"
		awk -F'\t' '$2 == "fail" { print $1 " " $3 ": " $4 }' "$res" | head -n 12 | cut -c1-200
	fi
	if [[ ${IT_KEEP:-0} == 1 ]]; then
		log "kept: $RUN"
	elif ((n_fail > 0)); then
		log "logs kept in $RUN/log"
		find "$RUN" -mindepth 1 -maxdepth 1 ! -name log -exec rm -rf -- {} + 2>/dev/null
	elif [[ $RUN == */sandboxd-it.* ]]; then
		rm -rf -- "$RUN"
	fi
	# the one result line, last
	echo "$n_ok passed, $n_fail failed"
	((n_fail == 0 && n_ok > 0))
}

# The whole run is one function, parsed before it starts: editing this file while a
# run is going cannot break that run.
main "$@"
exit $?
