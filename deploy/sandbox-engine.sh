#!/usr/bin/env bash
# The sandboxes' own Docker engine for the local stack (SPEC.md §4 "Root inside, nobody
# outside"): a dockerd with --userns-remap=default, so that root in a sandbox is an
# unprivileged host uid (100000 and up, /etc/subuid's dockremap range), beside whatever
# engine the machine already runs and without touching it: its own socket, exec root,
# pidfile, containerd namespace, cgroup parent, address pool and bridge (never
# --bridge=none: that deletes the host's docker0, DESIGN.md), and no iptables of its own
# (two engines rewriting the same chains fight; the few rules its sandboxes need are
# local-stack.sh's, per network: `forward`). Its data root is /var/lib/sandboxd/docker,
# outside any test's folder, so its images stay between runs. One per machine, shared by
# every local stack, like the host's engine; `up` starts it when it does not answer and
# never stops it.
#
#   usage: deploy/sandbox-engine.sh up|down|status|host
#     up      start it (if needed) and wait for /_ping; exit 1, saying why, when it cannot
#             start (no user namespaces, no subordinate ids, not root ...)
#     down    stop it (its containers die with it)
#     status  0 when it answers with userns-remap on
#     disk    0 when its data root is XFS with project quotas (disk limits by the engine);
#             prints what it is
#     host    print its Docker host (unix:///run/sandboxd-engine/docker.sock)
#     forward apply|remove BRIDGE SUBNET: what Docker's iptables would do for one network
#             of this engine: forwarding in and out of BRIDGE (after DOCKER-USER, where
#             deploy/egress.sh narrows it) and masquerading SUBNET out of other interfaces.
#
# The data root is an XFS filesystem of its own (a sparse loop file beside it, $DATA.xfs,
# of SANDBOXD_ENGINE_DISK_GB, 64 by default), mounted with pquota where the kernel has XFS
# quotas, so that overlay2 takes each sandbox's StorageOpt size: its disk limit (SPEC §4
# "Limits"), which ext4 refuses. Without quotas it still bounds what all the sandboxes
# together take from the host's disk, and sandboxd's reaper measures each one. A data root
# from before is copied in once. Without xfsprogs, loop devices or the mount, the engine
# starts on the plain folder and says so.
#
# Settings: SANDBOXD_ENGINE_DIR (data root, /var/lib/sandboxd/docker),
# SANDBOXD_ENGINE_RUN (socket, pidfile, exec root: /run/sandboxd-engine; short, as
# containerd's sockets live below it and sun_path holds 108 bytes), SANDBOXD_ENGINE_POOL
# (its networks' addresses, 10.199.0.0/16 in /24s) and SANDBOXD_ENGINE_BRIDGE_ADDR (its
# default bridge sbxeng0, 10.198.0.1/24; host-gateway, the sandboxes' sandboxd.internal,
# resolves to it).
set -Eeuo pipefail

DATA=${SANDBOXD_ENGINE_DIR:-/var/lib/sandboxd/docker}
DISK_GB=${SANDBOXD_ENGINE_DISK_GB:-64}
IMG=$DATA.xfs
RUN=${SANDBOXD_ENGINE_RUN:-/run/sandboxd-engine}
POOL=${SANDBOXD_ENGINE_POOL:-10.199.0.0/16}
BRIDGE_ADDR=${SANDBOXD_ENGINE_BRIDGE_ADDR:-10.198.0.1/24}
BRIDGE=sbxeng0
NS=sandboxd-engine
SOCK=$RUN/docker.sock
PIDFILE=$RUN/docker.pid
LOG=$RUN/dockerd.log
DOCKERD=$(command -v dockerd || echo /usr/sbin/dockerd)
export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin

say() { printf 'sandbox-engine: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

ping_ok() { [ -S "$SOCK" ] && [ "$(curl -s -m 3 --unix-socket "$SOCK" http://d/_ping 2>/dev/null)" = OK ]; }
remapped() { curl -s -m 5 --unix-socket "$SOCK" http://d/info 2>/dev/null | grep -q '"name=userns"'; }
engine_pid() {
    local p
    p=$(head -n 1 "$PIDFILE" 2>/dev/null | tr -cd '0-9') || true
    [ -n "$p" ] && [ "$(cat "/proc/$p/comm" 2>/dev/null)" = dockerd ] && echo "$p"
}

# Its default bridge, made before it starts (--bridge names an existing interface).
bridge_up() {
    ip link show "$BRIDGE" >/dev/null 2>&1 || ip link add "$BRIDGE" type bridge ||
        die "cannot make the bridge $BRIDGE (ip link add)"
    ip -4 addr show "$BRIDGE" | grep -q " ${BRIDGE_ADDR%/*}/" ||
        ip addr add "$BRIDGE_ADDR" dev "$BRIDGE" || die "cannot give $BRIDGE the address $BRIDGE_ADDR"
    ip link set "$BRIDGE" up
}

# Root inside maps to the dockremap user's subordinate ids: without the kernel's user
# namespaces there is no point in starting.
userns_possible() {
    local f=/proc/sys/user/max_user_namespaces
    [ ! -e "$f" ] || [ "$(cat "$f")" -gt 0 ] || die "user namespaces are off ($f is 0)"
    [ -e /proc/self/ns/user ] || die "this kernel has no user namespaces"
}

# 0 when DATA is itself a mount of its own loop file (with quotas or not).
data_mounted() {
    [ "$(findmnt -n -o TARGET --target "$DATA" 2>/dev/null)" = "$DATA" ] &&
        [ "$(findmnt -n -o FSTYPE --target "$DATA")" = xfs ]
}
# 0 when it is mounted with project quotas on (overlay2 then takes StorageOpt size).
xfs_quota_on() {
    data_mounted && findmnt -n -o OPTIONS --target "$DATA" | grep -qE '(^|,)(prjquota|pquota)(,|$)'
}

# The data root on XFS with pquota (see the top). Returns 1, having said why, when it
# cannot be: the engine then starts on the folder as it is.
xfs_data_root() {
    data_mounted && return 0
    [[ $DISK_GB =~ ^[1-9][0-9]*$ ]] || { say "SANDBOXD_ENGINE_DISK_GB=$DISK_GB is not a number of GB"; return 1; }
    command -v mkfs.xfs >/dev/null || { say "no mkfs.xfs (xfsprogs): no disk limits by the engine"; return 1; }
    if findmnt -n -o TARGET --target "$DATA" 2>/dev/null | grep -qx "$DATA"; then
        say "$DATA is a mount of something else: left as it is"
        return 1
    fi
    if [ ! -s "$IMG" ]; then
        say "making $IMG: a sparse ${DISK_GB} GB XFS filesystem for the engine's data root"
        truncate -s "${DISK_GB}G" "$IMG" && mkfs.xfs -q "$IMG" ||
            { rm -f "$IMG"; say "mkfs.xfs $IMG failed: no disk limits by the engine"; return 1; }
    fi
    local old=""
    if [ -d "$DATA" ] && [ -n "$(ls -A "$DATA" 2>/dev/null)" ]; then
        old=$DATA.before-xfs
        rm -rf "$old"
        mv "$DATA" "$old"
    fi
    install -d -m 0711 "$DATA"
    # Measured on this workplace's kernel (6.18, Firecracker): "XFS: quota support not
    # available in this kernel", and the pquota mount fails; Debian's kernels have it.
    # Without quotas the data root is still a filesystem of its own: all the sandboxes
    # together can take at most its size from the host's disk.
    if ! mount -o loop,pquota "$IMG" "$DATA" 2>/dev/null; then
        if ! mount -o loop "$IMG" "$DATA"; then
            say "mounting $IMG on $DATA failed (no loop devices?): no disk limits by the engine"
            if [ -n "$old" ]; then rmdir "$DATA" && mv "$old" "$DATA"; fi
            return 1
        fi
        say "this kernel has no XFS quotas: the data root holds at most ${DISK_GB} GB for every sandbox together; each sandbox's own limit is sandboxd's reaper's measure"
    fi
    if [ -n "$old" ]; then
        # The images and layers of before, so that nothing is rebuilt (overlay2's own
        # xattrs and whiteouts included: cp -a as root keeps them).
        say "copying the data root of before into the XFS one ($(du -sh "$old" | cut -f1))"
        if cp -a "$old/." "$DATA/"; then
            rm -rf "$old"
        else
            say "the copy failed: the engine starts empty (images are built again); $old kept"
        fi
    fi
    chmod 0711 "$DATA"
}

cmd_up() {
    [ "$(id -u)" -eq 0 ] || die "only root can start dockerd"
    [ -x "$DOCKERD" ] || die "dockerd is not installed (run deploy/install-deps.sh)"
    install -d -m 0711 "$RUN"
    exec 8>"$RUN/lock"
    flock -w 120 8 || die "another start holds $RUN/lock"
    if ping_ok; then
        remapped || die "the engine on $SOCK answers without userns-remap"
        return 0
    fi
    userns_possible
    bridge_up
    install -d -m 0711 "$(dirname "$DATA")"
    xfs_data_root || true
    install -d -m 0711 "$DATA"
    # Measured here (2026-12-01): a second start of this engine on the network store its
    # first start left deletes the host's docker0 (the host engine's default bridge), as
    # --bridge=none does; a start on an empty store does not. Nothing of the store outlives
    # a restart anyway (the containers on its networks died with the engine, and the stack
    # makes its network again), so every start begins with none.
    rm -f "$DATA"/*/network/files/local-kv.db
    local t0=$SECONDS pid
    if ! pid=$(engine_pid); then
        say "starting dockerd --userns-remap=default on $SOCK (data $DATA, bridge $BRIDGE, log $LOG)"
        # fd 8 holds the lock: dockerd must not inherit it.
        # Not the host engine's /etc/docker/daemon.json: nothing of it applies here.
        echo '{}' >"$RUN/daemon.json"
        setsid "$DOCKERD" --config-file "$RUN/daemon.json" --userns-remap=default --data-root "$DATA" \
            --exec-root "$RUN/exec" --pidfile "$PIDFILE" -H "unix://$SOCK" --group docker \
            --bridge "$BRIDGE" --default-address-pool "base=$POOL,size=24" \
            --iptables=false --ip-masq=false --ip-forward=false \
            --containerd-namespace "$NS" --containerd-plugins-namespace "${NS}-plugins" \
            --cgroup-parent "$NS" --shutdown-timeout 10 --log-level warn \
            </dev/null >>"$LOG" 2>&1 8>&- &
        pid=$!
    fi
    while [ $((SECONDS - t0)) -lt 60 ]; do
        if ping_ok; then
            remapped || die "dockerd answers but /info shows no userns-remap"
            say "dockerd answers (pid $pid, $((SECONDS - t0)) s)"
            return 0
        fi
        kill -0 "$pid" 2>/dev/null || { tail -n 20 "$LOG" >&2; die "dockerd exited before it answered"; }
        sleep 0.5
    done
    tail -n 20 "$LOG" >&2
    die "dockerd did not answer on $SOCK within 60 s"
}

cmd_down() {
    local pid i
    pid=$(engine_pid) || { say "not running"; return 0; }
    say "stopping dockerd (pid $pid)"
    kill -TERM "$pid"
    for ((i = 0; i < 300; i++)); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
}

# One rule, added when missing or deleted when present: TABLE RULE….
rule() {
    local op=$1 table=$2
    shift 2
    if iptables -w 10 -t "$table" -C "$@" 2>/dev/null; then
        [ "$op" = remove ] && iptables -w 10 -t "$table" -D "$@"
    elif [ "$op" = apply ]; then
        iptables -w 10 -t "$table" -A "$@"
    fi
    return 0
}

cmd_forward() {
    local op=$1 br=$2 net=$3 tag="sandboxd-engine:$2"
    [[ $op == apply || $op == remove ]] || die "forward apply|remove BRIDGE SUBNET"
    [[ $br =~ ^[A-Za-z0-9_.-]{1,15}$ && $net =~ ^[0-9.]+/[0-9]+$ ]] || die "forward: bad bridge or subnet"
    command -v iptables >/dev/null 2>&1 || { say "no iptables: sandboxes reach only the host"; return 0; }
    rule "$op" filter FORWARD -o "$br" -m conntrack --ctstate RELATED,ESTABLISHED -m comment --comment "$tag" -j ACCEPT
    rule "$op" filter FORWARD -i "$br" ! -o "$br" -m comment --comment "$tag" -j ACCEPT
    rule "$op" nat POSTROUTING -s "$net" ! -o "$br" -m comment --comment "$tag" -j MASQUERADE
}

case ${1:-} in
    up) cmd_up ;;
    down) cmd_down ;;
    status) ping_ok && remapped ;;
    disk)
        if xfs_quota_on; then echo "xfs with project quotas ($IMG)"
        elif data_mounted; then echo "xfs without quotas ($IMG)"; exit 1
        else echo "a plain folder"; exit 1; fi ;;
    host) echo "unix://$SOCK" ;;
    forward) shift; cmd_forward "$@" ;;
    *) echo "usage: $0 up|down|status|disk|host|forward apply|remove BRIDGE SUBNET" >&2; exit 2 ;;
esac
