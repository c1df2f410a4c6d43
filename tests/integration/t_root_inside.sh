#!/usr/bin/env bash
# t_root_inside.sh: root inside, nobody outside (SPEC.md §4). On the stack's own engine
# (deploy/sandbox-engine.sh: dockerd --userns-remap): /healthz says userns; a command runs
# as uid 0 inside while its process is, seen from the host's /proc, an unprivileged uid of
# dockremap's range (neither root nor the service's user); its capabilities (PID 1's and an
# exec's) are Docker's default set without NET_RAW and MKNOD, under no-new-privileges and
# seccomp; `apt-get install ./x.deb` of a package built here with dpkg-deb works offline and
# its program runs; a file written through the file API is root's inside; and a container
# this test makes on the same engine with the same options, binding host files, reads the
# one the remapped root's host uid owns and not a root-owned 0600 one, nor the service's
# signing key. Then the fallback, for real: a second stack on the host's engine (no
# userns): /healthz says fallback, commands run as uid 61000 with no capability, and the
# file API writes as that user. Everything it makes is removed on exit.
. "$(dirname "$0")/lib.sh"

# Docker's default capabilities (CHOWN DAC_OVERRIDE FOWNER FSETID KILL SETGID SETUID SETPCAP
# NET_BIND_SERVICE SYS_CHROOT AUDIT_WRITE SETFCAP), i.e. its default set less NET_RAW (13)
# and MKNOD (27).
ROOT_CAPS=00000000a00405fb
SVC_UID=$(id -u "${SANDBOXD_USER:-sandboxd}" 2>/dev/null || id -u)

expect_box_error() { # STATUS TEXT NAME: a sandbox route's {"error"}
	if [[ $STATUS == "$1" && $(_json .error) == "$2" ]]; then ok "$3"; else fail "$3" "expected $1 {\"error\":\"$2\"}, got $STATUS $BODY"; fi
}
run() { # SANDBOX JSON: an exec; STATUS, BODY
	api POST "$SB/$1/exec" "$2" "$OT"
}
exec_out() { # SANDBOX CMD: the command's stdout, or "exit N" when it failed
	run "$1" "$(jq -nc --arg c "$2" '{cmd: $c}')"
	if [[ $STATUS == 200 && $(_json .exitCode) == 0 ]]; then _json .stdout; else echo "exit $(_json .exitCode) $(_json .stderr)"; fi
}

# ---- the stack's own engine ---------------------------------------------------------------------------
api GET /healthz "" -
expect_status 200 '/healthz answers'
expect_json .sandbox_user.mode userns '/healthz: sandboxes run as a remapped root (userns)'
expect_json .sandbox_user.uid 0 '/healthz: uid 0 inside'

mk_sandbox "ri$SFX" r
check_eq 'id -u inside is 0' 0 "$(exec_out "$ID" 'id -u')"
check_eq 'HOME is root'"'"'s' /root "$(exec_out "$ID" 'printf %s "$HOME"')"
CID=$(docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$ID")")
check_cond 'its container is on the stack'"'"'s engine (DOCKER_HOST)' '[[ -n $CID ]]'
PID=$(docker inspect -f '{{.State.Pid}}' "$CID" 2>/dev/null)
host_uid() { awk '/^Uid:/ { print $3 }' "/proc/$1/status" 2>/dev/null; }
HUID=$(host_uid "$PID")
SUB=$(awk -F: '$1 == "dockremap" { print $2 ":" $3; exit }' /etc/subuid)
check_cond "its PID 1 (host pid $PID) runs on the host as uid $HUID: neither root nor the service ($SVC_UID)" \
	'[[ $HUID =~ ^[0-9]+$ ]] && ((HUID != 0 && HUID != SVC_UID))'
check_cond "and within dockremap's subordinate range ($SUB)" \
	'[[ -n $SUB ]] && ((HUID >= ${SUB%:*} && HUID < ${SUB%:*} + ${SUB#*:}))'
# An exec's process too: a sleep in the container's pid namespace, seen from the host
# while the exec runs.
NSPID=$(readlink "/proc/$PID/ns/pid")
exec_sleep() {
	local f p
	for f in /proc/[0-9]*/comm; do
		p=${f#/proc/}
		p=${p%/comm}
		[[ $(cat "$f" 2>/dev/null) == sleep && $(readlink "/proc/$p/ns/pid" 2>/dev/null) == "$NSPID" ]] &&
			HPID=$p && return 0
	done
	return 1
}
HPID=''
(run "$ID" '{"cmd":"exec sleep 8"}') &
BG=$!
check 'an exec'"'"'s process shows on the host' wait_until 7 exec_sleep
check_cond "and runs there as the same remapped uid ($HPID: $(host_uid "$HPID"))" \
	'[[ -n $HPID && $(host_uid "$HPID") == "$HUID" ]]'
wait "$BG"

check_eq "PID 1's capabilities: Docker's default set without NET_RAW and MKNOD" "$ROOT_CAPS" \
	"$(exec_out "$ID" "awk '/^CapEff:/ { print \$2 }' /proc/1/status")"
check_eq "an exec's too" "$ROOT_CAPS" "$(exec_out "$ID" "awk '/^CapEff:/ { print \$2 }' /proc/self/status")"
check_eq 'no-new-privileges and seccomp filtering stay' '1 2' \
	"$(exec_out "$ID" "awk '/^NoNewPrivs:/ { n = \$2 } /^Seccomp:/ { s = \$2 } END { print n, s }' /proc/self/status")"
check_eq 'MKNOD is gone: no device node' 'refused' \
	"$(exec_out "$ID" 'mknod /tmp/n c 1 3 2>/dev/null && echo made || echo refused')"

# ---- apt-get install of a local package, offline --------------------------------------------------------
PKG=$_T/pkg
mkdir -p "$PKG/DEBIAN" "$PKG/usr/local/bin"
cat >"$PKG/DEBIAN/control" <<EOF
Package: sandboxd-rootin-hello
Version: 1.0
Architecture: all
Maintainer: sandboxd tests <t@t>
Description: a package the test builds
EOF
printf '#!/bin/sh\necho hello from a package, as uid $(id -u)\n' >"$PKG/usr/local/bin/rootin-hello"
chmod 0755 "$PKG/usr/local/bin/rootin-hello"
if dpkg-deb --root-owner-group -b "$PKG" "$_T/x.deb" >/dev/null 2>&1; then
	ok 'a package built with dpkg-deb'
else
	fail 'a package built with dpkg-deb' 'dpkg-deb -b failed'
fi
api POST "$SB/$ID/write" "$(jq -nc --arg c "$(base64 -w0 "$_T/x.deb")" '{path: "/workspace/x.deb", content: $c}')" "$OT"
expect_status 200 'the package written into the sandbox through the file API'
# Offline: apt's every fetch would go through a proxy where nothing listens.
run "$ID" '{"cmd":"cd /workspace && apt-get install -y -o Acquire::http::Proxy=http://127.0.0.1:9/ -o Acquire::https::Proxy=http://127.0.0.1:9/ ./x.deb >/tmp/apt.log 2>&1; echo $?; tail -n 3 /tmp/apt.log"}'
check_eq 'apt-get install ./x.deb exits 0, offline' 0 "$(_json .stdout | head -n 1)"
check_eq 'and its program runs' 'hello from a package, as uid 0' "$(exec_out "$ID" rootin-hello)"
check_eq 'dpkg knows it installed' 'install ok installed' \
	"$(exec_out "$ID" "dpkg-query -W -f '\${Status}' sandboxd-rootin-hello")"

# ---- the file API writes as root -----------------------------------------------------------------------
api POST "$SB/$ID/write" '{"path":"own/new.txt","content":"aGkK","mode":416}' "$OT"
expect_status 200 'a file written through the file API'
check_eq 'is root'"'"'s inside, with its mode' '0:0 640' "$(exec_out "$ID" 'stat -c "%u:%g %a" own/new.txt')"
api POST "$SB/$ID/read" '{"path":"own/new.txt"}' "$OT"
expect_json .content aGkK 'and reads back'

# ---- the remapped root cannot read what its host uid does not own ----------------------------------------
HD=$(mktemp -d /tmp/sandboxd-rootin.XXXXXX)
AT_EXIT+=("rm -rf -- '$HD'")
chmod 0755 "$HD"
echo secret >"$HD/root-only" && chmod 0600 "$HD/root-only"
echo mine >"$HD/remapped" && chmod 0600 "$HD/remapped" && chown "${SUB%:*}:${SUB%:*}" "$HD/remapped"
KEY=$SANDBOXD_VAR/keys/signing.pem
TC=rootin-$SFX
AT_EXIT+=("docker rm -f '$TC' >/dev/null 2>&1")
# The options sandboxd gives a sandbox (docker_container.c, boxuser.h), and three host files bound.
if docker run -d --name "$TC" --label "sandboxd.test=$TEST_NAME" --user 0:0 \
	--cap-drop NET_RAW --cap-drop MKNOD --security-opt no-new-privileges --init \
	--pids-limit 64 --memory 128m --network none \
	-v "$HD/root-only:/mnt/root-only:ro" -v "$HD/remapped:/mnt/remapped:ro" -v "$KEY:/mnt/key:ro" \
	sandboxd-runner:minimal sleep 60 >/dev/null 2>"$_T/run.err"; then
	ok 'a container of the test'"'"'s own on the same engine, as root, binding host files'
else
	fail 'a container of the test'"'"'s own on the same engine' "$(cat "$_T/run.err")"
fi
in_tc() { docker exec "$TC" sh -c "$1" 2>&1; }
check_eq 'it is root inside' 0 "$(in_tc 'id -u')"
check_eq 'it reads the file the remapped root'"'"'s host uid owns' mine "$(in_tc 'cat /mnt/remapped')"
check_eq 'not a root-owned 0600 file of the host' 'cat: /mnt/root-only: Permission denied' \
	"$(in_tc 'cat /mnt/root-only')"
check_eq 'nor the service'"'"'s signing key' 'cat: /mnt/key: Permission denied' \
	"$(in_tc 'cat /mnt/key >/dev/null')"
check_eq 'nor can it take the file (chown is not the host'"'"'s)' refused \
	"$(in_tc 'chown 0:0 /mnt/root-only 2>/dev/null && echo took || echo refused')"

api POST "$SB/$ID/close" '{}' "$OT"
expect_status 204 'the sandbox closes'

# ---- the fallback, for real: a second stack on the host's engine ------------------------------------------
# Its image: this engine's, under a tag of this test's own in the host's engine (the host's
# sandboxd-runner:minimal is other stacks'), removed at exit.
HOST=unix:///var/run/docker.sock
FB_IMAGE=sandboxd-runner:rootin-fallback-$SFX
if ! docker -H "$HOST" version >/dev/null 2>&1; then
	fail 'the host'"'"'s engine answers (for the fallback)' "no engine on $HOST"
	finish
fi
AT_EXIT+=("docker -H '$HOST' image rm '$FB_IMAGE' >/dev/null 2>&1; docker image rm '$FB_IMAGE' >/dev/null 2>&1")
t0=$SECONDS
if docker tag sandboxd-runner:minimal "$FB_IMAGE" && docker save "$FB_IMAGE" | docker -H "$HOST" load -q >/dev/null; then
	ok "the runner image is in the host's engine as $FB_IMAGE ($((SECONDS - t0)) s)"
else
	fail 'the runner image is loaded into the host'"'"'s engine' 'docker save | docker load failed'
	finish
fi
private_engine_dir rif   # D, and the second stack's removal at exit (lib.sh)
t0=$SECONDS
# SANDBOXD_BRIDGE empty: not the main stack's bridge (local-stack.sh reads empty as unset).
private_stack_up stack "a second stack on the host's engine" \
	SANDBOXD_WORKERS=2 SANDBOXD_BRIDGE= \
	SANDBOXD_OWN_ENGINE=0 DOCKER_HOST="$HOST" SANDBOXD_IMAGES="minimal=$FB_IMAGE" SANDBOXD_POOL_SIZE=0 \
	SANDBOXD_SANDBOX_MEMORY_MB=256
ok "(up in $((SECONDS - t0)) s)"
(
	private_stack_use stack
	api GET /healthz "" -
	expect_json .sandbox_user.mode fallback '/healthz on the host'"'"'s engine: fallback'
	expect_json .sandbox_user.uid 61000 '/healthz: uid 61000'
	mk_sandbox "rf$SFX" r
	check_eq 'id -u inside is 61000' 61000 "$(exec_out "$ID" 'id -u')"
	check_eq 'HOME is the sandbox user'"'"'s' /home/sandbox "$(exec_out "$ID" 'printf %s "$HOME"')"
	check_eq 'no capability at all (PID 1)' 0000000000000000 \
		"$(exec_out "$ID" "awk '/^CapEff:/ { print \$2 }' /proc/1/status")"
	check_eq 'nor an exec' 0000000000000000 "$(exec_out "$ID" "awk '/^CapEff:/ { print \$2 }' /proc/self/status")"
	CID=$(docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$ID")")
	check_eq 'its PID 1 is uid 61000 on the host too (no remapping)' 61000 \
		"$(host_uid "$(docker inspect -f '{{.State.Pid}}' "$CID")")"
	api POST "$SB/$ID/write" "$(jq -nc --arg c "$(base64 -w0 "$_T/x.deb")" '{path: "/workspace/x.deb", content: $c}')" "$OT"
	expect_status 200 'the package written into this sandbox too'
	run "$ID" '{"cmd":"cd /workspace && apt-get install -y ./x.deb 2>&1; echo \"exit $?\""}'
	check_cond 'apt-get install refuses the fallback user ("are you root?")' \
		'[[ $(_json .stdout) == *"are you root?"* && $(_json .stdout) == *"exit 100" ]]'
	api POST "$SB/$ID/write" '{"path":"own/new.txt","content":"aGkK"}' "$OT"
	expect_status 200 'a file written through the file API'
	check_eq 'is the fallback user'"'"'s' '61000:61000' "$(exec_out "$ID" 'stat -c "%u:%g" own/new.txt')"
	api POST "$SB/$ID/read" '{"path":"/etc/shadow"}' "$OT"
	expect_box_error 403 'cannot read /etc/shadow: permission denied' "the file API acts as that user: /etc/shadow 403"
	api POST "$SB/$ID/write" '{"path":"/etc/newfile","content":"eA=="}' "$OT"
	expect_box_error 403 'cannot write /etc/newfile: permission denied' 'creating a file in /etc: 403'
	api POST "$SB/$ID/close" '{}' "$OT"
	expect_status 204 'the sandbox closes'
)
finish
