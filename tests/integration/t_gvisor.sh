#!/usr/bin/env bash
# t_gvisor.sh: isolation "gvisor" (issue 32 C, docs/api/sandboxes.md, isolation.h,
# decisions 0083 and 0084). An engine of the test's own (lib.sh: its bridge, its data root in
# memory, --userns-remap=default like the local stack's) and a stack on it with a warm pool.
# Refused by name first, with no row and no container: an unknown isolation (400), gvisor
# where no engine offers it (422), and on an engine registered with runsc that has no runsc
# (503: the engine named, never runc); sandboxctl engine runtime and engine add --runtime.
# Then runsc becomes a runtime of that engine (deploy/runsc-netstack.sh, --platform=ptrace,
# --file-access=shared; dockerd reloads on SIGHUP) and /healthz says so. A gVisor sandbox of
# the standard image: made cold beside a ready warm container, under runsc (HostConfig), out
# of the engine's remapping, gVisor's kernel inside, root inside and nobody outside; its GET,
# its create's audit row and the row say which. The workflow under it: the clone, execs
# through the agent, the file API (raw too) and the engine's archive API on the same files,
# a git push, a dependency-free npm ci, an offline apt-get install ./x.deb, a preview; its
# close ends its gVisor processes. A container sandbox beside it runs runc on the host's
# kernel. Everything it starts is removed on exit.
. "$(dirname "$0")/lib.sh"

for t in "$DOCKERD" ip docker dpkg-deb; do
	if ! command -v "$t" >/dev/null 2>&1; then
		fail "$t is installed" "this test starts an engine of its own and builds a package"
		finish
	fi
done
if [[ $(id -u) != 0 ]]; then
	skip 'not root: an engine and a bridge of its own need root'
	finish
fi
for img in minimal standard; do
	if ! docker image inspect "sandboxd-runner:$img" >/dev/null 2>&1; then
		fail "the runner image $img is in the stack's engine" 'run deploy/build-runner-image.sh'
		finish
	fi
done
RUNSC=$(command -v runsc || true)
WRAP=$ROOT/deploy/runsc-netstack.sh

# ---- an engine of its own (remapped root, as the local stack's), runc only at first ---------------
private_engine_dir gv
chmod 0711 "$D" # the service's user reaches the engine's socket inside
private_engine_up gv --userns-remap=default
if docker save sandboxd-runner:standard | dk load -q >/dev/null; then
	ok 'the standard image is loaded into it (node, npm, python3, apt)'
else
	fail 'the standard image is loaded into it' 'docker save | docker load failed'
	finish
fi
private_stack_up stack 'a stack of its own on that engine (gv), with a warm pool of 1' \
	SANDBOXD_WORKERS=3 SANDBOXD_GIT_WORKERS=2 SANDBOXD_BRIDGE="$BR" \
	SANDBOXD_DOCKER_HOST="unix://$SOCK" SANDBOXD_ENGINE_NAME=gv SANDBOXD_POOL_SIZE=1 \
	SANDBOXD_REAPER_INTERVAL=1 SANDBOXD_SANDBOX_MEMORY_MB=1024 \
	SANDBOXD_SANDBOX_NETWORK=bridge SANDBOXD_EGRESS=open \
	SANDBOXD_IMAGES=standard=sandboxd-runner:standard,minimal=sandboxd-runner:minimal
private_stack_use stack

exec_out() { # SANDBOX CMD: the command's stdout, or "exit N <stderr>" when it failed
	api POST "$SB/$1/exec" "$(jq -nc --arg c "$2" '{cmd: $c}')" "$OT"
	if [[ $STATUS == 200 && $(_json .exitCode) == 0 ]]; then _json .stdout; else echo "exit $(_json .exitCode) $(_json .stderr)"; fi
}
rows_of() { sql "select count(*) from sandboxes s join accounts a on a.id = s.account_id where a.login = '$O'"; }
ours() { dk ps -aq --filter label=sandboxd.sandbox | grep -c . || true; } # containers, warm ones too
gv_health() { # the isolation.gvisor entries of /healthz, as engine|runtime|ready|error lines
	api GET /healthz "" -
	_json '.isolation.gvisor[] | [.engine, .runtime, (.ready | tostring), (.error // "")] | join("|")'
}
NOT_HERE="the engine gv has no runtime runsc: isolation gvisor cannot run there"

O="gv$SFX"
mk_repo "$O" r
warm_ready() { (($(sql "select count(*) from warm_containers where state = 'ready' and instance = 'gv'") >= 1)); }
check 'the warm pool has its container' wait_until 90 warm_ready

# ---- refused by name: no row, no container ---------------------------------------------------------
api POST "$SB" '{"isolation":"kvm"}' "$OT"
expect_error 400 "field 'isolation' must be 'container' or 'gvisor'" 'an unknown isolation: 400 naming both'
api POST "$SB" '{"isolation":"gvisor"}' "$OT"
expect_error 422 "isolation 'gvisor' is not offered here: no engine has a gVisor runtime" \
	'gvisor where no engine offers it: 422, said so'
check_eq 'the refusal'"'"'s audit row says what was asked' 'gvisor|422' \
	"$(sql "select details->>'isolation' || '|' || status from audit_log where request_id = '$REQ_ID'")"
api GET /healthz "" -
expect_json '.isolation.gvisor | length' 0 '/healthz: no engine offers gVisor'
ctl engine runtime gv 'run sc'
check_eq 'engine runtime with a bad name: exit 2' 2 "$CTL_RC"
check_eq 'naming the rule' "sandboxctl: the runtime name 'run sc' must be 1 to 63 of [A-Za-z0-9._-], starting with a letter or digit" "$CTL_ERR"
ctl engine runtime nope runsc
check_eq 'engine runtime of an unknown engine: exit 3' "3|sandboxctl: no engine is named nope" "$CTL_RC|$CTL_ERR"
ctl engine runtime gv runsc
check_eq 'the own engine is given its gVisor runtime' 'engine gv: gVisor runtime runsc' "$CTL_OUT"
check_eq '/healthz: gv offers runsc, which it does not have' "gv|runsc|false|$NOT_HERE" "$(gv_health)"
BEFORE=$(ours)
api POST "$SB" '{"isolation":"gvisor"}' "$OT"
expect_error 503 "$NOT_HERE" 'an engine without runsc: 503 naming the engine and the runtime'
check_eq 'no row was made' 0 "$(rows_of)"
check_eq 'no container was made (the warm one is untouched)' "$BEFORE" "$(ours)"
check_eq 'its audit row: 503, gvisor asked' 'gvisor|503' \
	"$(sql "select details->>'isolation' || '|' || status from audit_log where request_id = '$REQ_ID'")"

if [[ -z $RUNSC ]]; then
	skip 'runsc is not installed (apt-get install runsc): the gVisor sandbox itself'
	finish
fi

# ---- runsc becomes a runtime of the engine (no restart: dockerd reads its runtimes on SIGHUP) ------
jq -n --arg p "$WRAP" '{runtimes: {runsc: {path: $p, runtimeArgs: ["--platform=ptrace", "--file-access=shared"]}}}' \
	>"$D/daemon.json"
kill -HUP "$(dockerd_pid)"
has_runsc() { dk info --format '{{json .Runtimes}}' 2>/dev/null | jq -e 'has("runsc")' >/dev/null; }
check 'the engine lists runsc after its reload' wait_until 20 has_runsc
check_eq '/healthz: gv has runsc, ready' 'gv|runsc|true|' "$(gv_health)"
ctl engine list
check 'engine list shows the gVisor runtime' grep -Eq '^gv +active +up .* unix://.*  gvisor runsc$' <<<"$CTL_OUT"

# ---- a gVisor sandbox: cold, under runsc, never a warm runc container ----------------------------------
WARM_BEFORE=$(sql "select count(*) from warm_containers where state = 'ready'")
api POST "$SB" '{"isolation":"gvisor"}' "$OT"
expect_status 201 'a gVisor sandbox is made'
expect_json .isolation gvisor 'its answer says gvisor'
G=$(_json .id)
AT_EXIT+=("curl -s -o /dev/null -X POST -H 'Authorization: Bearer $OT' '$SANDBOXD_URL$SB/$G/close'")
check_eq 'its create'"'"'s audit row: gvisor, runtime runsc, not pooled, handed by its input' \
	'gvisor|runsc|false|stdin' "$(create_audit "$G" isolation runtime pooled handed_by)"
check_eq 'the ready warm container is still there for others' "$WARM_BEFORE" \
	"$(sql "select count(*) from warm_containers where state = 'ready'")"
check_eq 'its row: gvisor, runsc, on gv' 'gvisor|runsc|gv' \
	"$(sql "select isolation || '|' || runtime || '|' || engine from sandboxes where id = '$G'")"
GC=$(dk ps -q --filter "label=sandboxd.sandbox=$G")
check_eq 'its container runs under runsc, outside the engine'"'"'s remapping' 'runsc|host' \
	"$(dk inspect -f '{{.HostConfig.Runtime}}|{{.HostConfig.UsernsMode}}' "$GC" 2>/dev/null)"
api GET "$SB/$G" "" "$OT"
expect_json .isolation gvisor 'GET echoes isolation gvisor'
clone_done() { api GET "$SB/$1" "" "$OT"; [[ $(_json .clone.state) == "done" ]]; }
check 'its clone is done' wait_until 120 clone_done "$G"

# gVisor's kernel inside; root inside, nobody outside.
check_eq 'gVisor'"'"'s kernel answers inside (dmesg)' 'Starting gVisor...' \
	"$(exec_out "$G" 'dmesg | head -n 1 | sed "s/^\[[ 0-9.]*\] //"')"
check_eq 'root inside, HOME /root' '0|/root' "$(exec_out "$G" 'printf "%s|%s" "$(id -u)" "$HOME"')"
GPID=$(dk inspect -f '{{.State.Pid}}' "$GC")
check_eq "its sentry (host pid $GPID) runs as nobody on the host" 65534 \
	"$(awk '/^Uid:/ { print $3 }' "/proc/$GPID/status" 2>/dev/null)"

# ---- a container sandbox beside it: runc, the host's kernel (the pair) -------------------------------
api POST "$SB" '{}' "$OT"
expect_status 201 'a container sandbox on the same engine'
expect_json .isolation container 'its answer says container'
C=$(_json .id)
AT_EXIT+=("curl -s -o /dev/null -X POST -H 'Authorization: Bearer $OT' '$SANDBOXD_URL$SB/$C/close'")
check_eq 'its create'"'"'s audit row: container, runtime runc, from the warm pool' 'container|runc|true' \
	"$(create_audit "$C" isolation runtime pooled)"
check_eq 'its kernel is the host'"'"'s' "$(uname -r)" "$(exec_out "$C" 'uname -r')"
CC=$(dk ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$C")")
check_eq 'its container runs the default runtime, remapped' 'runc|' \
	"$(dk inspect -f '{{.HostConfig.Runtime}}|{{.HostConfig.UsernsMode}}' "$CC" 2>/dev/null)"

# ---- the workflow under gVisor -----------------------------------------------------------------------
api POST "$SB/$G/exec" '{"cmd":"cat x"}' "$OT"
expect_json .stdout x 'the clone is checked out (cat x)'
check_eq 'the exec went through its agent' agent \
	"$(sql "select details->>'backend' from audit_log where request_id = '$REQ_ID'")"
api POST "$SB/$G/write" '{"path":"w/hello.txt","content":"aGVsbG8gZ3Zpc29y"}' "$OT"
expect_status 200 'a file written through the file API'
api POST "$SB/$G/read" '{"path":"w/hello.txt"}' "$OT"
expect_json .content aGVsbG8gZ3Zpc29y 'and read back'
check_eq 'a command sees it' 'hello gvisor' "$(exec_out "$G" 'cat w/hello.txt')"
head -c 3000000 /dev/urandom >"$_T/big"
RAWURL=$SANDBOXD_URL$SB/$G/files
STATUS=$(curl -sS -T "$_T/big" -H "Authorization: Bearer $OT" -H 'Expect:' \
	-H 'Content-Type: application/octet-stream' -o /dev/null -w '%{http_code}' "$RAWURL/w/big")
check_eq 'a 3 MB raw PUT' 201 "$STATUS"
curl -sS -H "Authorization: Bearer $OT" -o "$_T/big.back" "$RAWURL/w/big"
check_eq 'its raw GET gives the same bytes' "$(sha256sum <"$_T/big")" "$(sha256sum <"$_T/big.back")"
check_eq 'and so does sha256sum inside' "$(sha256sum <"$_T/big" | cut -d' ' -f1)" \
	"$(exec_out "$G" 'sha256sum w/big | cut -d" " -f1')"
# The engine's archive API (the file API's way when the agent does not answer) sees the
# same files both ways: --file-access=shared (decision 0084).
printf 'by the archive API\n' >"$_T/arch.txt"
dk cp "$_T/arch.txt" "$GC:/workspace/repo/w/hello.txt"
check_eq 'a file replaced through the engine'"'"'s archive API is what a command reads' \
	'by the archive API' "$(exec_out "$G" 'cat w/hello.txt')"
exec_out "$G" 'printf "by a command\n" >w/hello.txt' >/dev/null
check_eq 'and the engine reads what a command wrote' 'by a command' \
	"$(dk cp "$GC:/workspace/repo/w/hello.txt" - 2>/dev/null | tar -xO)"

# git push from inside, as the creator (the sandbox's credential, over the bridge).
api POST "$SB/$G/exec" '{"cmd":"git add w/hello.txt && git commit -qm \"from gvisor\" && git push -q origin HEAD:refs/heads/from-gvisor"}' "$OT"
expect_json .exitCode 0 'git commit and push from the gVisor sandbox'
check_eq 'the pushed branch is in the repository' "$(exec_out "$G" 'git rev-parse HEAD')" \
	"$(git -C "$REPOS_DIR/$R.git" rev-parse refs/heads/from-gvisor 2>/dev/null)"

# npm ci, dependency-free: the lockfile npm writes for it, and a postinstall script.
PKGJSON='{"name":"gvisor-npm","version":"1.0.0","scripts":{"postinstall":"node -e \"console.log(String(6*7))\""}}'
LOCK='{"name":"gvisor-npm","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{"":{"name":"gvisor-npm","version":"1.0.0","hasInstallScript":true}}}'
api POST "$SB/$G/write" "$(jq -nc --arg c "$(base64 -w0 <<<"$PKGJSON")" '{path: "npm/package.json", content: $c}')" "$OT"
api POST "$SB/$G/write" "$(jq -nc --arg c "$(base64 -w0 <<<"$LOCK")" '{path: "npm/package-lock.json", content: $c}')" "$OT"
api POST "$SB/$G/exec" '{"cmd":"cd npm && npm ci --offline --no-audit --no-fund 2>&1; echo \"exit $?\""}' "$OT"
expect_json '.stdout | split("\n") | map(select(. != "")) | last' 'exit 0' 'npm ci exits 0'
expect_json '.stdout | test("\n42\n")' true 'and its postinstall ran under node'

# apt-get install of a package built here, offline (apt's every fetch would go to a proxy where
# nothing listens), as root inside.
PKG=$_T/pkg
mkdir -p "$PKG/DEBIAN" "$PKG/usr/local/bin"
printf 'Package: sandboxd-gvisor-hello\nVersion: 1.0\nArchitecture: all\nMaintainer: sandboxd tests <t@t>\nDescription: a package the test builds\n' \
	>"$PKG/DEBIAN/control"
printf '#!/bin/sh\necho hello from a package under $(uname -r)\n' >"$PKG/usr/local/bin/gvisor-hello"
chmod 0755 "$PKG/usr/local/bin/gvisor-hello"
dpkg-deb --root-owner-group -b "$PKG" "$_T/x.deb" >/dev/null 2>&1
api POST "$SB/$G/write" "$(jq -nc --arg c "$(base64 -w0 "$_T/x.deb")" '{path: "/workspace/x.deb", content: $c}')" "$OT"
expect_status 200 'the package written into the sandbox'
check_eq 'apt-get install ./x.deb exits 0, offline' 0 "$(exec_out "$G" \
	'cd /workspace && apt-get install -y -o Acquire::http::Proxy=http://127.0.0.1:9/ -o Acquire::https::Proxy=http://127.0.0.1:9/ ./x.deb >/tmp/apt.log 2>&1; echo $?')"
check_eq 'and its program runs, on gVisor'"'"'s kernel' 'hello from a package under 4.4.0' \
	"$(exec_out "$G" gvisor-hello)"

# A preview: a server in the sandbox, reached through nginx by its preview host.
PORT=${SANDBOXD_URL##*:}
PORT=${PORT%%/*}
exec_out "$G" "mkdir -p /srv/p && printf 'preview from gvisor $SFX' >/srv/p/index.html" >/dev/null
api POST "$SB/$G/exec" '{"cmd":"nohup python3 -m http.server 8000 --directory /srv/p >/tmp/http.log 2>&1 &","detach":true}' "$OT"
expect_status 202 'a web server started in it (detached)'
listening() { [[ $(exec_out "$G" 'curl -s -m 2 http://127.0.0.1:8000/') == "preview from gvisor $SFX" ]]; }
check 'it answers inside' wait_until 30 listening
api POST "$SB/$G/previews" '{"port":8000}' "$OT"
expect_status 201 'a preview of port 8000'
PHOST="$(_json .previewId).${SANDBOXD_PREVIEW_DOMAIN:-preview.localhost}:$PORT"
check_eq 'the preview serves the page through nginx' "preview from gvisor $SFX" \
	"$(curl -sS -m 20 -H "Host: $PHOST" "http://127.0.0.1:$PORT/" 2>/dev/null)"

# ---- sandboxctl engine add --runtime, for operators ----------------------------------------------------
ctl engine add gv2 "unix://$SOCK" --max 0 --runtime 'bad/name'
check_eq 'engine add --runtime with a bad name: exit 2, nothing added' '2|0' \
	"$CTL_RC|$(sql "select count(*) from docker_engines where name = 'gv2'")"
ctl engine add gv2 "unix://$SOCK" --max 0 --runtime runsc
check_eq 'engine add --runtime runsc' 'engine gv2: added' "$CTL_OUT"
check_eq 'the row holds it' runsc "$(sql "select gvisor_runtime from docker_engines where name = 'gv2'")"
ctl engine remove gv2
check_eq 'and it is removed' 'engine gv2: removed' "$CTL_OUT"

# ---- the close ends its gVisor processes; without a runtime, refused again ------------------------
api POST "$SB/$G/close" "" "$OT"
expect_status 204 'the gVisor sandbox closes'
sentry_gone() { [[ ! -e /proc/$GPID ]]; }
check 'its sentry is gone' wait_until 20 sentry_gone
ctl engine runtime gv none
check_eq 'the engine'"'"'s gVisor runtime taken away' 'engine gv: gVisor runtime none' "$CTL_OUT"
api POST "$SB" '{"isolation":"gvisor"}' "$OT"
expect_error 422 "isolation 'gvisor' is not offered here: no engine has a gVisor runtime" \
	'then isolation gvisor is refused again'
api POST "$SB/$C/exec" '{"cmd":"cat x"}' "$OT"
expect_json .stdout x 'the container sandbox is unaffected'
finish
