#!/usr/bin/env bash
# t_docker.sh: the Docker client (app/engine/docker*.c, dstream, tar) against the real engine and
# the runner image, through build/docker-smoke (tests/docker/docker_smoke.c): create with
# labels and the hardening, start, inspect, exec with separate streams and a non-zero exit,
# a deadline, archive PUT and GET of a binary file byte for byte, a directory refused,
# remove, and nothing with the run's label left.
#
# Needs no stack: it runs alone (bash tests/integration/t_docker.sh) or under run.sh, and
# reports in lib.sh's format ("ok   t_docker: ..." lines, records in $IT_RESULTS). It talks
# only to the local engine and the one container it creates; every container carrying its
# label is removed on exit, also after a failure or an interrupt. The runner image is built
# when missing (deploy/build-runner-image.sh) and left in place: it is the cache.
set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TEST_NAME=t_docker
SMOKE=$ROOT/${SANDBOXD_BUILD:-build}/docker-smoke
IMAGE=sandboxd-runner:minimal
HOST=${SANDBOXD_DOCKER_HOST:-${DOCKER_HOST:-unix:///var/run/docker.sock}}   # the stack's engine (local.env)
SOCK=${HOST#unix://}
RUN_ID=t_docker-$$-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
LABEL_KEY=sandboxd.test
LABEL="$LABEL_KEY=$RUN_ID"
: "${IT_RESULTS:=/dev/null}"
PASSED=0
FAILED=0
OUT=$(mktemp "${IT_TMP:-${TMPDIR:-/tmp}}/t_docker.XXXXXX")

record() {  # ok|fail NAME [DETAIL]
	if [[ $1 == ok ]]; then
		printf 'ok   %s: %s\n' "$TEST_NAME" "$2"
		PASSED=$((PASSED + 1))
	else
		printf 'FAIL %s: %s\n' "$TEST_NAME" "$2"
		[[ -n ${3-} ]] && printf '       %s\n' "$3"
		FAILED=$((FAILED + 1))
	fi
	printf '%s\t%s\t%s\n' "$1" "$TEST_NAME" "$2" >>"$IT_RESULTS"
}

engine() {  # METHOD PATH: one Engine API request on the socket, body on stdout
	curl -sS -m 30 --unix-socket "$SOCK" -X "$1" "http://localhost/v1.41$2"
}

labelled() {  # ids of every container (running or not) carrying this run's label
	local filters
	filters=$(jq -rn --arg l "$LABEL" '{label: [$l]} | tojson | @uri')
	engine GET "/containers/json?all=1&filters=$filters" | jq -r '.[].Id'
}

cleanup() {
	local id
	trap - EXIT INT TERM
	for id in $(labelled 2>/dev/null); do
		echo "# removing left-over container $id"
		engine DELETE "/containers/$id?force=1&v=1" >/dev/null 2>&1
	done
	rm -f "$OUT"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [[ $HOST != unix://* ]]; then
	record fail "engine reachable" "t_docker.sh drives a unix-socket engine; SANDBOXD_DOCKER_HOST is $HOST"
	exit 1
fi
if ! bash "$ROOT/deploy/ensure-docker.sh" >/dev/null; then
	record fail "engine reachable" "no Docker engine answers on $SOCK and it could not be started"
	exit 1
fi
if ! bash "$ROOT/deploy/build-runner-image.sh" minimal; then
	record fail "runner image $IMAGE" "deploy/build-runner-image.sh failed"
	exit 1
fi
if [[ ! -x $SMOKE ]]; then
	record fail "docker-smoke built" "$SMOKE is missing: make ${SANDBOXD_BUILD:-build}/docker-smoke"
	exit 1
fi

# Each "ok"/"FAIL" line of the program is one check; "time" lines are figures, not checks.
# The program's engine is the one this test checked and built the image on (on a fresh
# machine the host's engine has no runner image: the program's default would fail there).
SANDBOXD_DOCKER_HOST=$HOST timeout -k 5 240 "$SMOKE" "$LABEL" "$IMAGE" >"$OUT" 2>&1
rc=$?
while IFS= read -r line; do
	case $line in
	"ok   "*) record ok "${line#ok   }" ;;
	"FAIL "*) name=${line#FAIL }; record fail "${name%%: *}" "${name#*: }" ;;
	"time "*) echo "# ${line#time }" ;;
	*) echo "# $line" ;;
	esac
done <"$OUT"
if ((rc != 0 && FAILED == 0)); then
	record fail "docker-smoke exit status" "exited $rc with no failed check (crash or timeout?)"
fi
((rc == 0)) && record ok "docker-smoke exited 0"

# Independent of the program's own check: the engine holds nothing with this run's label.
left=$(labelled)
if [[ -z $left ]]; then
	record ok "no container with the run's label is left"
else
	record fail "no container with the run's label is left" "$(tr '\n' ' ' <<<"$left")"
fi

printf '# %s: %s passed, %s failed\n' "$TEST_NAME" "$PASSED" "$FAILED"
((FAILED == 0 && PASSED > 0))
