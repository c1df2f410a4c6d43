#!/usr/bin/env bash
# Builds the Debian package from this tree (debian/) in a copy of it, so that the build's
# `make clean` and debian/sandboxd/ never touch the tree's own build/ folders, and puts
# sandboxd_<version>_<arch>.deb (and its -dbgsym) in OUTDIR.
#   usage: deploy/build-deb.sh OUTDIR [--lintian]
# --lintian: then lintian, failing on any error or warning that debian/sandboxd.lintian-overrides
# does not explain. DEB_BUILD_OPTIONS is passed through (nocheck skips `make unit`).
# The copy holds the files git knows plus new ones it does not ignore.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${1:?usage: build-deb.sh OUTDIR [--lintian]}
LINTIAN=0
[ "${2:-}" = --lintian ] && LINTIAN=1

say() { echo "build-deb: $*" >&2; }
for c in dpkg-buildpackage dh; do
    command -v "$c" >/dev/null || { say "$c is missing (deploy/install-deps.sh)"; exit 1; }
done

# A build run from inside make (make test) must not inherit its flags or jobserver.
unset MAKEFLAGS MFLAGS MAKELEVEL
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/sandboxd-deb.XXXXXX")
trap 'rm -rf -- "$work"' EXIT
mkdir "$work/sandboxd"
git -C "$ROOT" ls-files -z --cached --others --exclude-standard |
    (cd "$ROOT" && tar --null -T - --ignore-failed-read -cf -) 2>/dev/null | tar -C "$work/sandboxd" -xf -

say "dpkg-buildpackage -us -uc -b in $work/sandboxd (log: $OUT/build.log)"
if ! (cd "$work/sandboxd" && dpkg-buildpackage -us -uc -b) >"$OUT/build.log" 2>&1; then
    say "dpkg-buildpackage failed; last lines:"
    tail -n 30 "$OUT/build.log" >&2
    exit 1
fi
if [ "$LINTIAN" = 1 ]; then
    command -v lintian >/dev/null || { say "lintian is missing (deploy/install-deps.sh)"; exit 1; }
    # Errors and warnings fail (with --show-overrides lintian fails on overridden ones too).
    lintian --fail-on error,warning -I "$work"/*.changes >"$OUT/lintian.log" 2>&1 || {
        say "lintian:"; grep -v '^N' "$OUT/lintian.log" >&2; exit 1; }
    say "lintian: no error or warning (overrides: debian/sandboxd.lintian-overrides, README)"
fi
mv "$work"/*.deb "$OUT"/
ls "$OUT"/*.deb
