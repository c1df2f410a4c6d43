#!/usr/bin/env bash
# The local loopback stack behind `make run` / `make stop`:
#   PostgreSQL 15 (private cluster) + sandboxd (prefork FastCGI) + nginx, all on 127.0.0.1,
#   plus the sandboxes' own Docker engine, with userns-remap (deploy/sandbox-engine.sh:
#   started if it does not answer; never stopped here), so that commands in sandboxes run
#   as a root that is not the host's; when it cannot start, the host's engine (started if
#   none answers) and the fallback user, loudly.
#
#   usage: deploy/local-stack.sh up|down|status
#
# Settings (environment):
#   SANDBOXD_VAR          state, logs, sockets, pids   (default: <repo>/var)
#   SANDBOXD_HTTP_PORT    nginx port on 127.0.0.1       (default: 8080)
#   SANDBOXD_PG_PORT      PostgreSQL port (unix socket in $SANDBOXD_VAR/pgsock only) (54329)
#   SANDBOXD_WORKERS      sandboxd workers              (default: 4)
#   SANDBOXD_SKIP_DEPS=1  do not run deploy/install-deps.sh
#   SANDBOXD_SKIP_BUILD=1 do not run make
#   SANDBOXD_SKIP_IMAGE=1 do not build the runner images (deploy/build-runner-image.sh; never
#                         built for an engine over TCP: the CLI here does not reach it)
#   SANDBOXD_STOP_TIMEOUT seconds `down` lets sandboxd drain before SIGKILL (default: 60)
#   SANDBOXD_USER         the system user sandboxd runs as when this runs as root; made if
#                         missing, in groups docker and www-data (default: sandboxd)
#   SANDBOXD_RATE_LIMIT   nginx's request rate per client address, e.g. 20r/s or 600r/m,
#                         or off (default: off locally; nginx/sandboxd.conf has 20r/s)
#   SANDBOXD_RATE_BURST   requests over the rate served at once before 429s (default: 40)
#   SANDBOXD_GIT_CONN_LIMIT  git requests in progress per client address before nginx answers
#                         429 (limit_conn; default: 32, as nginx/sandboxd.conf)
#   SANDBOXD_SANDBOX_NETWORK  the Docker network of this stack's sandboxes (default:
#                         sandboxd-<instance>, made by `up` and removed by `down`)
#   SANDBOXD_EGRESS       open, or web: sandboxes reach only HTTP, HTTPS and DNS; in both, no
#                         other sandbox and of the host only the git port (deploy/egress.sh;
#                         default: open). A create may ask for a narrower mode: `up` makes
#                         <network>-web (open only) and <network>-none for those
#   SANDBOXD_PREVIEW_DOMAIN  previews are <id>.<this> on the nginx port (default:
#                         preview.localhost, which browsers resolve to loopback)
#   SANDBOXD_OWN_ENGINE   1: sandboxes on the own engine above (default, as root); 0: on the
#                         host's engine, as the fallback user SANDBOXD_SANDBOX_UID. Ignored
#                         when SANDBOXD_DOCKER_HOST names an engine.
#   SANDBOXD_BRIDGE       the Docker bridge whose gateway nginx also listens on, for the
#                         sandboxes' git (default: the own engine's sbxeng0, else docker0);
#                         its address is sandboxd's SANDBOXD_SANDBOX_GIT_ADDR unless that is set
#   SANDBOXD_RELAY_PORT   a relay listener on 127.0.0.1:<port> (nginx/local-relay.conf), and
#                         sandboxd's SANDBOXD_RELAY_URL and SANDBOXD_RELAY_KEY_FILE (keys/relay.key,
#                         made once): this stack is one of several hosts (README "Several
#                         sandboxd hosts"). Default: none
#   SANDBOXD_SHARE_STACK  the var dir of another stack whose PostgreSQL, repositories folder and
#                         keys (signing, secrets, relay) this one uses, as a second host does:
#                         that stack starts and stops its PostgreSQL, this one never does
# Other SANDBOXD_* settings in the environment (SANDBOXD_LOG_LEVEL, SANDBOXD_BODY_LIMIT, …)
# reach sandboxd as they are.
#
# `up` is idempotent: what runs with the same settings is reused, what does not is started;
# sandboxd is restarted when its binary or its settings changed, nginx reloaded when its
# configuration changed. It ends by writing $SANDBOXD_VAR/local.env (URL, an admin token,
# database URL, PG* variables) and printing a curl command that works as printed.
# `down` stops nginx, sandboxd and PostgreSQL and keeps the data.
set -Eeuo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
VAR=$(realpath -m "${SANDBOXD_VAR:-$REPO/var}")
HTTP_PORT=${SANDBOXD_HTTP_PORT:-8080}
PG_PORT=${SANDBOXD_PG_PORT:-54329}
RELAY_PORT=${SANDBOXD_RELAY_PORT:-}
SHARE=${SANDBOXD_SHARE_STACK:+$(realpath -m "$SANDBOXD_SHARE_STACK")}
WORKERS=${SANDBOXD_WORKERS:-4}
STOP_TIMEOUT=${SANDBOXD_STOP_TIMEOUT:-60}
PGBIN=${SANDBOXD_PGBIN:-/usr/lib/postgresql/15/bin}

PGDATA=$VAR/pg
PGSOCK=$VAR/pgsock
LOGDIR=$VAR/log
RUNDIR=$VAR/run
NGXDIR=$VAR/nginx
REPOS=$VAR/repos
ENVFILE=$VAR/local.env
PIDFILE=$RUNDIR/sandboxd/sandboxd.pid
FCGI_SOCK=$RUNDIR/sandboxd/fcgi.sock
GIT_SOCK=$RUNDIR/sandboxd/fcgi-git.sock
SETTINGS_FILE=$RUNDIR/sandboxd.settings
NGX_PID=$RUNDIR/nginx.pid
# What the service's user owns or reads: its run dir (socket, pid file), the repositories,
# its signing key. The binaries are copied out of the build tree so that it need not be
# reachable by that user (and a rebuild does not change a running service under its feet).
SVC_RUNDIR=$RUNDIR/sandboxd
LEGACY_PIDFILE=$RUNDIR/sandboxd.pid
BINDIR=$VAR/bin
KEYDIR=$VAR/keys
KEYFILE=$KEYDIR/signing.pem
SECRETS_KEYFILE=$KEYDIR/secrets.key
# A second host: the other stack's database, repositories and keys (SANDBOXD_SHARE_STACK).
if [ -n "$SHARE" ]; then
    PGSOCK=$SHARE/pgsock
    # Its port as its env file says (PostgreSQL's pid file is gone while it is stopped).
    PG_PORT=$(sed -n 's/^PGPORT=//p' "$SHARE/local.env" 2>/dev/null | tail -n 1)
    PG_PORT=${PG_PORT:-54329}
    REPOS=$SHARE/repos
    KEYDIR=$SHARE/keys
    KEYFILE=$KEYDIR/signing.pem
    SECRETS_KEYFILE=$KEYDIR/secrets.key
fi
RELAY_KEYFILE=$KEYDIR/relay.key
RELAY_URL=${RELAY_PORT:+http://127.0.0.1:$RELAY_PORT}
NGX_CONF=$NGXDIR/nginx.conf
NGX_TEMPLATE=$REPO/nginx/local.conf
# Every container this stack's sandboxd makes carries label sandboxd.instance=$INSTANCE, so
# that `down` removes exactly this stack's containers.
VAR_SUM=$(printf '%s' "$VAR" | cksum | cut -d' ' -f1)
INSTANCE="local-$VAR_SUM"
# The sandboxes' own Docker network, so that deploy/egress.sh can tell their traffic by its
# bridge (named here: at most 15 characters) from every other stack's.
NETWORK=${SANDBOXD_SANDBOX_NETWORK:-sandboxd-$INSTANCE}
BRIDGE=sbx$VAR_SUM
EGRESS=${SANDBOXD_EGRESS:-open}
RATE_LIMIT=${SANDBOXD_RATE_LIMIT:-off}
RATE_BURST=${SANDBOXD_RATE_BURST:-40}
GIT_CONN_LIMIT=${SANDBOXD_GIT_CONN_LIMIT:-32}
PREVIEW_DOMAIN=${SANDBOXD_PREVIEW_DOMAIN:-preview.localhost}
# Raw file transfers' limit (bytes): sandboxd's and nginx's client_max_body_size, the same.
FILE_RAW_MAX=${SANDBOXD_FILE_RAW_LIMIT:-1073741824}
# SANDBOXD_BUILD=build-san runs the ASan + UBSan build (make SANITIZE=1).
BUILD=${SANDBOXD_BUILD:-build}
SANDBOXD_BIN=$REPO/$BUILD/sandboxd
# The agent every sandbox runs, bind-mounted read-only from here (SANDBOXD_AGENT=0: execs
# through Docker exec only).
AGENT_BIN=${SANDBOXD_AGENT_PATH:-$REPO/$BUILD/sandboxd-agent}
SANDBOXCTL_BIN=$REPO/$BUILD/sandboxctl
SANDBOXD_HOOK_BIN=$REPO/$BUILD/sandboxd-hook
URL=http://127.0.0.1:$HTTP_PORT
# Two roles, as in production: sandboxd_owner owns the schema and runs the migrations;
# sandboxd (the service, SANDBOXD_DATABASE_URL) only gets the privileges granted after each
# migration, and the audit log is append-only for it (SPEC.md §7).
DB_URL="postgresql:///sandboxd?host=$PGSOCK&port=$PG_PORT&user=sandboxd"
OWNER_DB_URL="postgresql:///sandboxd?host=$PGSOCK&port=$PG_PORT&user=sandboxd_owner"

if [ "$(id -u)" -eq 0 ]; then
    IS_ROOT=1
    PG_OWNER=postgres
    SOCKET_GROUP=www-data
    NGX_USER_LINE='user www-data www-data;'
    # sandboxd never runs as root: its own user, in group docker for the Engine API socket
    # and www-data so that it may hand its FastCGI socket to nginx's group.
    SVC_USER=${SANDBOXD_USER:-sandboxd}
else
    # Best effort without root: everything runs as the caller, so no group is needed.
    IS_ROOT=0
    PG_OWNER=$(id -un)
    SOCKET_GROUP=
    NGX_USER_LINE='# not started as root: workers run as the invoking user'
    SVC_USER=$(id -un)
fi

say() { printf 'local-stack: %s\n' "$*" >&2; }

# --- the sandboxes' engine -----------------------------------------------------------------
# ENGINE_FILE records the engine `up` chose (its Docker host), for `down` and `status`.
ENGINE_FILE=$VAR/run/engine
HOST_ENGINE=unix:///var/run/docker.sock
OWN_ENGINE=${SANDBOXD_OWN_ENGINE:-1}
[ "$(id -u)" -eq 0 ] || OWN_ENGINE=0
# engine_use HOST: the docker CLI here (and in the scripts this calls) talks to HOST.
engine_use() {
    ENGINE=$1
    ENGINE_SOCK=${ENGINE#unix://}
    export DOCKER_HOST=$ENGINE
}
engine_use "$(cat "$ENGINE_FILE" 2>/dev/null || echo "$HOST_ENGINE")"
# An engine the settings name: the CLI reaches it when it is a local socket; over TCP (with
# TLS: a test's own engine) the CLI keeps the host's socket and builds no image (it would
# land in the wrong engine).
case ${SANDBOXD_DOCKER_HOST:-} in
    '') ;;
    unix://*) engine_use "$SANDBOXD_DOCKER_HOST" ;;
    *) engine_use "$HOST_ENGINE" ;;
esac
own_engine() { [ "$ENGINE" = "$(bash "$REPO/deploy/sandbox-engine.sh" host)" ]; }

# The own engine (sandbox-engine.sh up), else the host's; sandboxd then reaches it by
# SANDBOXD_DOCKER_HOST and nginx listens on its bridge.
engine_up() {
    if [ -n "${SANDBOXD_DOCKER_HOST:-}" ]; then
        [ "$ENGINE" != "$HOST_ENGINE" ] || bash "$REPO/deploy/ensure-docker.sh" 9>&-
        return 0
    fi
    if [ "$OWN_ENGINE" = 1 ]; then
        local t0=$SECONDS
        if bash "$REPO/deploy/sandbox-engine.sh" up 9>&-; then
            engine_use "$(bash "$REPO/deploy/sandbox-engine.sh" host)"
            export SANDBOXD_DOCKER_HOST=$ENGINE SANDBOXD_BRIDGE=${SANDBOXD_BRIDGE:-sbxeng0}
            say "sandboxes run on the own engine $ENGINE (userns-remap: root inside, an unprivileged uid outside; $((SECONDS - t0)) s)"
            echo "$ENGINE" >"$ENGINE_FILE"
            return 0
        fi
        say "WARNING: the sandboxes' own engine (userns-remap) did not start: falling back to the"
        say "WARNING: host's engine, where commands in sandboxes run as uid ${SANDBOXD_SANDBOX_UID:-61000}, not root"
    fi
    engine_use "$HOST_ENGINE"
    echo "$ENGINE" >"$ENGINE_FILE"
    bash "$REPO/deploy/ensure-docker.sh" 9>&-
}

engine_answers() { curl -s --max-time 2 --unix-socket "$ENGINE_SOCK" http://d/_ping >/dev/null 2>&1; }
die() { say "error: $*"; exit 1; }

# show_log FILE [LINES]: the tail of a log, for error messages.
show_log() {
    if [ -s "$1" ]; then
        printf -- '--- last lines of %s ---\n' "$1" >&2
        tail -n "${2:-25}" "$1" >&2
        printf -- '---\n' >&2
    fi
}

# as_pg CMD…: run a PostgreSQL server tool (they refuse root) as the cluster's owner.
as_pg() {
    if [ "$IS_ROOT" = 1 ]; then
        (cd / && runuser -u postgres -- "$@" 9>&-)
    else
        (cd / && "$@" 9>&-)
    fi
}

# pid_of PIDFILE COMM: prints the pid when that process runs and is COMM (a pid file
# left by a crash may name a pid that now belongs to something else).
pid_of() {
    local pid
    pid=$(head -n 1 "$1" 2>/dev/null | tr -cd '0-9') || true
    [ -n "$pid" ] || return 1
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] || return 1
    echo "$pid"
}

# wait_gone PID SECONDS: 0 when the process has ended within the time.
wait_gone() {
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.1
    done
    ! kill -0 "$1" 2>/dev/null
}

check_settings() {
    [[ $VAR =~ ^/[A-Za-z0-9._/-]+$ ]] ||
        die "SANDBOXD_VAR=$VAR: use a path of letters, digits and . _ - / only"
    local name value
    for name in HTTP_PORT PG_PORT RELAY_PORT; do
        value=${!name}
        [ "$name" != RELAY_PORT ] || [ -n "$value" ] || continue
        if ! [[ $value =~ ^[0-9]+$ ]] || [ "$value" -lt 1 ] || [ "$value" -gt 65535 ]; then
            die "SANDBOXD_$name=$value is not a port number"
        fi
    done
    if ! [[ $WORKERS =~ ^[0-9]+$ ]] || [ "$WORKERS" -lt 1 ]; then
        die "SANDBOXD_WORKERS=$WORKERS is not a positive number"
    fi
    [[ $STOP_TIMEOUT =~ ^[0-9]+$ ]] || die "SANDBOXD_STOP_TIMEOUT=$STOP_TIMEOUT is not a number of seconds"
    [[ $SVC_USER =~ ^[a-z_][a-z0-9_-]{0,31}$ ]] || die "SANDBOXD_USER=$SVC_USER is not a user name"
    [[ $NETWORK =~ ^[A-Za-z0-9][A-Za-z0-9_.-]*$ ]] && [ "$NETWORK" != host ] && [ "$NETWORK" != none ] ||
        die "SANDBOXD_SANDBOX_NETWORK=$NETWORK does not name a Docker network (not host or none)"
    case $EGRESS in open | web) ;; *) die "SANDBOXD_EGRESS=$EGRESS: use open or web" ;; esac
    [[ $RATE_LIMIT =~ ^(off|[1-9][0-9]*r/[sm])$ ]] ||
        die "SANDBOXD_RATE_LIMIT=$RATE_LIMIT: use off or a rate like 20r/s or 600r/m"
    [[ $RATE_BURST =~ ^[0-9]+$ ]] || die "SANDBOXD_RATE_BURST=$RATE_BURST is not a number"
    [[ $GIT_CONN_LIMIT =~ ^[1-9][0-9]*$ ]] || die "SANDBOXD_GIT_CONN_LIMIT=$GIT_CONN_LIMIT is not a positive number"
    [[ $PREVIEW_DOMAIN =~ ^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$ ]] ||
        die "SANDBOXD_PREVIEW_DOMAIN=$PREVIEW_DOMAIN is not a DNS name"
    if [ -n "$SHARE" ]; then
        [ "$SHARE" != "$VAR" ] || die "SANDBOXD_SHARE_STACK names this stack's own var dir"
        [ -f "$SHARE/local.env" ] || die "SANDBOXD_SHARE_STACK=$SHARE: no stack there (no local.env)"
    fi
    # sun_path holds 108 bytes; PostgreSQL's socket has the longest name.
    [ ${#PGSOCK} -le 88 ] || die "SANDBOXD_VAR=$VAR is too long for unix socket paths (keep it under 80 characters)"
}

# postgres and nginx's workers (www-data) must reach into $VAR: every parent directory
# needs the search (x) bit for others. Only that bit is added, and only where missing.
make_traversable() {
    [ "$IS_ROOT" = 1 ] || return 0
    local d=$1
    while [ "$d" != / ]; do
        if [ -z "$(find "$d" -maxdepth 0 -perm -o=x 2>/dev/null)" ]; then
            say "adding o+x to $d so that postgres and www-data can reach $VAR"
            chmod o+x "$d"
        fi
        d=$(dirname "$d")
    done
}

# --- the service's user ------------------------------------------------------------------

# The system user sandboxd runs as (root only): made when missing, added to docker and
# www-data when not yet in them. Stacks of other var dirs may do this at the same time:
# one lock for the whole host, and a user made meanwhile by another counts as made.
ensure_service_user() {
    [ "$IS_ROOT" = 1 ] || return 0
    (
        flock -w 120 8 || die "could not take /run/lock/sandboxd-local-stack.user.lock"
        if ! id -u "$SVC_USER" >/dev/null 2>&1; then
            say "creating the system user $SVC_USER"
            useradd --system --user-group --home-dir /nonexistent --no-create-home \
                --shell /usr/sbin/nologin --comment "sandboxd service" "$SVC_USER" ||
                id -u "$SVC_USER" >/dev/null 2>&1 || die "useradd $SVC_USER failed"
        fi
        local g
        for g in docker www-data; do
            getent group "$g" >/dev/null || die "group $g does not exist (is docker.io installed?)"
            if ! id -nG "$SVC_USER" | tr ' ' '\n' | grep -qx "$g"; then
                say "adding $SVC_USER to group $g"
                usermod -a -G "$g" "$SVC_USER" || die "usermod -a -G $g $SVC_USER failed"
            fi
        done
    ) 8>/run/lock/sandboxd-local-stack.user.lock
}

# What the service writes or reads is its own; nothing else of the var dir is.
service_dirs() {
    local group
    group=$(id -gn "$SVC_USER")
    install -d -m 0755 -o "$SVC_USER" -g "$group" "$SVC_RUNDIR"
    install -d -m 0750 -o "$SVC_USER" -g "$group" "$REPOS"
    install -d -m 0700 -o "$SVC_USER" -g "$group" "$KEYDIR"
    # Repositories made before the stack ran as this user (or by root by hand).
    if [ -n "$(find "$REPOS" \( ! -user "$SVC_USER" -o ! -group "$group" \) -print -quit)" ]; then
        say "giving $REPOS to $SVC_USER"
        find "$REPOS" \( ! -user "$SVC_USER" -o ! -group "$group" \) -exec chown -h "$SVC_USER:$group" {} +
    fi
    # The git-URL signing key: made once, readable by the service's user only (sandboxd
    # refuses to start otherwise).
    if [ ! -s "$KEYFILE" ]; then
        say "making the signing key $KEYFILE"
        rm -f "$KEYFILE.new"
        "$SANDBOXCTL_BIN" key generate --out "$KEYFILE.new" >/dev/null || die "sandboxctl key generate failed"
        chown "$SVC_USER:$group" "$KEYFILE.new"
        mv "$KEYFILE.new" "$KEYFILE"
    fi
    chown "$SVC_USER:$group" "$KEYFILE"
    chmod 0600 "$KEYFILE"
    # The sandbox secrets' key (SPEC §4 "Secrets"): 32 random bytes in hex, made once; lose
    # it and the stored secrets no longer open.
    if [ ! -s "$SECRETS_KEYFILE" ]; then
        say "making the sandbox secrets' key $SECRETS_KEYFILE"
        (umask 077 && openssl rand -hex 32 >"$SECRETS_KEYFILE.new") || die "openssl rand failed"
        mv "$SECRETS_KEYFILE.new" "$SECRETS_KEYFILE"
    fi
    chown "$SVC_USER:$group" "$SECRETS_KEYFILE"
    chmod 0600 "$SECRETS_KEYFILE"
    # The hosts' relay key (SANDBOXD_RELAY_KEY_FILE), made once and shared by the stacks that
    # share this one's keys (SANDBOXD_SHARE_STACK), as the hosts of a deployment share it.
    [ -n "$RELAY_PORT" ] || return 0
    if [ ! -s "$RELAY_KEYFILE" ]; then
        say "making the relay key $RELAY_KEYFILE"
        (umask 077 && openssl rand -hex 32 >"$RELAY_KEYFILE.new") || die "openssl rand failed"
        mv "$RELAY_KEYFILE.new" "$RELAY_KEYFILE"
    fi
    chown "$SVC_USER:$group" "$RELAY_KEYFILE"
    chmod 0600 "$RELAY_KEYFILE"
}

# The binaries the service runs, copied out of the build tree (root's, 0755). A copy is
# renamed into place, so that a running process never sees a half-written file.
install_bin() { # SRC DST
    install -m 0755 "$1" "$2.new" && mv -f "$2.new" "$2"
}

# --- the sandboxes' network ---------------------------------------------------------------

# Made with the stack's instance label; one that lacks it is someone else's (an operator's
# SANDBOXD_SANDBOX_NETWORK) and is used as it is, never removed.
# Ours are made without inter-container traffic (enable_icc=false: sandboxes never reach
# each other, SPEC.md §4; deploy/egress.sh refuses it too, whatever the network); one of
# ours made before that is made again when no container uses it.
# One network per egress mode a create may ask for (SPEC.md §4 "Limits"): the stack's for
# the deployment's mode, <network>-web (open deployments) and <network>-none for narrower
# ones, each with a bridge of its own for deploy/egress.sh's rules: "NAME BRIDGE MODE" a
# line, the names sandboxd gives them (config_egress_network).
stack_networks() {
    echo "$NETWORK $BRIDGE $EGRESS"
    [ "$EGRESS" = open ] && echo "$NETWORK-web ${BRIDGE}w web"
    echo "$NETWORK-none ${BRIDGE}n none"
}
# Every network this stack may have made, whatever the mode it runs in now.
stack_networks_all() { printf '%s\n' "$NETWORK $BRIDGE open" "$NETWORK-web ${BRIDGE}w web" "$NETWORK-none ${BRIDGE}n none"; }

network_up() {
    local net br mode
    while read -r net br mode; do
        network_make "$net" "$br"
        # none forwards nothing: no forwarding or masquerading for its bridge.
        if network_ours "$net" && [ "$mode" != none ]; then forward apply "$net" "$br"; fi
    done < <(stack_networks)
}

network_make() { # NAME BRIDGE
    local net=$1 br=$2
    if docker network inspect "$net" >/dev/null 2>&1; then
        if network_ours "$net" && [ "$(docker network inspect -f '{{index .Options "com.docker.network.bridge.enable_icc"}}' "$net")" != false ]; then
            if [ "$(docker network inspect -f '{{len .Containers}}' "$net")" = 0 ]; then
                say "Docker network $net lets sandboxes reach each other: making it again"
                docker network rm "$net" >/dev/null || die "docker network rm $net failed"
            else
                say "warning: Docker network $net allows traffic between containers; deploy/egress.sh refuses it"
                return 0
            fi
        else
            return 0
        fi
    fi
    say "creating Docker network $net (bridge $br)"
    docker network create --driver bridge --label "sandboxd.instance=$INSTANCE" \
        -o "com.docker.network.bridge.name=$br" \
        -o com.docker.network.bridge.enable_icc=false "$net" >/dev/null ||
        docker network inspect "$net" >/dev/null 2>&1 ||
        die "docker network create $net failed"
}

# On the own engine (no iptables of its own): forwarding and masquerading for a network's
# bridge, as Docker would add them (deploy/egress.sh narrows them, before).
forward() { # apply|remove NAME BRIDGE
    own_engine || return 0
    [ "$IS_ROOT" = 1 ] || return 0
    local net
    net=$(docker network inspect -f '{{range .IPAM.Config}}{{.Subnet}} {{end}}' "$2" 2>/dev/null | awk '{print $1}')
    [ -n "$net" ] || return 0
    bash "$REPO/deploy/sandbox-engine.sh" forward "$1" "$3" "$net" 9>&-
}

network_ours() { # NAME
    [ "$(docker network inspect -f '{{index .Labels "sandboxd.instance"}}' "$1" 2>/dev/null)" = "$INSTANCE" ]
}

network_down() {
    local net br mode
    engine_answers || return 0
    while read -r net br mode; do
        if network_ours "$net"; then
            forward remove "$net" "$br"
            say "removing Docker network $net"
            docker network rm "$net" >/dev/null 2>&1 || say "warning: could not remove network $net"
        fi
    done < <(stack_networks_all)
}

# egress.sh with this stack's settings (its engine too: a stack on an engine of its own
# confines that engine's bridge, never the host's docker0).
egress() { # apply|remove
    if [ "$IS_ROOT" != 1 ]; then
        [ "$EGRESS" = open ] || die "SANDBOXD_EGRESS=web needs root (iptables)"
        say "warning: not root: no egress rules (iptables); sandboxes are not kept from each other"
        return 0
    fi
    # On the own engine its CLI host (DOCKER_HOST) is enough: the chains are then named by
    # the network alone, as on the host's engine (each stack's network has its own name).
    local unset_engine=()
    ! own_engine || unset_engine=(-u SANDBOXD_DOCKER_HOST)
    env "${unset_engine[@]}" SANDBOXD_EGRESS=$EGRESS SANDBOXD_SANDBOX_NETWORK=$NETWORK \
        SANDBOXD_SANDBOX_GIT_URL="http://sandboxd.internal:$HTTP_PORT" \
        SANDBOXD_SANDBOX_GIT_ADDR="$(git_addr)" \
        bash "$REPO/deploy/egress.sh" "$1" 9>&-
}

# --- PostgreSQL -------------------------------------------------------------------------

pg_running() { [ -f "$PGDATA/PG_VERSION" ] && as_pg "$PGBIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; }

# psql as the cluster's superuser; psql_admin in database postgres.
psql_su() {
    "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$PGSOCK" -p "$PG_PORT" -U postgres "$@"
}
psql_admin() { psql_su -d postgres "$@"; }

pg_up() {
    if [ ! -f "$PGDATA/PG_VERSION" ]; then
        if [ -d "$PGDATA" ] && [ -n "$(ls -A "$PGDATA")" ]; then
            die "$PGDATA is not empty but holds no PostgreSQL cluster; move it away"
        fi
        say "creating a PostgreSQL cluster in $PGDATA"
        install -d -m 0700 -o "$PG_OWNER" "$PGDATA"
        # Trust for local socket connections only: this cluster listens on no TCP port and
        # its socket directory is private to this stack.
        if ! as_pg "$PGBIN/initdb" -D "$PGDATA" -U postgres -E UTF8 --no-locale \
            --auth-local=trust --auth-host=reject >"$LOGDIR/initdb.log" 2>&1; then
            show_log "$LOGDIR/initdb.log"
            die "initdb failed"
        fi
    fi
    chown "$PG_OWNER" "$PGDATA"
    chmod 0700 "$PGDATA"
    install -d -m 0755 -o "$PG_OWNER" "$PGSOCK"
    touch "$LOGDIR/postgres.log"
    chown "$PG_OWNER" "$LOGDIR/postgres.log"

    if pg_running; then
        # postmaster.pid: line 4 is the port, line 5 the socket directory.
        local port sockdir
        port=$(sed -n 4p "$PGDATA/postmaster.pid")
        sockdir=$(sed -n 5p "$PGDATA/postmaster.pid")
        if [ "$port" = "$PG_PORT" ] && [ "$sockdir" = "$PGSOCK" ]; then
            say "PostgreSQL is running (port $PG_PORT)"
            return 0
        fi
        say "PostgreSQL runs with port $port, socket dir $sockdir: restarting it with port $PG_PORT"
        as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -m fast -w -t 60 stop >/dev/null
    fi

    say "starting PostgreSQL (port $PG_PORT, socket dir $PGSOCK)"
    if ! as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -l "$LOGDIR/postgres.log" -w -t 60 \
        -o "-c port=$PG_PORT -c listen_addresses='' -c unix_socket_directories='$PGSOCK'" \
        start >/dev/null 2>"$LOGDIR/pg_ctl.err"; then
        cat "$LOGDIR/pg_ctl.err" >&2
        show_log "$LOGDIR/postgres.log"
        die "PostgreSQL did not start (see above)"
    fi
}

db_setup() {
    local role
    for role in sandboxd_owner sandboxd; do
        if [ "$(psql_admin -tAc "SELECT 1 FROM pg_roles WHERE rolname = '$role'")" != 1 ]; then
            say "creating role $role"
            psql_admin -c "CREATE ROLE $role LOGIN"
        fi
    done
    # The group roles of sql/003_audit.sql, made here by the superuser so that the owner
    # needs no CREATEROLE (PostgreSQL 15's CREATEROLE can grant itself almost anything);
    # the owner may hand them out (GRANT sandboxd_auditor TO alice).
    for role in sandboxd_service sandboxd_auditor; do
        if [ "$(psql_admin -tAc "SELECT 1 FROM pg_roles WHERE rolname = '$role'")" != 1 ]; then
            say "creating group role $role"
            psql_admin -c "CREATE ROLE $role NOLOGIN" -c "GRANT $role TO sandboxd_owner WITH ADMIN OPTION"
        fi
    done
    # The owner doubles as the local DBA: let it see every session in pg_stat_activity.
    if [ "$(psql_admin -tAc "SELECT pg_has_role('sandboxd_owner', 'pg_read_all_stats', 'MEMBER')")" != t ]; then
        psql_admin -c "GRANT pg_read_all_stats TO sandboxd_owner"
    fi
    if [ "$(psql_admin -tAc "SELECT 1 FROM pg_database WHERE datname = 'sandboxd'")" != 1 ]; then
        say "creating database sandboxd"
        psql_admin -c "CREATE DATABASE sandboxd OWNER sandboxd_owner"
    elif [ "$(psql_admin -tAc "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'sandboxd'")" != sandboxd_owner ]; then
        # A var dir made when the service role owned everything: hand it all to the owner.
        say "moving the ownership of database sandboxd to sandboxd_owner"
        psql_admin -c "ALTER DATABASE sandboxd OWNER TO sandboxd_owner"
        psql_su -d sandboxd -c "REASSIGN OWNED BY sandboxd TO sandboxd_owner"
    fi
}

# The service's privileges (idempotent, after every migration): the migrations grant what
# the service may do to the group role sandboxd_service (every table and sequence, but only
# INSERT and SELECT on the audit log, SPEC.md §7); the service's login role gets that group
# and nothing directly (grants from before sql/003_audit.sql are taken back).
# Keep in step with the production roles in deploy/sandboxd.env.example.
db_grants() {
    "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d "$OWNER_DB_URL" <<'SQL'
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM sandboxd;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM sandboxd;
GRANT sandboxd_service TO sandboxd;
SQL
}

pg_down() {
    if pg_running; then
        say "stopping PostgreSQL"
        as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -m fast -w -t 60 stop >/dev/null
    else
        say "PostgreSQL is not running"
    fi
}

# --- sandboxd ---------------------------------------------------------------------------

ctl() {
    SANDBOXD_DATABASE_URL=$DB_URL SANDBOXD_REPOS_DIR=$REPOS "$SANDBOXCTL_BIN" "$@"
}

# What the running sandboxd was started with; a change means a restart.
sandboxd_settings() {
    printf 'bin=%s\nagent=%s %s\n' "$(stat -c '%d:%i:%Y:%s' "$SANDBOXD_BIN")" "$AGENT_BIN" \
        "$(stat -c '%d:%i:%Y:%s' "$AGENT_BIN" 2>/dev/null)"
    printf 'db=%s\nsocket=%s\ngroup=%s\nworkers=%s\nrepos=%s\nurl=%s\n' \
        "$DB_URL" "$FCGI_SOCK" "$SOCKET_GROUP" "$WORKERS" "$REPOS" "$URL"
    printf 'user=%s\nnetwork=%s\nkey=%s\ngitaddr=%s\n' "$SVC_USER" "$NETWORK" "$KEYFILE" "$(git_addr)"
    printf 'preview=%s\nengine=%s\negress=%s\n' "$PREVIEW_DOMAIN" "$ENGINE" "$EGRESS"
    printf 'relay=%s\nshare=%s\n' "$RELAY_URL" "$SHARE"
    env | grep -E '^SANDBOXD_(LOG_LEVEL|BODY_LIMIT|DOCKER_[A-Z]*|SANDBOX_[A-Z_]*|IMAGES|IMAGE_PULL|GIT_WORKERS|GIT_SOCKET|GIT_BODY_[A-Z_]*|GIT_PUSHES_PER_ACCOUNT|GIT_TIMEOUT|AGENT|IDLE_TIMEOUT|MAX_LIFETIME|EPHEMERAL_TTL|START_TIMEOUT|MAX_SANDBOXES|FILE_LIMIT|FILE_RAW_LIMIT|POOL_SIZE|METRICS_ALLOW|HOLDER|HOLDER_PARKED|EXECS_PER_[A-Z]*|PARKED_PER_[A-Z]*|PARK_MEMORY|CLONE_TIMEOUT|CLONE_LFS_TIMEOUT|FAULT_HANDOVER|DISK_CHECK_INTERVAL|HELD_STALE|ENGINE_[A-Z_]*|LFS_[A-Z_]*)=' |
        grep -vE '^SANDBOXD_SANDBOX_(NETWORK|GIT_URL|GIT_ADDR)=|=$' | sort || true
}

sandboxd_up() {
    local pid
    # A sandboxd started before the service got its own run dir.
    if pid_of "$LEGACY_PIDFILE" sandboxd >/dev/null; then
        say "sandboxd runs with an old layout: restarting it"
        sandboxd_stop "$LEGACY_PIDFILE"
        rm -f "$RUNDIR/fcgi.sock"
    fi
    if pid=$(pid_of "$PIDFILE" sandboxd) && [ -S "$FCGI_SOCK" ]; then
        if [ "$(sandboxd_settings)" = "$(cat "$SETTINGS_FILE" 2>/dev/null)" ]; then
            say "sandboxd is running (pid $pid)"
            return 0
        fi
        say "sandboxd's binary or settings changed: restarting it"
        sandboxd_down
    elif pid=$(pid_of "$PIDFILE" sandboxd); then
        say "sandboxd (pid $pid) has no socket at $FCGI_SOCK: restarting it"
        sandboxd_down
    fi

    rm -f "$PIDFILE" "$FCGI_SOCK" "$GIT_SOCK"
    install_bin "$SANDBOXD_BIN" "$BINDIR/sandboxd"
    say "starting sandboxd as $SVC_USER ($WORKERS workers, log $LOGDIR/sandboxd.log)"
    # env's options (-u) before its assignments.
    local unset_env=() set_env=() as_user=()
    if [ -n "$SOCKET_GROUP" ]; then set_env+=("SANDBOXD_SOCKET_GROUP=$SOCKET_GROUP")
    else unset_env+=(-u SANDBOXD_SOCKET_GROUP); fi
    if [ -n "$RELAY_URL" ]; then
        set_env+=("SANDBOXD_RELAY_URL=$RELAY_URL" "SANDBOXD_RELAY_KEY_FILE=$RELAY_KEYFILE")
    else
        unset_env+=(-u SANDBOXD_RELAY_URL -u SANDBOXD_RELAY_KEY_FILE)
    fi
    # As root: the service's user and its groups, no capability left to gain back (empty
    # bounding set), no_new_privs: what the systemd unit's User=, CapabilityBoundingSet=
    # and NoNewPrivileges= give in production.
    if [ "$IS_ROOT" = 1 ]; then
        as_user=(setpriv "--reuid=$SVC_USER" "--regid=$(id -g "$SVC_USER")" --init-groups
                 --inh-caps=-all --bounding-set=-all --no-new-privs --)
    fi
    (
        cd "$VAR"
        exec env "${unset_env[@]}" "${set_env[@]}" \
            HOME=/nonexistent USER="$SVC_USER" LOGNAME="$SVC_USER" \
            SANDBOXD_DATABASE_URL="$DB_URL" \
            SANDBOXD_SOCKET="$FCGI_SOCK" \
            SANDBOXD_GIT_SOCKET="$GIT_SOCK" \
            SANDBOXD_WORKERS="$WORKERS" \
            SANDBOXD_REPOS_DIR="$REPOS" \
            SANDBOXD_PUBLIC_URL="$URL" \
            SANDBOXD_HOOKS_DIR="$BINDIR/hooks" \
            SANDBOXD_SANDBOX_GIT_URL="http://sandboxd.internal:$HTTP_PORT" \
            SANDBOXD_SANDBOX_NETWORK="$NETWORK" \
            SANDBOXD_EGRESS="$EGRESS" \
            SANDBOXD_SANDBOX_GIT_ADDR="$(git_addr)" \
            SANDBOXD_SIGNING_KEY_FILE="$KEYFILE" \
            SANDBOXD_SECRETS_KEY_FILE="$SECRETS_KEYFILE" \
            SANDBOXD_INSTANCE="$INSTANCE" \
            SANDBOXD_PID_FILE="$PIDFILE" \
            SANDBOXD_AGENT_PATH="$AGENT_BIN" \
            SANDBOXD_PREVIEW_DOMAIN="$PREVIEW_DOMAIN" \
            setsid nohup "${as_user[@]}" "$BINDIR/sandboxd" </dev/null >>"$LOGDIR/sandboxd.log" 2>&1 9>&-
    ) &
    local launched=$! i
    for ((i = 0; i < 300; i++)); do
        if [ -S "$FCGI_SOCK" ] && pid_of "$PIDFILE" sandboxd >/dev/null; then
            sandboxd_settings >"$SETTINGS_FILE"
            return 0
        fi
        if ! kill -0 "$launched" 2>/dev/null && ! pid_of "$PIDFILE" sandboxd >/dev/null; then
            show_log "$LOGDIR/sandboxd.log"
            die "sandboxd exited during start-up"
        fi
        sleep 0.1
    done
    show_log "$LOGDIR/sandboxd.log"
    die "sandboxd did not create $FCGI_SOCK and $PIDFILE within 30 s"
}

sandboxd_down() {
    if pid_of "$LEGACY_PIDFILE" sandboxd >/dev/null; then
        sandboxd_stop "$LEGACY_PIDFILE"
        rm -f "$RUNDIR/fcgi.sock"
    fi
    sandboxd_stop "$PIDFILE"
    rm -f "$PIDFILE" "$FCGI_SOCK" "$GIT_SOCK" "$SETTINGS_FILE"
}

sandboxd_stop() { # PIDFILE
    local pid
    if ! pid=$(pid_of "$1" sandboxd); then
        say "sandboxd is not running"
        rm -f "$1"
        return 0
    fi
    say "stopping sandboxd (pid $pid; draining up to ${STOP_TIMEOUT}s)"
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_gone "$pid" "$STOP_TIMEOUT"; then
        say "sandboxd did not drain within ${STOP_TIMEOUT}s: killing it and its workers"
        # started with setsid: the master leads its own process group
        if [ "$(ps -o pgid= -p "$pid" | tr -d ' ')" = "$pid" ]; then
            kill -KILL -- "-$pid" 2>/dev/null || true
        else
            pkill -KILL -P "$pid" 2>/dev/null || true
            kill -KILL "$pid" 2>/dev/null || true
        fi
        wait_gone "$pid" 5 || die "sandboxd (pid $pid) survived SIGKILL"
    fi
    rm -f "$1"
}

# --- nginx ------------------------------------------------------------------------------

NGINX=${SANDBOXD_NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}

# fd 9 holds the stack's lock: daemons must not inherit it.
nginx_cmd() { "$NGINX" -p "$NGXDIR/" -c "$NGX_CONF" -e "$LOGDIR/nginx-error.log" "$@" 9>&-; }

bridge_name() {
    if [ -n "${SANDBOXD_BRIDGE:-}" ]; then echo "$SANDBOXD_BRIDGE"
    elif own_engine; then echo sbxeng0
    else echo docker0; fi
}

# The Docker bridge's gateway address, where containers find sandboxd.internal.
bridge_ip() {
    ip -4 -o addr show "$(bridge_name)" 2>/dev/null | awk '{ sub(/\/.*/, "", $4); print $4; exit }'
}

# The address sandboxes reach git at, which sandboxd checks is still this host's (app/
# hostaddr.c): the operator's SANDBOXD_SANDBOX_GIT_ADDR, else the bridge address nginx
# listens on (empty when the bridge has none: sandboxd then checks Docker's stock
# 172.17.0.1, and says so in /healthz when that is not this host's either).
git_addr() { printf '%s' "${SANDBOXD_SANDBOX_GIT_ADDR:-$(bridge_ip)}"; }

bridge_listen() {
    local ip
    ip=$(bridge_ip)
    if [ -n "$ip" ]; then
        printf 'listen %s:%s;' "$ip" "$HTTP_PORT"
    else
        printf '# no %s bridge: sandboxes cannot reach git' "$(bridge_name)"
    fi
}

# Requests per client address (SANDBOXD_RATE_LIMIT, SANDBOXD_RATE_BURST); past the burst,
# 429 with a JSON body. off: no limit_req at all.
limit_req_zone() {
    if [ "$RATE_LIMIT" = off ]; then
        printf '# no rate limit (SANDBOXD_RATE_LIMIT=off)'
    else
        printf 'limit_req_zone $binary_remote_addr zone=sandboxd_api:10m rate=%s;' "$RATE_LIMIT"
    fi
}

limit_req() {
    if [ "$RATE_LIMIT" = off ]; then
        printf '# no rate limit'
    else
        printf 'limit_req zone=sandboxd_api burst=%s nodelay;' "$RATE_BURST"
    fi
}

render_nginx() {
    sed -e "s|@VAR@|$VAR|g" \
        -e "s|@HTTP_PORT@|$HTTP_PORT|g" \
        -e "s|@SOCKET@|$FCGI_SOCK|g" \
        -e "s|@GIT_SOCKET@|$GIT_SOCK|g" \
        -e "s|@USER@|$NGX_USER_LINE|g" \
        -e "s|@BRIDGE_LISTEN@|$(bridge_listen)|g" \
        -e "s|@LIMIT_REQ_ZONE@|$(limit_req_zone)|g" \
        -e "s|@LIMIT_REQ@|$(limit_req)|g" \
        -e "s|@LIMIT_CONN@|limit_conn sandboxd_git_conn $GIT_CONN_LIMIT;|g" \
        -e "s|@PREVIEW_DOMAIN@|$PREVIEW_DOMAIN|g" \
        -e "s|@FILE_RAW_MAX@|$FILE_RAW_MAX|g" \
        -e "s|@RELAY_INCLUDE@|$(relay_include)|g" \
        "$NGX_TEMPLATE"
}

# The relay listener (SANDBOXD_RELAY_PORT): nginx/local-relay.conf rendered beside
# nginx.conf and included by it; without a port, a comment.
relay_include() {
    if [ -n "$RELAY_PORT" ]; then
        printf 'include %s;' "$NGXDIR/relay.conf"
    else
        printf '# no relay listener (SANDBOXD_RELAY_PORT is not set)'
    fi
}

render_relay() {
    sed -e "s|@RELAY_PORT@|$RELAY_PORT|g" \
        -e "s|@SOCKET@|$FCGI_SOCK|g" \
        -e "s|@FILE_RAW_MAX@|$FILE_RAW_MAX|g" \
        "$REPO/nginx/local-relay.conf"
}

# port_taken_by_others PORT [NGINX_MASTER_PID]: prints the listener and succeeds when
# something other than this stack's nginx listens on TCP PORT. Without this check a
# health probe could be answered by another stack (or anything else) on that port.
port_taken_by_others() {
    local lines p ppid
    lines=$(ss -Hltnp "sport = :$1" 2>/dev/null) || true
    [ -n "$lines" ] || return 1
    [ -n "${2:-}" ] || { echo "$lines"; return 0; }
    while read -r p; do
        ppid=$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ') || true
        if [ "$p" != "$2" ] && [ "$ppid" != "$2" ]; then
            echo "$lines"
            return 0
        fi
    done < <(grep -o 'pid=[0-9]*' <<<"$lines" | cut -d= -f2 | sort -u)
    return 1
}

nginx_check_conf() {
    if ! nginx_cmd -t -q 2>"$LOGDIR/nginx-test.err"; then
        cat "$LOGDIR/nginx-test.err" >&2
        die "the rendered nginx configuration $NGX_CONF is not valid"
    fi
}

nginx_up() {
    install -d -m 0755 "$NGXDIR" "$NGXDIR/tmp"
    local new=$NGXDIR/nginx.conf.new pid taken i
    render_nginx >"$new"
    # Its included relay listener, whose checksum nginx.conf carries: a change to it alone
    # is a change of the configuration too.
    if [ -n "$RELAY_PORT" ]; then
        render_relay >"$NGXDIR/relay.conf.new"
        printf '# relay.conf %s\n' "$(cksum <"$NGXDIR/relay.conf.new" | cut -d' ' -f1)" >>"$new"
        mv -f "$NGXDIR/relay.conf.new" "$NGXDIR/relay.conf"
    fi
    if pid=$(pid_of "$NGX_PID" nginx); then
        if cmp -s "$new" "$NGX_CONF"; then
            rm -f "$new"
            if taken=$(port_taken_by_others "$HTTP_PORT" "$pid"); then
                die "port $HTTP_PORT is also held by another process: $taken"
            fi
            say "nginx is running (pid $pid, port $HTTP_PORT)"
            return 0
        fi
        if taken=$(port_taken_by_others "$HTTP_PORT" "$pid"); then
            rm -f "$new"
            die "port $HTTP_PORT is in use (set SANDBOXD_HTTP_PORT): $taken"
        fi
        mv "$new" "$NGX_CONF"
        nginx_check_conf
        say "nginx configuration changed: reloading nginx (pid $pid)"
        local old_workers
        old_workers=$(pgrep -P "$pid" | tr '\n' ' ') || true
        nginx_cmd -s reload
        # The new configuration holds once the old workers are gone (they finish what they
        # serve; idle keepalive connections are closed at once): wait a while for that.
        for ((i = 0; i < 100; i++)); do
            local w left=0
            for w in $old_workers; do kill -0 "$w" 2>/dev/null && left=1; done
            [ "$left" = 0 ] && break
            sleep 0.1
        done
        # A reload that cannot bind keeps the old configuration and only logs it.
        for ((i = 0; i < 50; i++)); do
            ss -Hltn "sport = :$HTTP_PORT" 2>/dev/null | grep -q . && return 0
            sleep 0.1
        done
        show_log "$LOGDIR/nginx-error.log" 10
        die "nginx did not take port $HTTP_PORT after a reload"
    fi
    if taken=$(port_taken_by_others "$HTTP_PORT"); then
        rm -f "$new"
        die "port $HTTP_PORT is in use (set SANDBOXD_HTTP_PORT): $taken"
    fi
    mv "$new" "$NGX_CONF"
    nginx_check_conf
    say "starting nginx on 127.0.0.1:$HTTP_PORT"
    if ! nginx_cmd 2>"$LOGDIR/nginx-start.err"; then
        cat "$LOGDIR/nginx-start.err" >&2
        show_log "$LOGDIR/nginx-error.log" 10
        die "nginx did not start"
    fi
}

nginx_down() {
    local pid
    if ! pid=$(pid_of "$NGX_PID" nginx); then
        say "nginx is not running"
        return 0
    fi
    say "stopping nginx (pid $pid)"
    kill -QUIT "$pid" 2>/dev/null || true          # graceful: open requests finish
    if ! wait_gone "$pid" 10; then
        kill -TERM "$pid" 2>/dev/null || true      # fast
        wait_gone "$pid" 10 || die "nginx (pid $pid) did not stop"
    fi
}

# --- up / down / status -----------------------------------------------------------------

wait_healthy() {
    local code=000 body=$RUNDIR/healthz.out deadline=$((SECONDS + 60))
    rm -f "$body"
    while [ "$SECONDS" -lt "$deadline" ]; do
        code=$(curl -s -o "$body" -w '%{http_code}' -m 5 "$URL/healthz" 2>/dev/null) || code=000
        [ "$code" = 200 ] && return 0
        sleep 1
    done
    say "GET $URL/healthz answered $code: $(head -c 500 "$body" 2>/dev/null || true)"
    show_log "$LOGDIR/sandboxd.log"
    show_log "$LOGDIR/nginx-error.log" 10
    die "the stack did not become healthy within 60 s"
}

http_code_with_token() {
    curl -s -o /dev/null -w '%{http_code}' -m 10 -H "Authorization: Bearer $1" "$URL/api/v3/user" || echo 000
}

ensure_admin_token() {
    local out rc=0
    out=$(ctl account create admin --kind user --site-admin --name "Local admin" 2>&1) || rc=$?
    case $rc in
        0) say "created site admin account 'admin'" ;;
        4) ;; # already there
        *) printf '%s\n' "$out" >&2; die "sandboxctl account create admin failed (exit $rc)" ;;
    esac

    TOKEN=
    if [ -f "$ENVFILE" ]; then
        TOKEN=$(sed -n 's/^SANDBOXD_TOKEN=//p' "$ENVFILE" | tail -n 1)
        if [ -n "$TOKEN" ] && [ "$(http_code_with_token "$TOKEN")" = 200 ]; then
            say "reusing the admin token from $ENVFILE"
            return 0
        fi
    fi
    local err=$RUNDIR/token.err
    rc=0
    TOKEN=$(ctl token create admin --scope write --note "local stack (deploy/local-stack.sh)" 2>"$err") || rc=$?
    if [ "$rc" -ne 0 ] || [ -z "$TOKEN" ]; then
        cat "$err" >&2
        die "sandboxctl token create admin failed (exit $rc)"
    fi
    local code
    code=$(http_code_with_token "$TOKEN")
    [ "$code" = 200 ] || die "a new token for 'admin' gets $code from GET /api/v3/user (disabled account?)"
    say "minted a new write token for 'admin'"
}

write_envfile() {
    local tmp=$ENVFILE.tmp
    (
        umask 077
        cat >"$tmp" <<EOF
# Written by deploy/local-stack.sh up. Load with:  . $ENVFILE
# SANDBOXD_DATABASE_URL is the service's role (sandboxd); psql via PG* and
# SANDBOXD_OWNER_DATABASE_URL act as the schema owner (migrations:
#   SANDBOXD_DATABASE_URL=\$SANDBOXD_OWNER_DATABASE_URL sandboxctl migrate).
SANDBOXD_VAR=$VAR
SANDBOXD_URL=$URL
SANDBOXD_TOKEN=$TOKEN
SANDBOXD_DATABASE_URL='$DB_URL'
SANDBOXD_OWNER_DATABASE_URL='$OWNER_DB_URL'
SANDBOXD_REPOS_DIR=$REPOS
SANDBOXD_PID_FILE=$PIDFILE
SANDBOXD_INSTANCE=$INSTANCE
SANDBOXD_USER=$SVC_USER
SANDBOXD_SANDBOX_NETWORK=$NETWORK
DOCKER_HOST=$ENGINE
PGHOST=$PGSOCK
PGPORT=$PG_PORT
PGDATABASE=sandboxd
PGUSER=sandboxd_owner
export SANDBOXD_VAR SANDBOXD_URL SANDBOXD_TOKEN SANDBOXD_DATABASE_URL SANDBOXD_OWNER_DATABASE_URL SANDBOXD_REPOS_DIR SANDBOXD_PID_FILE SANDBOXD_INSTANCE SANDBOXD_USER SANDBOXD_SANDBOX_NETWORK DOCKER_HOST PGHOST PGPORT PGDATABASE PGUSER
EOF
    )
    chmod 0600 "$tmp"
    mv "$tmp" "$ENVFILE"
}

cmd_up() {
    local bin
    check_settings
    [ -f "$NGX_TEMPLATE" ] || die "missing $NGX_TEMPLATE"
    if [ "${SANDBOXD_SKIP_DEPS:-0}" != 1 ]; then
        bash "$REPO/deploy/install-deps.sh"
    fi
    [ -x "$PGBIN/initdb" ] || die "PostgreSQL 15 is not installed ($PGBIN/initdb missing)"
    if [ "${SANDBOXD_SKIP_BUILD:-0}" != 1 ]; then
        make -C "$REPO" $([ "$BUILD" = build-san ] && echo SANITIZE=1) >&2 ||
            die "the build failed (make -C $REPO)"
    fi
    for bin in "$SANDBOXD_BIN" "$SANDBOXCTL_BIN"; do
        [ -x "$bin" ] || die "$bin is missing after the build"
    done

    install -d -m 0755 "$VAR" "$LOGDIR" "$RUNDIR" "$BINDIR" "$BINDIR/hooks"
    make_traversable "$VAR"
    exec 9>"$RUNDIR/lock"
    flock -w 300 9 || die "another local-stack.sh holds $RUNDIR/lock"

    local ngx_pid taken
    ngx_pid=$(pid_of "$NGX_PID" nginx) || ngx_pid=
    if taken=$(port_taken_by_others "$HTTP_PORT" "$ngx_pid"); then
        die "port $HTTP_PORT is in use (set SANDBOXD_HTTP_PORT): $taken"
    fi
    if [ -n "$RELAY_PORT" ] && taken=$(port_taken_by_others "$RELAY_PORT" "$ngx_pid"); then
        die "port $RELAY_PORT is in use (set SANDBOXD_RELAY_PORT): $taken"
    fi

    if [ -n "$SHARE" ]; then
        # Another stack's: it runs, or this host has no database.
        as_pg "$PGBIN/pg_ctl" -D "$SHARE/pg" status >/dev/null 2>&1 ||
            die "the PostgreSQL of $SHARE does not run: start that stack first"
        say "using the PostgreSQL, repositories and keys of $SHARE"
    else
        pg_up
        db_setup
    fi
    say "migrating the database"
    SANDBOXD_DATABASE_URL=$OWNER_DB_URL SANDBOXD_REPOS_DIR=$REPOS "$SANDBOXCTL_BIN" migrate >&2 ||
        die "sandboxctl migrate failed"
    db_grants || die "granting the service role its privileges failed"
    engine_up
    # The runner images, minimal and standard (the default: SANDBOXD_IMAGES): built once
    # (about 4 minutes on 2 cores, most of it standard's apt-get), then found in the engine
    # by tag and version label and reused. SANDBOXD_SKIP_IMAGE=1 leaves them alone (a test
    # that configures one that must stay missing).
    if [[ ${SANDBOXD_DOCKER_HOST:-unix://} != unix://* ]]; then
        say "SANDBOXD_DOCKER_HOST=$SANDBOXD_DOCKER_HOST: the runner images are that engine's to have (not built here)"
    elif [ "${SANDBOXD_SKIP_IMAGE:-0}" != 1 ]; then
        bash "$REPO/deploy/build-runner-image.sh" >&2 9>&- || die "building the runner images failed"
    fi
    ensure_service_user
    service_dirs
    # git runs the hook afresh for every push: replacing it needs no restart.
    install_bin "$SANDBOXD_HOOK_BIN" "$BINDIR/hooks/pre-receive"
    install_bin "$SANDBOXD_HOOK_BIN" "$BINDIR/hooks/post-receive"
    network_up
    egress apply || die "deploy/egress.sh failed"
    sandboxd_up
    nginx_up
    wait_healthy
    ensure_admin_token
    write_envfile

    local stop_cmd="make stop"
    [ "$VAR" = "$REPO/var" ] || stop_cmd="SANDBOXD_VAR=$VAR bash $REPO/deploy/local-stack.sh down"
    cat <<EOF
sandboxd is up at $URL ($WORKERS workers, state in $VAR)
  try:       curl -H "Authorization: Bearer $TOKEN" $URL/api/v3/user
  env:       . $ENVFILE      (SANDBOXD_URL, SANDBOXD_TOKEN, SANDBOXD_DATABASE_URL, PG* for psql)
  database:  psql '$DB_URL'   (the service's role; PG* in the env file: the owner)
  logs:      $LOGDIR/sandboxd.log, nginx-access.log, nginx-error.log, postgres.log
  stop:      $stop_cmd
EOF
}

# This stack's sandbox containers (and their volumes): a stopped stack runs nothing.
containers_down() {
    local ids
    engine_answers || return 0
    ids=$(docker ps -aq --filter "label=sandboxd.instance=$INSTANCE" 2>/dev/null) || return 0
    if [ -n "$ids" ]; then
        say "removing $(wc -w <<<"$ids") sandbox container(s)"
        # shellcheck disable=SC2086
        docker rm -f -v $ids >/dev/null 2>&1 || say "warning: could not remove every container"
    fi
}

cmd_down() {
    check_settings
    if [ ! -d "$VAR" ]; then
        say "nothing to stop: $VAR does not exist"
        return 0
    fi
    if [ -d "$RUNDIR" ]; then
        exec 9>"$RUNDIR/lock"
        flock -w 300 9 || die "another local-stack.sh holds $RUNDIR/lock"
    fi
    nginx_down
    sandboxd_down
    containers_down
    # The rules name the network's bridge: they go first, then the network.
    if [ "$IS_ROOT" = 1 ]; then
        egress remove || say "warning: deploy/egress.sh remove failed"
    fi
    network_down
    if [ -z "$SHARE" ]; then pg_down; else say "PostgreSQL is $SHARE's: left running"; fi
    say "stopped (data kept in $VAR; dockerd left running)"
}

cmd_status() {
    check_settings
    local ok=1 pid url=$URL
    if [ -f "$ENVFILE" ]; then
        url=$(sed -n 's/^SANDBOXD_URL=//p' "$ENVFILE" | tail -n 1)
    fi
    echo "var dir:     $VAR"
    if pg_running; then
        echo "postgresql:  running (pid $(head -n 1 "$PGDATA/postmaster.pid"), port $(sed -n 4p "$PGDATA/postmaster.pid"), socket dir $(sed -n 5p "$PGDATA/postmaster.pid"))"
    else
        echo "postgresql:  stopped"; ok=0
    fi
    if pid=$(pid_of "$PIDFILE" sandboxd); then
        echo "sandboxd:    running (pid $pid, user $(ps -o user= -p "$pid"), $(pgrep -c -P "$pid" || true) workers, socket $FCGI_SOCK)"
    else
        echo "sandboxd:    stopped"; ok=0
    fi
    if pid=$(pid_of "$NGX_PID" nginx); then
        echo "nginx:       running (pid $pid, $url)"
    else
        echo "nginx:       stopped"; ok=0
    fi
    if [ "$(curl -s -m 3 --unix-socket "$ENGINE_SOCK" http://d/_ping 2>/dev/null)" = OK ]; then
        echo "docker:      answering on $ENGINE_SOCK"
    else
        echo "docker:      not answering"; ok=0
    fi
    if [ "$ok" = 1 ]; then
        local out
        out=$(curl -s -m 5 -w '\n (HTTP %{http_code})' "$url/healthz" 2>/dev/null) || out='no answer'
        echo "healthz:     $(tr -d '\n' <<<"$out")"
        return 0
    fi
    return 3
}

trap 'say "failed: line $LINENO: $BASH_COMMAND"' ERR

case ${1:-} in
    up) cmd_up ;;
    down) cmd_down ;;
    status) cmd_status || exit $? ;;
    *)
        echo "usage: $0 up|down|status" >&2
        exit 2
        ;;
esac
