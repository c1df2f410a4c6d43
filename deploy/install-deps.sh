#!/usr/bin/env bash
# Installs the Debian packages that building, testing and running sandboxd need.
# Idempotent and quiet: one dpkg-query when everything is there; `apt-get update` and
# `apt-get install` only for what is missing. Needs root when something is missing.
set -euo pipefail

PACKAGES=(
    build-essential pkg-config
    libfcgi-dev libjson-c-dev libgit2-dev libpq-dev libcurl4-openssl-dev libssl-dev
    libcmocka-dev zlib1g-dev libdeflate-dev clang libclang-rt-14-dev
    postgresql nginx-light docker.io
    curl jq git wrk ca-certificates iproute2 iptables procps psmisc openssl fcgiwrap debootstrap
    valgrind shellcheck musl-tools
    prometheus  # t_metrics runs its own instance on a free loopback port; the service never starts
    debhelper lintian
    xfsprogs  # the sandboxes' engine keeps its data root on XFS with pquota: disk limits (deploy/sandbox-engine.sh)
    gnuplot-nox  # make bench draws each operation's latency distribution (bench/plot.sh)
)

# examples/giturl.py signs owner git URLs with PyJWT (t_jwt_examples runs it with
# /usr/bin/python3); examples/giturl.mjs uses Node.js and npm, asked for below with the MCP tests'.
PACKAGES+=(python3 python3-jwt python3-cryptography)

# make lint compares docs/openapi.yaml with the route table (tests/check-openapi.py) and
# converts it to the JSON the service serves, with /usr/bin/python3's yaml.
PACKAGES+=(python3-yaml)

# The Python SDK installs as its README says, with no package index: a venv with Debian's
# site packages, and pip with Debian's setuptools (t_sdk_python).
PACKAGES+=(python3-venv python3-pip python3-setuptools)

# t_lfs pushes and clones Git LFS objects with the stock client (git lfs).
PACKAGES+=(git-lfs)

# t_gvisor and make bench run gVisor's runsc as a runtime of an engine of their own
# (isolation "gvisor"); the service itself never runs it.
PACKAGES+=(runsc)

# What the Debian package needs at run time (debian/control's Depends and the libraries
# its binaries link), plus systemd for `systemd-analyze verify`: tests/integration/t_package.sh
# installs the package into a container with no network, from .debs of these and all they
# depend on, downloaded here into $DEB_CACHE (the tests never download).
DEB_CACHE=${SANDBOXD_DEB_CACHE:-/var/cache/sandboxd/test-debs}
RUNTIME=(
    adduser git iproute2 iptables libc6 libcurl4 libdeflate0 libfcgi0ldbl libgit2-1.5
    libjson-c5 libpq5 libssl3 zlib1g systemd
)

# dpkg-query prints nothing (and complains on stderr) for packages it has never heard of;
# anything not reported as "ii" (installed, no errors) counts as missing.
installed=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${PACKAGES[@]}" 2>/dev/null || true)
missing=()
for p in "${PACKAGES[@]}"; do
    if ! grep -qE "^${p} ii" <<<"$installed"; then
        missing+=("$p")
    fi
done
# The MCP tests run the official MCP SDK on Node.js, and make lint Redocly's CLI
# (tests/lint-openapi.sh, npm ci of its pinned version). Some machines have Node.js from
# elsewhere (NodeSource's nodejs package carries npm itself, and Debian's npm would conflict
# with it): ask for Debian's packages only when the commands are missing.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
# t_previews loads a preview in a headless browser: Debian's Chromium (run as root with
# --no-sandbox, on loopback only; never by the service).
if ! grep -qE '^chromium ii' <<<"$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' chromium 2>/dev/null)"; then
    missing+=(chromium)
fi

# The .debs of RUNTIME and of everything they depend on (every alternative too), with an
# index, so that a container can `apt-get install` from file:$DEB_CACHE. Done again when
# the list changes or the cache is incomplete.
fill_deb_cache() {
    local want tmp closure
    want=$(printf '%s\n' "${RUNTIME[@]}")
    if [ -f "$DEB_CACHE/runtime.list" ] && [ "$(cat "$DEB_CACHE/runtime.list")" = "$want" ] &&
       [ -s "$DEB_CACHE/Packages" ] && [ -f "$DEB_CACHE/complete" ]; then
        return 0
    fi
    if [ "$(id -u)" -ne 0 ]; then
        echo "install-deps: $DEB_CACHE needs filling (run this script as root)" >&2
        return 1
    fi
    echo "install-deps: downloading the package's run-time dependencies into $DEB_CACHE" >&2
    mkdir -p "$(dirname "$DEB_CACHE")"
    tmp=$(mktemp -d "$(dirname "$DEB_CACHE")/.test-debs.XXXXXX")
    closure=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
        --no-breaks --no-replaces --no-enhances "${RUNTIME[@]}" | grep -E '^[a-z0-9]' | sort -u)
    chown _apt "$tmp" 2>/dev/null || true
    # Current lists: a machine may have had them removed, or keep old ones.
    apt-get -q -o DPkg::Lock::Timeout=300 update >"$tmp/update.log" 2>&1 ||
        { echo "install-deps: apt-get update failed" >&2; tail -n 20 "$tmp/update.log" >&2; rm -rf -- "$tmp"; return 1; }
    # shellcheck disable=SC2086 # one package name a word
    if ! (cd "$tmp" && apt-get -q download $closure >"$tmp/download.log" 2>&1) ||
       ! (cd "$tmp" && dpkg-scanpackages -m . >Packages 2>/dev/null); then
        echo "install-deps: downloading into $DEB_CACHE failed:" >&2
        tail -n 20 "$tmp/download.log" >&2
        rm -rf -- "$tmp"
        return 1
    fi
    printf '%s\n' "$want" >"$tmp/runtime.list"
    : >"$tmp/complete"
    chown -R root:root "$tmp"
    chmod 0755 "$tmp"
    rm -rf -- "$DEB_CACHE"
    mv "$tmp" "$DEB_CACHE"
    echo "install-deps: $(grep -c '^Package:' "$DEB_CACHE/Packages") packages in $DEB_CACHE" >&2
}

if [ ${#missing[@]} -eq 0 ]; then
    fill_deb_cache
    exit $?
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages: ${missing[*]} (run this script as root)" >&2
    exit 1
fi

echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive

# Packages such as postgresql, nginx and docker.io start their system services on install
# (a cluster on :5432, nginx on :80). Our scripts start private instances themselves, so
# keep apt from starting anything, unless the machine already has a policy of its own.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 0755 "$policy"
    trap 'rm -f "$policy"' EXIT
fi

apt_opts=(-q -y -o Dpkg::Use-Pty=0 -o DPkg::Lock::Timeout=300)
log=$(mktemp)
if ! apt-get "${apt_opts[@]}" update >"$log" 2>&1 ||
   ! apt-get "${apt_opts[@]}" install --no-install-recommends "${missing[@]}" >>"$log" 2>&1; then
    echo "install-deps: apt-get failed; last lines of its output:" >&2
    tail -n 30 "$log" >&2
    rm -f "$log"
    exit 1
fi
rm -f "$log"
fill_deb_cache
echo "install-deps: done" >&2
