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

# === authenticated slow pushes ==================================================================
PUSHER=127.0.0.3
SLOT_TEXT='{"message":"too many pushes in progress for this account: at most 2 at a time (SANDBOXD_GIT_PUSHES_PER_ACCOUNT); try again when one has ended"}'
FLOOR_RE='^\{"message":"request body too slow: [0-9]+ bytes in 1[0-9] s, under 32768 bytes/s on average \(SANDBOXD_GIT_BODY_MIN_RATE\)"\}$'
STALL_TEXT='{"message":"request body too slow: no byte for 10 s (SANDBOXD_GIT_BODY_STALL)"}'
A="pusha$SFX"
mk_user "$A" || exit 1
AT=$LAST_TOKEN
api POST /api/v3/user/repos '{"name":"r","visibility":"private"}' "$AT"
expect_status 201 "$A/r, a private repository"
WA=$_T/wa
git init -q -b main "$WA" && echo a >"$WA/a" && git -C "$WA" add a && git -C "$WA" commit -qm a
check "$A's first push lands" git -C "$WA" push -q "http://t:$AT@$HOSTPORT/$A/r.git" main
B="pushb$SFX"
mk_user "$B" || exit 1
BT=$LAST_TOKEN
api POST /api/v3/user/repos '{"name":"r","visibility":"private"}' "$BT"
expect_status 201 "$B/r, a private repository"
WB=$_T/wb
git init -q -b main "$WB" && echo b >"$WB/b" && git -C "$WB" add b && git -C "$WB" commit -qm b
check "$B's first push lands" git -C "$WB" push -q "http://t:$BT@$HOSTPORT/$B/r.git" main

# slowpush.py HOST PORT PATH SRC N OUT MODE ARG [TOKEN|-] [BODY]: N receive-pack POSTs from
# SRC, chunked. MODE drip: each body opens a 4095-byte pkt-line, then gets one byte every ARG
# seconds, and a connection that is answered (or closed) is made again a second later (a
# persistent attacker). MODE stall: the first ARG bytes of the file BODY, then nothing. MODE
# rate: the file BODY at ARG bytes a second (never its last byte: it never ends). OUT
# .answers gets a line per answer: "<connection> <seconds since it was made, rounded> <status>
# <Retry-After or -> <body>"; OUT holds "open <connections open now> requests <made so far>".
"$PY" - "$_T/slowpush.py" <<'PY'
import sys
open(sys.argv[1], "w").write(r'''
import base64, os, select, socket, sys, time
host, port, path, src, n, out, mode, arg = sys.argv[1:9]
token = sys.argv[9] if len(sys.argv) > 9 and sys.argv[9] != "-" else None
body = open(sys.argv[10], "rb").read() if len(sys.argv) > 10 else b""
n, requests = int(n), 0
head = ("POST %s HTTP/1.1\r\nHost: %s:%s\r\nContent-Type: application/x-git-receive-pack-request\r\n"
        "Transfer-Encoding: chunked\r\n" % (path, host, port))
if token:
    head += "Authorization: Basic %s\r\n" % base64.b64encode(("t:" + token).encode()).decode()
head = (head + "\r\n").encode()

def chunk(b):
    return b"%x\r\n" % len(b) + b + b"\r\n"

def connect():
    global requests
    s = socket.socket()
    s.bind((src, 0))
    s.connect((host, int(port)))
    if mode == "drip":
        s.sendall(head + chunk(b"0fff"))
    elif mode == "rate":
        s.sendall(head)
    else:
        s.sendall(head)
        for i in range(0, int(arg), 65536):
            s.sendall(chunk(body[i:min(i + 65536, int(arg))]))
    requests += 1
    return {"s": s, "t": time.time(), "got": b"", "sent": 0}

def complete(c):
    h, sep, rest = c["got"].partition(b"\r\n\r\n")
    for l in h.split(b"\r\n") if sep else []:
        if l.lower().startswith(b"content-length:"):
            return len(rest) >= int(l.split(b":")[1])
    return False

def answered(i, c):
    h, _, rest = c["got"].decode("latin-1").partition("\r\n\r\n")
    lines = h.split("\r\n")
    status = lines[0].split(" ")[1] if lines[0].startswith("HTTP/") else "closed"
    after = [l.split(":", 1)[1].strip() for l in lines[1:] if l.lower().startswith("retry-after:")]
    with open(out + ".answers", "a") as f:
        f.write("%d %.0f %s %s %s\n" % (i, time.time() - c["t"], status, after[0] if after else "-",
                                      rest.strip() or "-"))

conns = [connect() for _ in range(n)]
again = {}
last_drip = time.time()
while True:
    live = [c["s"] for c in conns if c is not None]
    ready = select.select(live, [], [], 0.2)[0] if live else []
    for i, c in enumerate(conns):
        if c is None or c["s"] not in ready:
            continue
        try:
            d = c["s"].recv(65536)
        except OSError:
            d = b""
        c["got"] += d
        if not d or complete(c):
            answered(i, c)
            c["s"].close()
            conns[i] = None
            if mode == "drip":
                again[i] = time.time() + 1
    for i, t in list(again.items()):
        if time.time() >= t:
            del again[i]
            conns[i] = connect()
    for c in conns if mode == "rate" else []:
        if c is not None:
            due = min(len(body) - 1, int((time.time() - c["t"]) * int(arg)))
            if due > c["sent"]:
                try:
                    c["s"].sendall(chunk(body[c["sent"]:due]))
                except OSError:
                    pass
                c["sent"] = due
    if mode == "drip" and time.time() - last_drip >= float(arg):
        last_drip = time.time()
        for c in conns:
            if c is not None:
                try:
                    c["s"].sendall(chunk(b"a"))
                except OSError:
                    pass
    with open(out + ".new", "w") as f:
        f.write("open %d requests %d\n" % (sum(c is not None for c in conns), requests))
    os.replace(out + ".new", out)
    if mode == "stall" and all(c is None for c in conns):
        break
''')
PY
answers() { cat "$_T/$1.answers" 2>/dev/null; }
held_slots() { # the push slots (advisory locks) held for account $1
	sql "select count(*) from pg_locks where locktype = 'advisory' and classid between 1886745344
	     and 1886745599 and objid = (select id from accounts where login = '$1')"
}
PUSH_PATH=/$A/r.git/git-receive-pack
"$PY" "$_T/slowpush.py" "$HOST" "$PORT" "$PUSH_PATH" "$PUSHER" 20 "$_T/push" drip 3 "$AT" \
	</dev/null >"$_T/push.log" 2>&1 &
PIDS+=($!)
ATTACKER_PID=$!
# The first answers: 18 at once, all the per-account bound's; 2 hold the account's slots.
first_wave() { (($(answers push | wc -l) >= 18)); }
wait_until 20 first_wave
check_eq "20 slow pushes of $A from $PUSHER: 18 are answered at once, 429 with the bound's text and Retry-After 10" \
	"18 × 0 429 10 $SLOT_TEXT" \
	"$(answers push | head -n 18 | cut -d' ' -f2- | sort | uniq -c | sed 's/^ *\([0-9]*\) /\1 × /')"
check_eq "the other 2 hold $A's two push slots (connected, not answered)" 2 "$(held_slots "$A")"
attack_on() { # the attacker runs and its pushes keep coming: 2 open, or one answered in the last 3 s
	local answered
	answered=$(stat -c %Y "$_T/push.answers" 2>/dev/null || echo 0)
	kill -0 "$ATTACKER_PID" 2>/dev/null && [[ $(cat "$_T/push") =~ ^open\ ([0-9]+) ]] &&
		((BASH_REMATCH[1] >= 2 || $(date +%s) - answered <= 3))
}

# --- while they are connected: git and a sandbox's clone work --------------------------------
LS=$(timeout 90 git ls-remote "http://t:$BT@$HOSTPORT/$B/r.git" main 2>"$_T/ls2.err")
check_eq "git ls-remote of $B/r succeeds while $A's slow pushes are connected" \
	"$(git -C "$WB" rev-parse HEAD)	refs/heads/main" "$LS"
check "$A's slow pushes are still connected ($(cat "$_T/push"))" attack_on
head -c 2097152 /dev/urandom >"$WB/big" && git -C "$WB" add big && git -C "$WB" commit -qm big
check "a chunked push of 2 MiB by $B (http.postBuffer 64 KiB) succeeds meanwhile" \
	timeout 120 git -C "$WB" -c http.postBuffer=65536 push -q "http://t:$BT@$HOSTPORT/$B/r.git" main
check_eq "$B's push landed" "$(git -C "$WB" rev-parse HEAD)" \
	"$(git --git-dir "$REPOS_DIR/$B/r.git" rev-parse -q --verify refs/heads/main)"
check "$A's slow pushes are still connected ($(cat "$_T/push"))" attack_on
SBB=/api/v3/repos/$B/r/diffinery/sandboxes
API_TIMEOUT=200 api POST "$SBB" '{}' "$BT"
expect_status 201 "a sandbox create by $B succeeds meanwhile"
IDB=$(_json .id)
[[ -n $IDB && $IDB != null ]] && AT_EXIT+=("api POST '$SBB/$IDB/close' '' '$BT' >/dev/null")
clone_state_b() { api GET "$SBB/$IDB" "" "$BT"; _json .clone.state; }
clone_settled_b() { [[ $(clone_state_b) == done || $(clone_state_b) == failed ]]; }
wait_until 150 clone_settled_b
check_eq "and its clone is done meanwhile ($(_json .clone.log | tail -c 200))" done "$(clone_state_b)"
check "$A's slow pushes are still connected ($(cat "$_T/push"))" attack_on
# The slot holders send a byte every 3 s: the rate floor ends them once the 10 s grace is over.
floor_ended() { (($(answers push | awk '$3 == 408' | wc -l) >= 2)); }
wait_until 30 floor_ended
stop_attackers
OTHERS=$(answers push | cut -d' ' -f3- | grep -vxF "429 10 $SLOT_TEXT" | grep -vE "^408 - ${FLOOR_RE#^}")
check_cond "$A's slow pushes were refused again and again while the attack lasted, each with the bound's 429 or the rate floor's 408 ($(answers push | wc -l) answers; others: ${OTHERS:-none})" \
	"(( \$(answers push | wc -l) > 40 )) && [[ -z \$OTHERS ]]"
check_cond "the rate floor ended slot holders after 10 to 19 s ($(answers push | awk '$3 == 408' | head -n 1))" \
	"(( \$(answers push | awk '\$3 == 408 && \$2 >= 10 && \$2 <= 19' | wc -l) >= 2 ))"
check 'its push slots are free again' wait_until 10 eval '[[ $(held_slots "$A") == 0 ]]'
echo a2 >"$WA/a" && git -C "$WA" commit -qam a2
check "with the attacker gone, $A pushes again" git -C "$WA" push -q "http://t:$AT@$HOSTPORT/$A/r.git" main
check_eq "$A's push landed" "$(git -C "$WA" rev-parse HEAD)" \
	"$(git --git-dir "$REPOS_DIR/$A/r.git" rev-parse -q --verify refs/heads/main)"

# --- a push that stops halfway through its pack: the stall bound, nothing kept --------------------
head -c 3000000 /dev/urandom >"$WA/big" && git -C "$WA" add big && git -C "$WA" commit -qm big
NEW=$(git -C "$WA" rev-parse HEAD)
OLD=$(git -C "$WA" rev-parse HEAD~1)
{
	printf '%04x%s %s refs/heads/main\0report-status\n' $((4 + 41 + 41 + 15 + 1 + 14)) "$OLD" "$NEW"
	printf 0000
	printf '%s\n^%s\n' "$NEW" "$OLD" | git -C "$WA" pack-objects --stdout -q --revs
} >"$_T/push.body"
BEFORE=$(git --git-dir "$REPOS_DIR/$A/r.git" for-each-ref)
"$PY" "$_T/slowpush.py" "$HOST" "$PORT" "$PUSH_PATH" "$PUSHER" 1 "$_T/stall" stall 1500000 "$AT" \
	"$_T/push.body" </dev/null >"$_T/stall.log" 2>&1
check_eq "a push that stops after 1.5 of its 3 MB is ended by the stall bound" \
	"408 - $STALL_TEXT" "$(answers stall | cut -d' ' -f3-)"
check_cond "after 10 s without a byte ($(answers stall | cut -d' ' -f2) s)" \
	"(( \$(answers stall | cut -d' ' -f2) >= 10 && \$(answers stall | cut -d' ' -f2) <= 19 ))"
check_eq "$A/r's refs are as they were" "$BEFORE" "$(git --git-dir "$REPOS_DIR/$A/r.git" for-each-ref)"
check_eq 'no quarantine is left behind' '' \
	"$(find "$REPOS_DIR/$A/r.git/objects" -maxdepth 1 -name 'tmp_objdir-*')"
check_eq "the commit it sent is not in $A/r" '' \
	"$(git --git-dir "$REPOS_DIR/$A/r.git" cat-file -e "$NEW" 2>/dev/null && echo there)"
check "the same push, sent by git, lands" timeout 120 git -C "$WA" -c http.postBuffer=65536 push -q \
	"http://t:$AT@$HOSTPORT/$A/r.git" main
check_eq "$A/r is at it" "$NEW" "$(git --git-dir "$REPOS_DIR/$A/r.git" rev-parse -q --verify refs/heads/main)"

# --- the bound with git as the client ---------------------------------------------------------
# Two pushes of A at 40 KiB/s (over the rate floor, a real pack) hold its slots as long as
# this part lasts. A push of A whose body has all arrived when a worker takes it (a small
# one, sent whole with its length) streams no more than a buffered body: it lands; a
# chunked one is refused, as git shows it.
"$PY" "$_T/slowpush.py" "$HOST" "$PORT" "$PUSH_PATH" "$PUSHER" 2 "$_T/hold" rate 40960 "$AT" \
	"$_T/push.body" </dev/null >"$_T/hold.log" 2>&1 &
PIDS+=($!)
check 'two pushes of A at 40 KiB/s hold its two slots' wait_until 10 eval '[[ $(held_slots "$A") == 2 ]]'
echo small >"$WA/small" && git -C "$WA" add small && git -C "$WA" commit -qm small
check "meanwhile a small push of $A, whole on arrival, lands" \
	git -C "$WA" push -q "http://t:$AT@$HOSTPORT/$A/r.git" main
check_eq "$A/r is at it" "$(git -C "$WA" rev-parse HEAD)" \
	"$(git --git-dir "$REPOS_DIR/$A/r.git" rev-parse -q --verify refs/heads/main)"
check_eq 'its audit row says its body was whole on arrival' true \
	"$(sql "select details->>'body_whole_on_arrival' from audit_log where action = 'git.push'
	        and repository = '$A/r' and status = 200 order by id desc limit 1")"
head -c 2097152 /dev/urandom >"$WA/big2" && git -C "$WA" add big2 && git -C "$WA" commit -qm big2
OUT=$(timeout 120 git -C "$WA" -c http.postBuffer=65536 push "http://t:$AT@$HOSTPORT/$A/r.git" main 2>&1)
check_eq "a chunked push of $A meanwhile: git shows the 429" \
	'error: RPC failed; HTTP 429 curl 22 The requested URL returned error: 429' \
	"$(grep -m1 '^error: RPC failed' <<<"$OUT")"
check_eq "its audit row holds the bound's text" \
	"$(jq -r .message <<<"$SLOT_TEXT")" \
	"$(sql "select details->>'error' from audit_log where action = 'git.push' and
	        repository = '$A/r' and status = 429 order by id desc limit 1")"
check 'the two are still pushing (not answered)' eval '[[ ! -s $_T/hold.answers && $(held_slots "$A") == 2 ]]'
stop_attackers
check 'once they are gone, the chunked push lands' timeout 120 git -C "$WA" -c http.postBuffer=65536 \
	push -q "http://t:$AT@$HOSTPORT/$A/r.git" main
check_eq "$A/r is at it" "$(git -C "$WA" rev-parse HEAD)" \
	"$(git --git-dir "$REPOS_DIR/$A/r.git" rev-parse -q --verify refs/heads/main)"

# --- refused from the headers, before the body: anonymous 401, read scope 403 ------------------
"$PY" "$_T/slowpush.py" "$HOST" "$PORT" "$PUSH_PATH" "$PUSHER" 1 "$_T/anon" stall 4 - \
	"$_T/push.body" </dev/null >"$_T/anon.log" 2>&1
check_eq 'an anonymous slow receive-pack POST: 401 at once, its body unread' \
	'0 401 - {"message":"authentication required"}' "$(answers anon | cut -d' ' -f2-)"
RT=$(mk_token "$A" read)
"$PY" "$_T/slowpush.py" "$HOST" "$PORT" "$PUSH_PATH" "$PUSHER" 1 "$_T/read" stall 4 "$RT" \
	"$_T/push.body" </dev/null >"$_T/read.log" 2>&1
check_eq 'a read-scoped token: 403 at once' \
	'0 403 - {"message":"this needs a token with write scope"}' "$(answers read | cut -d' ' -f2-)"
echo a3 >"$WA/a" && git -C "$WA" commit -qam a3
check "the write token's push lands" git -C "$WA" push -q "http://t:$AT@$HOSTPORT/$A/r.git" main
check_eq "$A/r is at it" "$(git -C "$WA" rev-parse HEAD)" \
	"$(git --git-dir "$REPOS_DIR/$A/r.git" rev-parse -q --verify refs/heads/main)"

finish
