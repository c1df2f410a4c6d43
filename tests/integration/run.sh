#!/usr/bin/env bash
# run.sh: start a throwaway local stack, run the integration tests against it,
# stop and remove everything it started, and print "N passed, N failed".
#
#   bash tests/integration/run.sh              # every tests/integration/t_*.sh
#   bash tests/integration/run.sh t_auth t_repos.sh
#
# Settings: SANDBOXD_SKIP_DEPS (default 1: do not apt-get), IT_WORKERS (default 4),
# IT_KEEP=1 keeps the var dir for inspection (processes are still stopped). SANDBOXD_*
# settings in the environment reach the stack's sandboxd: SANDBOXD_AGENT=0 runs the suites
# with execs through Docker exec only (t_agent then asserts backend docker).

set -u

IT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$IT_DIR/../.." && pwd)
cd "$ROOT" || exit 2

VAR=''
RESULTS=/dev/null   # set once the var dir exists: $VAR/it-results
CLEANED=0

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
	for p in $(pgrep -f -- "$VAR" 2>/dev/null); do
		[[ $p == "$$" || $p == "$BASHPID" ]] && continue
		printf '%s\n' "$p"
	done
}

cleanup() {
	((CLEANED)) && return 0
	CLEANED=1
	trap - EXIT INT TERM
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

# Children run in the background and are waited for, so that a signal to run.sh
# is handled at once (bash runs traps only between foreground commands).
CUR_PID=''
run_child() { # CMD…: run in the background, wait, return its status
	"$@" &
	CUR_PID=$!
	wait "$CUR_PID"
	local rc=$?
	CUR_PID=''
	return $rc
}

on_signal() {
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
trap cleanup EXIT
trap on_signal INT TERM

port_free() {
	! ss -Htan 2>/dev/null | awk '{print $4}' | grep -q -E "[:.]$1\$"
}

PICKED=' '
pick_port() { # VAR: a free loopback TCP port not picked before, into VAR
	local p i
	for ((i = 0; i < 200; i++)); do
		p=$((20000 + (SRANDOM % 40000)))
		[[ $PICKED == *" $p "* ]] && continue
		if port_free "$p"; then
			PICKED+="$p "
			printf -v "$1" '%s' "$p"
			return 0
		fi
	done
	echo "no free port found" >&2
	return 1
}

# record_token: the stack's admin token (local.env) counts as minted too; a test may have
# made a new one (t_workers restarts the stack).
record_token() {
	[[ -n ${SANDBOXD_TOKEN:-} ]] && printf '%s\n' "$SANDBOXD_TOKEN" >>"$VAR/it-tokens"
}

# No secret anywhere it should not be: every token the run minted (recorded by lib.sh in
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

count() { # ok|fail: how many checks had that outcome
	grep -c "^$1	" "$RESULTS" 2>/dev/null || true
}

# The whole run is one function, parsed before it starts: editing this file while a
# run is going cannot break that run.
main() {
	# ---- which tests ------------------------------------------------------------

	VAR=$(mktemp -d "${TMPDIR:-/tmp}/sandboxd-it.XXXXXXXX")
	chmod 755 "$VAR"
	RESULTS=$VAR/it-results
	: >"$RESULTS"

	tests=()
	if (($# > 0)); then
		for a in "$@"; do
			a=${a##*/}
			a=${a%.sh}
			[[ $a == t_* ]] || a="t_$a"
			if [[ ! -f $IT_DIR/$a.sh ]]; then
				echo "no such test: $IT_DIR/$a.sh" >&2
				printf 'fail\trun\tno such test %s\n' "$a" >>"$RESULTS"
				continue
			fi
			tests+=("$IT_DIR/$a.sh")
		done
	else
		# The tests that disturb the stack (database restarts, killed workers, signals
		# to the master) run last, so a failure there cannot spoil the others.
		last=(t_faults_exec.sh t_faults_pg.sh t_database.sh t_workers.sh)
		for t in "$IT_DIR"/t_*.sh; do
			[[ " ${last[*]} " == *" ${t##*/} "* ]] && continue
			tests+=("$t")
		done
		for t in "${last[@]/#/$IT_DIR/}"; do
			[[ -f $t ]] && tests+=("$t")
		done
	fi

	# ---- the stack --------------------------------------------------------------

	export SANDBOXD_VAR=$VAR
	if [[ -n ${IT_HTTP_PORT:-} ]]; then SANDBOXD_HTTP_PORT=$IT_HTTP_PORT; else pick_port SANDBOXD_HTTP_PORT; fi
	if [[ -n ${IT_PG_PORT:-} ]]; then SANDBOXD_PG_PORT=$IT_PG_PORT; else pick_port SANDBOXD_PG_PORT; fi
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

	if ((${#tests[@]} > 0)); then
		log "var dir $VAR, http port $SANDBOXD_HTTP_PORT, pg port $SANDBOXD_PG_PORT, $SANDBOXD_WORKERS workers"
		log "starting the stack: deploy/local-stack.sh up (log: $VAR/stack-up.log)"
		run_child timeout -k 10 900 bash "$ROOT/deploy/local-stack.sh" up >"$VAR/stack-up.log" 2>&1 </dev/null
		rc=$?
		if ((rc != 0)); then
			log "local-stack.sh up failed (exit $rc); last lines of its output:"
			tail -n 40 "$VAR/stack-up.log" | sed 's/^/#   /'
			printf 'fail\trun\tlocal-stack.sh up\n' >>"$RESULTS"
			tests=()
		elif [[ ! -f $VAR/local.env ]]; then
			log "local-stack.sh up wrote no $VAR/local.env"
			printf 'fail\trun\tlocal.env\n' >>"$RESULTS"
			tests=()
		else
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
		fi
	fi

	for t in "${tests[@]+"${tests[@]}"}"; do
		name=${t##*/}
		name=${name%.sh}
		log "---- $name"
		before=$(grep -c "	$name	" "$RESULTS" || true)
		started=$SECONDS
		run_child timeout -k 10 "${IT_TEST_TIMEOUT:-600}" bash "$t" </dev/null
		rc=$?
		# Each suite's time, so that the CI's hour can be spent on purpose.
		log "$name took $((SECONDS - started)) s"
		after=$(grep -c "	$name	" "$RESULTS" || true)
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
		# Env may have changed if a test restarted sandboxd (a new admin token, say).
		if [[ -f $VAR/local.env ]]; then
			set -a
			# shellcheck disable=SC1091
			. "$VAR/local.env"
			set +a
			record_token
		fi
	done

	if ((${#tests[@]} > 0)); then
		log "---- secrets: minted tokens in the logs and the audit log"
		secrets_check
	fi

	# Crashes show in the logs even when every check passed: point at them.
	if [[ -n $VAR && -d $VAR ]]; then
		for f in "$VAR"/log/*.log; do
			[[ -f $f ]] || continue
			pat='AddressSanitizer|UndefinedBehaviorSanitizer|runtime error:|SIGSEGV|SIGABRT|signal (6|7|11)\b|core dumped|assertion'
			if grep -qE "$pat" "$f"; then
				log "crash signs in ${f#"$VAR"/} (last 10):"
				grep -E "$pat" "$f" | tail -n 10 | cut -c1-300 | sed 's/^/#   /'
				printf 'FAIL run: no crash signs in %s\n' "${f#"$VAR"/}"
				printf 'fail\trun\tcrash signs in %s\n' "${f#"$VAR"/}" >>"$RESULTS"
			fi
		done
	fi
	passed=$(count ok)
	failed=$(count fail)
	cleanup
	# the one result line, last
	echo "$passed passed, $failed failed"
	((failed == 0 && passed > 0))
}

main "$@"
exit $?
