#!/usr/bin/env bash
# Builds the sandbox runner images locally from Debian packages, with no registry:
#   sandboxd-runner:minimal   debootstrap (minbase, bookworm) + bash git git-lfs coreutils
#                             procps curl ca-certificates; apt lists, docs removed
#   sandboxd-runner:standard  the same, plus a CI runner's toolchains (STANDARD_PACKAGES
#                             below) installed with apt-get in the rootfs; apt lists kept,
#                             so that `apt-get install` works where egress allows
# Both: git-lfs's filters in /etc/gitconfig (its package writes them), an unprivileged
# user sandbox (61000:61000, the fallback user of SANDBOXD_SANDBOX_UID, home /home/sandbox), /workspace owned by it, then `docker import`
# with CMD ["sleep","infinity"]. The main tools' versions are read at build time by running
# each tool's --version in the rootfs, and recorded in the image: the label
# sandboxd.packages ("name=version ...", what GET /api/v3/sandbox-images answers) and the
# file /usr/share/sandboxd-runner/packages (not /etc/sandboxd: the package sandboxd owns that).
#   usage: build-runner-image.sh [--force] [minimal|standard]...   (default: both)
# An image that exists with this VERSION is left alone (the image is the cache), unless
# --force. Each build prints its time and the image's size.
# The only network it uses is the Debian mirror that apt's own sources name (read from
# /etc/apt/sources.list and /etc/apt/sources.list.d/*), or $SANDBOXD_DEBIAN_MIRROR.
# Needs root (debootstrap, chroot) and a Docker engine that answers.
set -euo pipefail

# What the service expects inside (the user, /workspace, /.sandboxd-stage, the packages
# label): an image of an older version is built again, so that a machine that kept one
# gets the new layout.
VERSION=6
SUITE=bookworm
REPO_TAG=sandboxd-runner
PACKAGES=bash,git,git-lfs,coreutils,procps,curl,ca-certificates
# The toolchains of a CI runner (SPEC §4 "What's inside"), installed without recommends.
STANDARD_PACKAGES="build-essential pkg-config git git-lfs python3 python3-pip python3-venv
    python3-pytest nodejs npm jq ripgrep zip unzip xz-utils zstd openssh-client wget curl
    ca-certificates sqlite3 cmake make procps less file"
FORCE=0
FLAVOURS=()

for arg in "$@"; do
    case $arg in
    --force) FORCE=1 ;;
    minimal|standard) FLAVOURS+=("$arg") ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-runner-image: unknown argument '$arg'" >&2; exit 2 ;;
    esac
done
((${#FLAVOURS[@]})) || FLAVOURS=(minimal standard)

say() { echo "build-runner-image: $*" >&2; }
die() { say "$*"; exit 1; }

command -v docker >/dev/null 2>&1 || die "docker is not installed (run deploy/install-deps.sh)"
docker version --format '{{.Server.APIVersion}}' >/dev/null 2>&1 ||
    die "no Docker engine answers (run deploy/ensure-docker.sh)"

# The flavours whose image is missing or of another version.
NEED=()
for f in "${FLAVOURS[@]}"; do
    have=$(docker image inspect -f '{{index .Config.Labels "sandboxd.runner-version"}}' \
        "$REPO_TAG:$f" 2>/dev/null || true)
    if [ "$FORCE" -eq 0 ] && [ "$have" = "$VERSION" ]; then
        say "image '$REPO_TAG:$f' (version $VERSION) exists; nothing to do (--force rebuilds it)"
        continue
    fi
    [ -n "$have" ] && [ "$FORCE" -eq 0 ] &&
        say "image '$REPO_TAG:$f' is of version '$have', not $VERSION: building it again"
    NEED+=("$f")
done
((${#NEED[@]})) || exit 0

export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin
command -v debootstrap >/dev/null 2>&1 || die "debootstrap is not installed (run deploy/install-deps.sh)"
[ "$(id -u)" -eq 0 ] || die "debootstrap needs root"

# The mirror apt already uses for the suite: deb822 stanzas (URIs: + Suites:) and one-line
# entries (deb URI SUITE ...). Security and -updates suites do not carry the base suite.
mirror_from_apt() {
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk -v suite="$SUITE" '
            function flush() {
                if (uris != "" && (" " suites " ") ~ (" " suite " ")) { split(uris, u, " "); print u[1]; found = 1; exit }
                uris = ""; suites = ""
            }
            /^[[:space:]]*$/ { flush(); next }
            /^[[:space:]]*#/ { next }
            tolower($1) == "uris:" { $1 = ""; uris = $0 }
            tolower($1) == "suites:" { $1 = ""; suites = $0 }
            END { if (!found) flush() }' "$f"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        # Skips options in brackets: deb [signed-by=...] URI SUITE COMPONENTS
        sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$f" |
            awk -v suite="$SUITE" '$1 == "deb" && $3 == suite { print $2 }'
    done
}

MIRROR=${SANDBOXD_DEBIAN_MIRROR:-$(mirror_from_apt | head -n 1)}
[ -n "$MIRROR" ] || die "no apt source for '$SUITE' in /etc/apt/sources.list*; set SANDBOXD_DEBIAN_MIRROR"

# Everything goes in one temporary directory, removed on every exit. debootstrap mounts
# proc, sys and (in containers) binds device nodes inside the target: unmount whatever is
# still mounted below it first, and never let rm cross into another file system.
WORK=$(mktemp -d /var/tmp/sandboxd-runner.XXXXXX)
cleanup() {
    local rc=$? m
    if [ -n "${WORK:-}" ] && [ -d "$WORK" ]; then
        for m in $(awk -v w="$WORK/" 'index($2, w) == 1 { print $2 }' /proc/self/mounts | sort -r); do
            umount -l "$m" 2>/dev/null || true
        done
        rm -rf --one-file-system "$WORK"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# debootstrap with the minimal set, and the sandbox's user and directories.
bootstrap() {  # ROOT
    local root=$1
    say "debootstrap $SUITE from $MIRROR into $root"
    if ! debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$root" "$MIRROR" \
            >"$WORK/debootstrap.log" 2>&1; then
        say "debootstrap failed; last lines of its log:"
        tail -n 30 "$WORK/debootstrap.log" >&2
        [ -f "$root/debootstrap/debootstrap.log" ] && tail -n 30 "$root/debootstrap/debootstrap.log" >&2
        exit 1
    fi
    # The user: written straight into the account files (no chroot, no daemons).
    grep -q '^[^:]*:[^:]*:61000:' "$root/etc/passwd" && die "uid 61000 already exists in the rootfs"
    grep -q '^[^:]*:[^:]*:61000:' "$root/etc/group" && die "gid 61000 already exists in the rootfs"
    echo 'sandbox:x:61000:61000:sandbox:/home/sandbox:/bin/bash' >>"$root/etc/passwd"
    echo 'sandbox:x:61000:' >>"$root/etc/group"
    echo 'sandbox:!:19000:0:99999:7:::' >>"$root/etc/shadow"
    [ -f "$root/etc/gshadow" ] && echo 'sandbox:!::' >>"$root/etc/gshadow"
    install -d -m 0755 -o 61000 -g 61000 "$root/home/sandbox" "$root/workspace"
    # Where the file API stages a write (through the engine, as root) before the sandbox's
    # user moves it into place: root's, so that the user cannot swap it for a link; sticky
    # and writable by all but not listable, like a /tmp whose names cannot be read.
    install -d -m 1733 -o 0 -g 0 "$root/.sandboxd-stage"
    if [ -d "$root/etc/skel" ]; then
        cp -a "$root/etc/skel/." "$root/home/sandbox/"
        chown -R 61000:61000 "$root/home/sandbox"
    fi
}

# apt-get in the rootfs, with its own /proc and the host's resolver, and no service
# started by a package's scripts. The apt lists stay: `apt-get install` in a sandbox then
# works where egress allows, without an `apt-get update` first.
install_standard() {  # ROOT
    local root=$1
    mount -t proc proc "$root/proc"
    [ -c "$root/dev/null" ] || { rm -f "$root/dev/null"; mknod -m 666 "$root/dev/null" c 1 3; }
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
    chmod 0755 "$root/usr/sbin/policy-rc.d"
    # shellcheck disable=SC2086 # the list is words
    if ! chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C PATH=/usr/sbin:/usr/bin:/sbin:/bin \
            sh -c 'apt-get update && apt-get install -y --no-install-recommends "$@"' \
            apt $STANDARD_PACKAGES >"$WORK/apt.log" 2>&1; then
        say "apt-get install in the rootfs failed; last lines of its log:"
        tail -n 30 "$WORK/apt.log" >&2
        exit 1
    fi
    rm -f "$root/usr/sbin/policy-rc.d"
    : >"$root/etc/resolv.conf"
    umount "$root/proc"
}

# The main tools' versions, each read by running the tool in the rootfs: "name=version"
# words. A tool the image lacks is left out. The version is the first dotted number of
# the line the command prints.
record_versions() {  # ROOT
    local root=$1 name cmd line v out=()
    while IFS='|' read -r name cmd; do
        [ -n "$name" ] || continue
        line=$(chroot "$root" env PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LC_ALL=C \
            sh -c "$cmd" 2>&1 </dev/null) || continue
        v=$(printf '%s\n' "$line" | grep -oE '[0-9]+(\.[0-9]+)+[0-9A-Za-z.+~-]*' | head -n 1) || true
        [ -n "$v" ] && out+=("$name=$v")
    done <<'EOF'
bash|bash --version | head -n 1
git|git --version
git-lfs|git-lfs --version
curl|curl --version | head -n 1
python3|python3 --version
pip|python3 -m pip --version
pytest|python3 -m pytest --version
node|node --version
npm|npm --version
gcc|gcc -dumpfullversion
make|make --version | head -n 1
cmake|cmake --version | head -n 1
pkg-config|pkg-config --version
jq|jq --version
ripgrep|rg --version | head -n 1
sqlite3|sqlite3 --version
wget|wget --version | head -n 1
zip|zip -v | sed -n 2p
unzip|unzip -v | head -n 1
xz|xz --version | head -n 1
zstd|zstd --version
openssh-client|ssh -V
file|file --version | head -n 1
EOF
    mkdir -p "$root/usr/share/sandboxd-runner"
    printf '%s\n' "${out[@]}" >"$root/usr/share/sandboxd-runner/packages"
    echo "${out[*]}"
}

# Nothing the sandbox needs at run time: caches, docs, man pages, logs (and for minimal,
# the package lists).
clean_rootfs() {  # ROOT FLAVOUR
    local root=$1
    [ "$2" = minimal ] && rm -rf "$root"/var/lib/apt/lists/*
    rm -rf "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
           "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* \
           "$root"/var/log/*.log "$root"/var/log/apt/* "$root"/tmp/* "$root"/var/tmp/* \
           "$root"/root/.npm "$root"/root/.cache
}

import_image() {  # ROOT FLAVOUR PACKAGES START
    local root=$1 tag=$REPO_TAG:$2 old_id size
    old_id=$(docker image inspect -f '{{.Id}}' "$tag" 2>/dev/null || true)
    say "importing as '$tag'"
    tar --numeric-owner -C "$root" -c . |
        docker import -c 'CMD ["sleep","infinity"]' -c 'WORKDIR /workspace' \
            -c "LABEL sandboxd.runner-version=$VERSION" -c "LABEL sandboxd.flavour=$2" \
            -c "LABEL sandboxd.packages=\"$3\"" - "$tag" >/dev/null
    # The image it replaces goes, unless a container still uses it.
    if [ -n "$old_id" ] && [ "$old_id" != "$(docker image inspect -f '{{.Id}}' "$tag")" ]; then
        docker image rm "$old_id" >/dev/null 2>&1 || true
    fi
    size=$(docker image inspect -f '{{.Size}}' "$tag")
    say "built '$tag' in $((SECONDS - $4)) s, $((size / 1000000)) MB"
}

# One debootstrap serves both flavours: each starts from a copy of the bootstrapped rootfs
# (the first one's time includes the debootstrap).
start=$SECONDS
bootstrap "$WORK/base"
for f in "${NEED[@]}"; do
    t0=$SECONDS
    [ "$f" = "${NEED[0]}" ] && t0=$start
    root=$WORK/$f
    cp -a "$WORK/base" "$root"
    [ "$f" = standard ] && install_standard "$root"
    pkgs=$(record_versions "$root")
    clean_rootfs "$root" "$f"
    import_image "$root" "$f" "$pkgs" "$t0"
    rm -rf --one-file-system "$root"
done
