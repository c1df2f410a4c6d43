#!/usr/bin/env bash
# Builds the sandbox runner image locally from Debian packages, with no registry:
# debootstrap (minbase, bookworm) + bash git git-lfs coreutils procps curl ca-certificates
# (its package writes git-lfs's filters into /etc/gitconfig), an
# unprivileged user sandbox (61000:61000, the fallback user of SANDBOXD_SANDBOX_UID, home /home/sandbox), /workspace owned by it, apt
# lists and docs removed, then `docker import` with CMD ["sleep","infinity"].
#   usage: build-runner-image.sh [--force]
# The tag is $SANDBOXD_RUNNER_IMAGE (default sandboxd-runner:bookworm). When the image
# already exists this is a no-op (the image is the cache), unless --force.
# The only network it uses is the Debian mirror that apt's own sources name (read from
# /etc/apt/sources.list and /etc/apt/sources.list.d/*), or $SANDBOXD_DEBIAN_MIRROR.
# Needs root (debootstrap) and a Docker engine that answers.
set -euo pipefail

TAG=${SANDBOXD_RUNNER_IMAGE:-sandboxd-runner:bookworm}
# What the service expects inside (the user, /workspace, /.sandboxd-stage): an image of an
# older version is built again, so that a machine that kept one gets the new layout.
VERSION=4
SUITE=bookworm
PACKAGES=bash,git,git-lfs,coreutils,procps,curl,ca-certificates
FORCE=0

for arg in "$@"; do
    case $arg in
    --force) FORCE=1 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-runner-image: unknown argument '$arg'" >&2; exit 2 ;;
    esac
done

say() { echo "build-runner-image: $*" >&2; }
die() { say "$*"; exit 1; }

command -v docker >/dev/null 2>&1 || die "docker is not installed (run deploy/install-deps.sh)"
docker version --format '{{.Server.APIVersion}}' >/dev/null 2>&1 ||
    die "no Docker engine answers (run deploy/ensure-docker.sh)"

have=$(docker image inspect -f '{{index .Config.Labels "sandboxd.runner-version"}}' "$TAG" 2>/dev/null || true)
if [ "$FORCE" -eq 0 ] && [ "$have" = "$VERSION" ]; then
    say "image '$TAG' (version $VERSION) exists; nothing to do (--force rebuilds it)"
    exit 0
fi
old_id=$(docker image inspect -f '{{.Id}}' "$TAG" 2>/dev/null || true)
[ -n "$old_id" ] && [ "$FORCE" -eq 0 ] &&
    say "image '$TAG' is of version '${have:-1}', not $VERSION: building it again"

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

ROOT=$WORK/rootfs
start=$SECONDS
say "debootstrap $SUITE from $MIRROR into $ROOT"
if ! debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$ROOT" "$MIRROR" \
        >"$WORK/debootstrap.log" 2>&1; then
    say "debootstrap failed; last lines of its log:"
    tail -n 30 "$WORK/debootstrap.log" >&2
    [ -f "$ROOT/debootstrap/debootstrap.log" ] && tail -n 30 "$ROOT/debootstrap/debootstrap.log" >&2
    exit 1
fi

# The user: written straight into the account files (no chroot, no daemons).
grep -q '^[^:]*:[^:]*:61000:' "$ROOT/etc/passwd" && die "uid 61000 already exists in the rootfs"
grep -q '^[^:]*:[^:]*:61000:' "$ROOT/etc/group" && die "gid 61000 already exists in the rootfs"
echo 'sandbox:x:61000:61000:sandbox:/home/sandbox:/bin/bash' >>"$ROOT/etc/passwd"
echo 'sandbox:x:61000:' >>"$ROOT/etc/group"
echo 'sandbox:!:19000:0:99999:7:::' >>"$ROOT/etc/shadow"
[ -f "$ROOT/etc/gshadow" ] && echo 'sandbox:!::' >>"$ROOT/etc/gshadow"
install -d -m 0755 -o 61000 -g 61000 "$ROOT/home/sandbox" "$ROOT/workspace"
# Where the file API stages a write (through the engine, as root) before the sandbox's user
# moves it into place: root's, so that the user cannot swap it for a link; sticky and
# writable by all but not listable, like a /tmp whose names cannot be read.
install -d -m 1733 -o 0 -g 0 "$ROOT/.sandboxd-stage"
[ -d "$ROOT/etc/skel" ] && cp -a "$ROOT/etc/skel/." "$ROOT/home/sandbox/" &&
    chown -R 61000:61000 "$ROOT/home/sandbox"

# Git LFS's filters are in /etc/gitconfig: the package's own `git lfs install --system`.
# Nothing the sandbox needs at run time: package lists, caches, docs, man pages, logs.
rm -rf "$ROOT"/var/lib/apt/lists/* "$ROOT"/var/cache/apt/*.bin "$ROOT"/var/cache/apt/archives/*.deb \
       "$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/* "$ROOT"/usr/share/info/* \
       "$ROOT"/var/log/*.log "$ROOT"/var/log/apt/* "$ROOT"/tmp/* "$ROOT"/var/tmp/*

say "importing as '$TAG'"
tar --numeric-owner -C "$ROOT" -c . |
    docker import -c 'CMD ["sleep","infinity"]' -c 'WORKDIR /workspace' \
        -c "LABEL sandboxd.runner-version=$VERSION" - "$TAG" >/dev/null

# The image it replaces goes, unless a container still uses it.
[ -n "$old_id" ] && docker image rm "$old_id" >/dev/null 2>&1 || true
size=$(docker image inspect -f '{{.Size}}' "$TAG")
say "built '$TAG' in $((SECONDS - start)) s, $((size / 1000000)) MB"
