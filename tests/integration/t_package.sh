#!/usr/bin/env bash
# t_package: installing sandboxd on a production host (README: Deploying to production).
# `make install` into a scratch root: every file where the units say, with its mode, /etc
# never overwritten, `make uninstall`. Then the Debian package built from this tree
# (deploy/build-deb.sh, lintian with no error or warning), installed with apt into a clean
# Debian container (the runner image) that has no network, from the .debs that
# deploy/install-deps.sh cached (SANDBOXD_DEB_CACHE; each of the package's Depends must be
# there): the user, the directories and their modes, the conffiles, `sandboxctl --help`,
# sandboxd starting on the package's paths, the hooks, `systemd-analyze verify` of the
# installed units, nothing enabled; a reinstall keeps an edited setting and the modes; a
# purge keeps the repositories. The container carries the label sandboxd.test=t_package-…
# and is removed at exit, whatever happened. The sanitizer run does the make install part.
. "$(dirname "$0")/lib.sh"

IMAGE=sandboxd-runner:minimal
DEB_CACHE=${SANDBOXD_DEB_CACHE:-/var/cache/sandboxd/test-debs}
LABEL=sandboxd.test=t_package-$SFX
T0=$SECONDS

# mode owner:group of a path (the link itself for a symlink)
mode_of() { stat -c '%a %U:%G' "$1" 2>/dev/null; }

# --- make install ---------------------------------------------------------------------------------
R=$_T/root
if make -s -C "$ROOT" install DESTDIR="$R" >"$_T/install.log" 2>&1; then
	ok 'make install DESTDIR=… (PREFIX=/usr/local)'
else
	fail 'make install DESTDIR=… (PREFIX=/usr/local)' "$(tail -n 5 "$_T/install.log")"
fi
for f in bin/sandboxd bin/sandboxctl bin/sbx lib/sandboxd/sandboxd-hook lib/sandboxd/sandboxd-agent \
	lib/sandboxd/egress.sh; do
	check_eq "make install: /usr/local/$f, 0755" '755 root:root' "$(mode_of "$R/usr/local/$f")"
done
for h in pre-receive post-receive; do
	check_eq "make install: hooks/$h is sandboxd-hook" ../sandboxd-hook \
		"$(readlink "$R/usr/local/lib/sandboxd/hooks/$h")"
done
for f in lib/systemd/system/sandboxd.service lib/systemd/system/sandboxd-migrate.service \
	share/doc/sandboxd/README.md share/doc/sandboxd/sandboxd.env.example \
	share/doc/sandboxd/nginx-sandboxd.conf share/man/man8/sandboxd.8 share/man/man8/sandboxctl.8 \
	share/man/man1/sbx.1 share/bash-completion/completions/sbx; do
	check_eq "make install: /usr/local/$f, 0644" '644 root:root' "$(mode_of "$R/usr/local/$f")"
done
check_eq 'make install: /etc/sandboxd, 0750' '750 root:root' "$(mode_of "$R/etc/sandboxd")"
check_eq 'make install: /etc/sandboxd/sandboxd.env, 0640' '640 root:root' "$(mode_of "$R/etc/sandboxd/sandboxd.env")"
check 'make install: /etc/nginx/sites-available/sandboxd.conf' test -f "$R/etc/nginx/sites-available/sandboxd.conf"

# Every program the installed units run, and the hooks directory they set, is installed.
unit_paths() { # the absolute paths that the units in directory $1 run or name as SANDBOXD_HOOKS_DIR
	sed -nE 's/^Exec(Start|StartPre|Reload)=[-+@!:]*([^ ]+).*/\2/p;
		s/^Environment=SANDBOXD_HOOKS_DIR=(.*)/\1/p' "$1"/sandboxd*.service |
		grep -vx /bin/kill | sort -u
}
paths=$(unit_paths "$R/usr/local/lib/systemd/system")
check_eq 'make install: the units run /usr/local/bin and /usr/local/lib/sandboxd' \
	'/usr/local/bin/sandboxctl /usr/local/bin/sandboxd /usr/local/lib/sandboxd/egress.sh /usr/local/lib/sandboxd/hooks' \
	"$(tr '\n' ' ' <<<"$paths" | sed 's/ $//')"
missing=''
for p in $paths; do [[ -e $R$p ]] || missing+=" $p"; done
check_eq 'make install: everything the units run is installed' '' "$missing"

# /etc is the operator's: a second install keeps an edited file; uninstall keeps /etc.
echo '# edited by t_package' >>"$R/etc/sandboxd/sandboxd.env"
make -s -C "$ROOT" install DESTDIR="$R" >>"$_T/install.log" 2>&1
check 'make install again keeps an edited /etc/sandboxd/sandboxd.env' grep -q 'edited by t_package' "$R/etc/sandboxd/sandboxd.env"
make -s -C "$ROOT" uninstall DESTDIR="$R" >>"$_T/install.log" 2>&1
check_eq 'make uninstall removes every file outside /etc' '' "$(cd "$R" && find usr ! -type d 2>/dev/null)"
check 'make uninstall keeps /etc/sandboxd/sandboxd.env' test -f "$R/etc/sandboxd/sandboxd.env"

if [[ ${SANDBOXD_BUILD:-build} != build ]]; then
	# The package is built with the plain flags whatever the run: once per make test.
	printf '# t_package: the package was built and installed in the plain run (%s s)\n' "$((SECONDS - T0))"
	finish
fi

# --- the package ------------------------------------------------------------------------------------
P=$_T/deb
t=$SECONDS
if DEB_BUILD_OPTIONS='nocheck parallel=2' bash "$ROOT/deploy/build-deb.sh" "$P" >"$_T/build-deb.log" 2>&1; then
	ok "dpkg-buildpackage -us -uc -b builds the package ($((SECONDS - t)) s)"
else
	fail 'dpkg-buildpackage -us -uc -b builds the package' "$(tail -n 15 "$_T/build-deb.log")"
	finish
fi
DEB=$(ls "$P"/sandboxd_*_*.deb 2>/dev/null | head -n 1)
if lintian --fail-on error,warning -I "$DEB" >"$_T/lintian.log" 2>&1; then
	ok 'lintian: no error or warning (each override explained in debian/sandboxd.lintian-overrides)'
else
	fail 'lintian: no error or warning' "$(grep -v '^N' "$_T/lintian.log" | head -n 10)"
fi
depends=$(dpkg-deb -f "$DEB" Depends)
for d in git adduser iptables libpq5 libgit2 libfcgi0ldbl; do
	check "the package depends on $d" grep -q "\\b$d" <<<"$depends"
done
check 'nginx and the Docker engine are Recommends (they may be elsewhere)' \
	grep -q 'nginx' <<<"$(dpkg-deb -f "$DEB" Recommends)"

if [[ ! -f $DEB_CACHE/complete || ! -s $DEB_CACHE/Packages ]]; then
	fail "the run-time dependencies' .debs are cached in $DEB_CACHE" 'run deploy/install-deps.sh (as root) first'
	finish
fi
# Each package named in Depends (any of its alternatives) has a .deb there.
absent=''
while read -r alt; do
	found=0
	for n in $(sed -E 's/\([^)]*\)//g; s/\|/ /g' <<<"$alt"); do
		grep -qx "Package: $n" "$DEB_CACHE/Packages" && found=1
	done
	((found)) || absent+=" $alt"
done < <(tr ',' '\n' <<<"$depends" | sed 's/^ *//')
check_eq "every package the package depends on is cached (else add it to RUNTIME in deploy/install-deps.sh)" '' "$absent"

# --- into a clean container, offline ----------------------------------------------------------------
rm_containers() { docker ps -aq --filter "label=$LABEL" | xargs -r docker rm -f >/dev/null 2>&1; }
AT_EXIT+=(rm_containers)
# On an engine that remaps root (the stack's own) the container's root is an unprivileged
# host uid: the package it binds must be reachable by others (the search bit only above it).
chmod o+x "$_T" && chmod -R o+rX "$P"
CID=$(docker run -d --network none --label "$LABEL" -v "$DEB_CACHE:/debs:ro" -v "$P:/pkg:ro" \
	"$IMAGE" sleep 600 2>"$_T/run.err")
check 'a clean container of the runner image, with no network' test -n "$CID"
[[ -n $CID ]] || finish
cx() { docker exec -u 0 "$CID" "$@"; }

t=$SECONDS
if cx bash -c 'set -e
	rm -f /etc/apt/sources.list.d/*
	echo "deb [trusted=yes] file:/debs ./" >/etc/apt/sources.list
	apt-get -q update
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		/pkg/'"${DEB##*/}"' systemd' >"$_T/apt.log" 2>&1; then
	ok "apt-get install of the package (and systemd) from the cached .debs, offline ($((SECONDS - t)) s)"
else
	fail 'apt-get install of the package from the cached .debs, offline' "$(tail -n 15 "$_T/apt.log")"
	finish
fi

pw=$(cx getent passwd sandboxd)
# shellcheck disable=SC2034 # uid is read by check_cond's eval
IFS=: read -r _ _ uid _ _ home shell <<<"$pw"
check 'the system user sandboxd exists' test -n "$pw"
check_cond 'with a system uid' '[[ $uid =~ ^[0-9]+$ ]] && ((uid < 1000))'
check_eq 'its home is /var/lib/sandboxd, its shell nologin' '/var/lib/sandboxd /usr/sbin/nologin' "$home $shell"
check_eq 'and its own group' sandboxd "$(cx id -gn sandboxd)"

cmodes=$(cx stat -c '%n %a %U:%G' /etc/sandboxd /etc/sandboxd/sandboxd.env /var/lib/sandboxd \
	/var/lib/sandboxd/repos /usr/bin/sandboxd /usr/bin/sandboxctl /usr/lib/sandboxd/sandboxd-hook \
	/usr/lib/sandboxd/sandboxd-agent /usr/lib/sandboxd/egress.sh /lib/systemd/system/sandboxd.service \
	/lib/systemd/system/sandboxd-migrate.service /etc/nginx/sites-available/sandboxd.conf \
	/usr/share/doc/sandboxd/README.md /usr/share/man/man8/sandboxd.8.gz /usr/share/man/man8/sandboxctl.8.gz \
	/usr/bin/sbx /usr/share/man/man1/sbx.1.gz /usr/share/bash-completion/completions/sbx 2>&1)
while read -r path want; do
	check_eq "$path: $want" "$path $want" "$(grep "^$path " <<<"$cmodes")"
done <<'EOF'
/etc/sandboxd 750 root:sandboxd
/etc/sandboxd/sandboxd.env 640 root:sandboxd
/var/lib/sandboxd 750 sandboxd:sandboxd
/var/lib/sandboxd/repos 750 sandboxd:sandboxd
/usr/bin/sandboxd 755 root:root
/usr/bin/sandboxctl 755 root:root
/usr/lib/sandboxd/sandboxd-hook 755 root:root
/usr/lib/sandboxd/sandboxd-agent 755 root:root
/usr/lib/sandboxd/egress.sh 755 root:root
/lib/systemd/system/sandboxd.service 644 root:root
/lib/systemd/system/sandboxd-migrate.service 644 root:root
/etc/nginx/sites-available/sandboxd.conf 644 root:root
/usr/share/doc/sandboxd/README.md 644 root:root
/usr/share/man/man8/sandboxd.8.gz 644 root:root
/usr/share/man/man8/sandboxctl.8.gz 644 root:root
/usr/bin/sbx 755 root:root
/usr/share/man/man1/sbx.1.gz 644 root:root
/usr/share/bash-completion/completions/sbx 644 root:root
EOF
for h in pre-receive post-receive; do
	check_eq "hooks/$h is sandboxd-hook" /usr/lib/sandboxd/sandboxd-hook "$(cx readlink -f "/usr/lib/sandboxd/hooks/$h")"
done
conff=$(cx dpkg-query -W -f='${Conffiles}' sandboxd)
for f in /etc/sandboxd/sandboxd.env /etc/nginx/sites-available/sandboxd.conf; do
	check "$f is a conffile" grep -q " $f " <<<"$conff"
done
check_eq 'every library the binaries link is installed' '' \
	"$(cx sh -c 'ldd /usr/bin/sandboxd /usr/bin/sandboxctl /usr/bin/sbx /usr/lib/sandboxd/sandboxd-hook' | grep 'not found')"

check_eq 'sbx --help runs' 'usage: sbx [--json] COMMAND …' "$(cx sbx --help 2>&1 | head -n 1)"
out=$(cx runuser -u sandboxd -- sandboxctl --help 2>&1)
check_eq 'sandboxctl --help runs (as the user sandboxd)' 'usage: sandboxctl COMMAND [ARGS]' "$(head -n 1 <<<"$out")"
# sandboxd itself, as the unit would run it (its user, /run/sandboxd), with no setting but a
# database that is not there: it starts on the package's own paths (the hooks' default
# directory among them), serves nothing, and drains on SIGTERM with 0.
cx sh -c 'install -d -o sandboxd -g sandboxd -m 0755 /run/sandboxd'
out=$(cx timeout --preserve-status -s TERM 3 setpriv --reuid sandboxd --regid sandboxd --clear-groups \
	env SANDBOXD_DATABASE_URL='postgresql:///sandboxd?host=/nonexistent' SANDBOXD_WORKERS=1 \
	SANDBOXD_GIT_WORKERS=1 /usr/bin/sandboxd 2>&1)
rc=$?
check_eq 'sandboxd starts as the user sandboxd on the package layout, and drains on SIGTERM' \
	'0 listening on /run/sandboxd/fcgi.sock' "$rc $(grep -o 'listening on [^ ]*' <<<"$out" | head -n 1)"
check 'the hook runs: a push that did not come through sandboxd is let in' \
	cx sh -c '/usr/lib/sandboxd/hooks/pre-receive </dev/null'
check_eq "the unit's sandboxd is the package's, and so is its hooks directory" \
	'/usr/bin/sandboxctl /usr/bin/sandboxd /usr/lib/sandboxd/egress.sh /usr/lib/sandboxd/hooks' \
	"$(docker cp "$CID:/lib/systemd" "$_T/units" && unit_paths "$_T/units/system" | tr '\n' ' ' | sed 's/ $//')"

# --man=no: systemd-analyze would run man(1) for each Documentation= (the image has none);
# the man pages themselves are checked above.
out=$(cx systemd-analyze verify --man=no /lib/systemd/system/sandboxd.service \
	/lib/systemd/system/sandboxd-migrate.service 2>&1)
rc=$?
check_eq 'systemd-analyze verify of the installed units passes, silently' '0 ' "$rc $out"
cx sh -c 'sed "s|^ExecStart=/usr/bin/sandboxd|ExecStart=/usr/bin/sandboxd-missing|" \
	/lib/systemd/system/sandboxd.service >/tmp/sandboxd-broken.service'
check 'and it fails on a unit whose program is missing (the check sees what it checks)' \
	eval '! cx systemd-analyze verify --man=no /tmp/sandboxd-broken.service >/dev/null 2>&1'
check_eq 'nothing is enabled' disabled "$(cx systemctl is-enabled sandboxd.service 2>&1)"
check_eq 'no wants link for it' '' "$(cx sh -c 'ls /etc/systemd/system/*.wants/ 2>/dev/null | grep sandboxd')"

# --- a reinstall (as an upgrade does) and a purge -----------------------------------------------------
cx sh -c 'echo "SANDBOXD_WORKERS=3" >>/etc/sandboxd/sandboxd.env; mkdir /var/lib/sandboxd/repos/alice;
	chown sandboxd: /var/lib/sandboxd/repos/alice'
if cx sh -c "dpkg -i /pkg/${DEB##*/}" >>"$_T/apt.log" 2>&1; then ok 'the package installs again over itself'
else fail 'the package installs again over itself' "$(tail -n 10 "$_T/apt.log")"; fi
check 'the edited setting is kept (a conffile)' cx grep -qx SANDBOXD_WORKERS=3 /etc/sandboxd/sandboxd.env
check_eq 'and so is its mode' '640 root:sandboxd' "$(cx stat -c '%a %U:%G' /etc/sandboxd/sandboxd.env)"
if cx sh -c 'DEBIAN_FRONTEND=noninteractive apt-get purge -y -q sandboxd' >>"$_T/apt.log" 2>&1; then ok 'apt-get purge sandboxd'
else fail 'apt-get purge sandboxd' "$(tail -n 10 "$_T/apt.log")"; fi
check_eq 'purge removes /etc/sandboxd and the statoverrides' gone \
	"$(cx sh -c 'test -e /etc/sandboxd || echo gone; dpkg-statoverride --list | grep sandboxd')"
check 'purge keeps the repositories' cx test -d /var/lib/sandboxd/repos/alice
check 'and the user who owns them' eval 'cx getent passwd sandboxd >/dev/null'

printf '# t_package: %s s in all\n' "$((SECONDS - T0))"
finish
