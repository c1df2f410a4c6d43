#!/usr/bin/env bash
# t_slow_clients.sh: slow request bodies do not hold git workers (issue 11, item 4). Twenty
# unauthenticated POSTs to a public repository's git-upload-pack, from one address
# (127.0.0.2), each with a chunked body that opens a 4095-byte pkt-line and then gets one
# byte every 10 s (it would take 11 hours to end): while all of them are
# still connected, a `git ls-remote`, a chunked push of 2 MiB and a sandbox create with its
# clone all succeed. nginx reads git bodies whole before a worker sees them, and bounds git
# requests per address (limit_conn): the 33rd slow request of that address is answered 429
# at once, while another address is served. Only loopback and this stack's containers are
# contacted.
. "$(dirname "$0")/lib.sh"

export GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=/bin/false
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
HOSTPORT=${SANDBOXD_URL#http://}
HOST=${HOSTPORT%:*}
PORT=${HOSTPORT##*:}
PY=$(command -v python3 || echo /usr/bin/python3)
ATTACKER=127.0.0.2

O="slow$SFX"
mk_user "$O" || exit 1
OT=$LAST_TOKEN
R="$O/pub"
api POST /api/v3/user/repos '{"name":"pub","visibility":"public"}' "$OT"
expect_status 201 'a public repository'
W=$_T/w
git init -q -b main "$W" && echo x >"$W/x" && git -C "$W" add x && git -C "$W" commit -qm x
check 'the first push' git -C "$W" push -q "http://t:$OT@$HOSTPORT/$R.git" main
check 'git ls-remote answers before the attack' eval 'timeout 60 git ls-remote "$SANDBOXD_URL/$R.git" main >/dev/null'

# --- the attacker: N connections from one address, one body byte every INTERVAL seconds ----
cat >"$_T/slow.py" <<'EOF'
import socket, sys, time, select
host, port, path, src, n, interval, status = sys.argv[1:8]
n, interval = int(n), float(interval)
req = ("POST %s HTTP/1.1\r\nHost: %s:%s\r\nContent-Type: application/x-git-upload-pack-request\r\n"
       "Transfer-Encoding: chunked\r\n\r\n" % (path, host, port)).encode()
socks = []
for _ in range(n):
    s = socket.socket()
    s.bind((src, 0))
    s.connect((host, int(port)))
    # The body opens a pkt-line of 4095 bytes: upload-pack waits for all of it.
    s.sendall(req + b"4\r\n0fff\r\n")
    socks.append(s)
answered = {}
while True:
    # A socket that became readable was answered (or closed): the server let it go.
    r, _, _ = select.select(socks, [], [], 0)
    for s in r:
        if s not in answered:
            answered[s] = s.recv(200).decode("latin-1").split("\r\n")[0] or "closed"
    with open(status + ".new", "w") as f:
        f.write("connected %d answered %d %s\n" % (len(socks) - len(answered), len(answered),
                                                   "|".join(sorted(set(answered.values())))))
    import os
    os.replace(status + ".new", status)
    time.sleep(interval)
    for s in socks:
        if s not in answered:
            try:
                s.sendall(b"1\r\na\r\n")
            except OSError:
                answered[s] = "send failed"
EOF
PIDS=()
stop_attackers() { local p; for p in "${PIDS[@]+"${PIDS[@]}"}"; do kill -KILL "$p" 2>/dev/null; done; true; }
AT_EXIT+=(stop_attackers)
"$PY" "$_T/slow.py" "$HOST" "$PORT" "/$R.git/git-upload-pack" "$ATTACKER" 20 10 "$_T/att1" </dev/null >"$_T/att1.log" 2>&1 &
PIDS+=($!)
att() { cat "$_T/$1" 2>/dev/null; }
check "20 slow chunked POSTs to /$R.git/git-upload-pack from $ATTACKER are connected" \
	wait_until 20 eval '[[ $(att att1) == "connected 20 answered 0 "* ]]'
# The requests are in nginx (and, without body buffering, in every git worker) by now.
sleep 2

# --- while they are connected: git and a sandbox's clone work --------------------------------
LS=$(timeout 90 git ls-remote "$SANDBOXD_URL/$R.git" main 2>"$_T/ls.err")
check_eq 'git ls-remote succeeds while the attack is connected' \
	"$(git -C "$W" rev-parse HEAD)	refs/heads/main" "$LS"
head -c 2097152 /dev/urandom >"$W/big" && git -C "$W" add big && git -C "$W" commit -qm big
check 'a chunked push of 2 MiB (http.postBuffer 64 KiB) succeeds meanwhile' \
	timeout 120 git -C "$W" -c http.postBuffer=65536 push -q "http://t:$OT@$HOSTPORT/$R.git" main
check_eq 'the push landed' "$(git -C "$W" rev-parse HEAD)" \
	"$(git --git-dir "$REPOS_DIR/$R.git" rev-parse -q --verify refs/heads/main)"
SB=/api/v3/repos/$R/diffinery/sandboxes
API_TIMEOUT=200 api POST "$SB" '{}' "$OT"
expect_status 201 'a sandbox create succeeds meanwhile'
ID=$(_json .id)
[[ -n $ID && $ID != null ]] && AT_EXIT+=("api POST '$SB/$ID/close' '' '$OT' >/dev/null")
clone_state() { api GET "$SB/$ID" "" "$OT"; _json .clone.state; }
clone_settled() { [[ $(clone_state) == done || $(clone_state) == failed ]]; }
wait_until 150 clone_settled
check_eq "and its clone is done meanwhile ($(_json .clone.log | tail -c 200))" done "$(clone_state)"

# --- the per-address bound: 12 more make 32; the 33rd is refused at once ------------------
"$PY" "$_T/slow.py" "$HOST" "$PORT" "/$R.git/git-upload-pack" "$ATTACKER" 12 10 "$_T/att2" </dev/null >"$_T/att2.log" 2>&1 &
PIDS+=($!)
check '12 more from the same address are connected (32 in all)' \
	wait_until 20 eval '[[ $(att att2) == "connected 12 answered 0 "* ]]'
OUT=$(curl -s -m 20 --interface "$ATTACKER" -w ' %{http_code}' -X POST -H 'Transfer-Encoding: chunked' \
	-H 'Content-Type: application/x-git-upload-pack-request' --data-binary 0000 \
	"$SANDBOXD_URL/$R.git/git-upload-pack" 2>&1 | tr -d '\n')
check_eq "the 33rd git request of $ATTACKER: 429 at once" '{"message": "too many requests"} 429' "$OUT"
LS=$(timeout 90 git ls-remote "$SANDBOXD_URL/$R.git" main 2>&1)
check_eq 'another address is still served' "$(git -C "$W" rev-parse HEAD)	refs/heads/main" "$LS"
check_eq 'the first 20 are still connected (not answered, not cut)' 'connected 20 answered 0 ' "$(att att1)"

stop_attackers
finish
