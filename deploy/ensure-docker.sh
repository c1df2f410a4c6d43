#!/usr/bin/env bash
# Makes sure a Docker engine answers on /var/run/docker.sock: if /_ping does not say OK,
# starts dockerd in the background and waits up to 60 s for it.
#   usage: ensure-docker.sh [LOG_DIR]     (default: $DOCKERD_LOG_DIR, else /var/log)
# dockerd's output goes to LOG_DIR/dockerd.log. A dockerd started here keeps running
# after this script (and after `local-stack.sh down`): it is shared by everything on the host.
# For tests of this script only: DOCKERD_SOCK, DOCKERD_PIDFILE, DOCKERD_BIN and
# DOCKERD_ARGS (extra flags, word-split) point it at another engine or a stand-in.
set -euo pipefail

SOCK=${DOCKERD_SOCK:-/var/run/docker.sock}
PIDFILE=${DOCKERD_PIDFILE:-/var/run/docker.pid}
DOCKERD=${DOCKERD_BIN:-dockerd}
read -r -a EXTRA_ARGS <<<"${DOCKERD_ARGS:-}"
LOG_DIR=${1:-${DOCKERD_LOG_DIR:-/var/log}}
LOG=$LOG_DIR/dockerd.log
WAIT=${DOCKERD_WAIT_SECONDS:-60}

ping_ok() {
    [ -S "$SOCK" ] && [ "$(curl -s -m 3 --unix-socket "$SOCK" http://d/_ping 2>/dev/null)" = OK ]
}

ping_ok && exit 0

export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin
if ! command -v "$DOCKERD" >/dev/null 2>&1; then
    echo "ensure-docker: dockerd is not installed (run deploy/install-deps.sh)" >&2
    exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "ensure-docker: no Docker engine answers on $SOCK, and only root can start dockerd" >&2
    exit 1
fi

# A dockerd that is still starting up (or one started by systemd a moment ago) is waited
# for, not doubled.
fail() {
    echo "ensure-docker: $*" >&2
    if [ -f "$LOG" ]; then
        echo "--- last lines of $LOG ---" >&2
        tail -n 30 "$LOG" >&2
    fi
    exit 1
}

pid=$(cat "$PIDFILE" 2>/dev/null || true)
if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$(basename "$DOCKERD")" ]; then
    echo "ensure-docker: dockerd (pid $pid) is running but $SOCK does not answer yet; waiting" >&2
else
    mkdir -p "$LOG_DIR"
    echo "ensure-docker: starting dockerd (log: $LOG)" >&2
    setsid nohup "$DOCKERD" "${EXTRA_ARGS[@]}" </dev/null >>"$LOG" 2>&1 &
    pid=$!
fi

deadline=$((SECONDS + WAIT))
while [ "$SECONDS" -lt "$deadline" ]; do
    if ping_ok; then
        echo "ensure-docker: Docker engine is up" >&2
        exit 0
    fi
    kill -0 "$pid" 2>/dev/null || fail "dockerd (pid $pid) exited before it answered"
    sleep 1
done
fail "the Docker engine did not answer on $SOCK within ${WAIT}s"
