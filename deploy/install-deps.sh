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
# The MCP tests run the official MCP SDK on Node.js. Some machines have Node.js from
# elsewhere (NodeSource's nodejs package carries npm itself, and Debian's npm would conflict
# with it): ask for Debian's packages only when the commands are missing.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
[ ${#missing[@]} -eq 0 ] && exit 0

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
echo "install-deps: done" >&2
