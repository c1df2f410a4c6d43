#!/usr/bin/env bash
# t_agent.sh: attached and streamed execs through the agent inside each sandbox (README
# "The agent"): the SPEC's exec rules over it, every exec's audit row naming its backend
# with zero fallbacks, the key delivered beside the clone (a 0400 file, never the
# environment), the agent unreachable from another sandbox but reached from the host, and
# its faults (killed, hung, replaced) refused by name (502), never a Docker exec in a worker.
# With SANDBOXD_AGENT=0 (bash tests/integration/run.sh with it in the environment) the same
# execs run through Docker exec and their rows say so; the fault checks need the agent.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_guard.sh"

fails() { ! "$@"; }
WANT=agent
[ "${SANDBOXD_AGENT:-1}" = 0 ] && WANT=docker
# The agent-on run also asserts that the pool was used (and the pool-off run that it was
# not): the first create here takes a warm container when the pool has one.
POOLED=true
[ "${SANDBOXD_POOL_SIZE:-2}" = 0 ] && POOLED=false
[ "$POOLED" = true ] && check 'the warm pool has a container ready' wait_until 60 warm_ready_at_least 1
mk_sandbox "sba$SFX" agent
A=$ID
check_eq "the create is audited pooled: $POOLED" "$POOLED" \
	"$(create_audit "$A" pooled)"
# A pooled create hands the clone's parameters through the warm container's agent; with the
# agent off, by the archive API. A cold create writes them to its container's input.
HANDED=stdin
[ "$POOLED" = true ] && HANDED=archive
[ "$POOLED" = true ] && [ "$WANT" = agent ] && HANDED=agent
check_eq "its parameters went in by: $HANDED" "$HANDED" \
	"$(create_audit "$A" handed_by)"
AT_EXIT+=("api POST '$SB/$A/close' '' '$OT' >/dev/null 2>&1")
CA=$(docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$A")")
# Where the workers reach its agent without asking the engine (sql/024): the address the
# engine gives it, written at the start, for a warm container as for a cold one.
ip_of() { docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$1"; }
check_eq "its row holds its container's address ($POOLED pooled)" "$(ip_of "$CA")" \
	"$(sql "select host(agent_ip) from sandboxes where id = '$A'")"
run() { api POST "$SB/$ID/exec" "$1" "$OT"; }
# Rows of execs that ran (a 400 before the run names no backend).
RAN="action = 'sandbox.exec' and status <> 400"
backends() { # SANDBOX: the backends of its exec rows, counted: "agent:N docker:M"
	sql "select string_agg(b || ':' || n, ' ' order by b) from (select coalesce(details->>'backend', 'none') b, count(*) n from audit_log where sandbox_id = '$1' and $RAN group by 1) t"
}
left_rows() { [ "$(sql "select count(*) from audit_log where sandbox_id = '$A' and action = 'sandbox.exec' and status = 499")" = 1 ]; }
last_row() { # SANDBOX: backend|agent_error of its newest exec row
	sql "select coalesce(details->>'backend', '') || '|' || coalesce(details->>'agent_error', '') from audit_log where sandbox_id = '$1' and action = 'sandbox.exec' order by id desc limit 1"
}

# The container's input (tini's, the first process) is the pipe the service wrote to before
# the start (a cold container's clone parameters, a warm one's agent key): read whole by
# clone.sh and closed once written (StdinOnce), nothing is left to read there.
run '{"cmd":"readlink /proc/1/fd/0; timeout 5 cat /proc/1/fd/0 | wc -c"}'
expect_json_match .stdout $'^pipe:\\[[0-9]+\\]\n0$' \
	"the container's input, where its secrets came, is at its end: 0 bytes left to read"

# Its user's home is the row's, decided when its container was made (026): an exec's HOME
# needs no question to the engine.
check_eq "the row holds its user's home ($POOLED pooled)" "$BOX_HOME" "$(sql "select home from sandboxes where id = '$A'")"
run '{"cmd":"echo $HOME"}'
expect_json .stdout "$BOX_HOME" 'which is the HOME of its commands'

# --- the SPEC's rules over the backend --------------------------------------------------------
run '{"cmd":"cat x; echo to-err >&2; exit 3"}'
expect_status 200 'an exec: 200'
check_eq 'exit code and separate streams' '3|x|to-err|false' "$(_json '[.exitCode, .stdout, .stderr, .timedOut] | map(tostring | rtrimstr("\n")) | join("|")')"
run '{"cmd":"mkdir -p sub"}'
run '{"cmd":"pwd; echo \"$FOO $SANDBOX_ID\"","cwd":"sub","env":{"FOO":"bar baz"}}'
expect_json .stdout $'/workspace/repo/sub\nbar baz '"$A" 'cwd and env (the sandbox'"'"'s and the caller'"'"'s)'
run '{"cmd":"pwd","cwd":"nope"}'
expect_status 400 'a missing cwd: 400'
run '{"cmd":"printf \"\\xff\\xfeok\""}'
expect_json .stdout $'\uFFFD\uFFFDok' 'invalid UTF-8 becomes U+FFFD'
run '{"cmd":"head -c 3000000 /dev/zero | tr \"\\0\" a; echo; echo THE-END"}'
check_eq 'capped: head + tail with the full count' 'true|3000009' "$(_json '[.truncated, .stdoutBytes] | join("|")')"
expect_json_match .stdout 'THE-END$' 'the tail is kept'
run '{"cmd":"git config --list"}'
check 'the sandbox token is masked' fails grep -q 'dst_' <<<"$BODY"
check 'and replaced with ***' grep -qF '***' <<<"$BODY"
T0=$(date +%s%3N)
run '{"cmd":"sleep 300 & (trap \"\" TERM; sleep 301) & wait","timeoutMs":1000}'
T1=$(date +%s%3N)
check_eq 'past the limit: 124 and timedOut' '124|true' "$(_json '[.exitCode, .timedOut] | join("|")')"
check_cond 'answered within the limit and the 5 s grace' "(( T1 - T0 < 9000 ))"
sleep 1
run '{"cmd":"pgrep -f \"sleep 30[012]\" || echo none"}'
expect_json .stdout none 'the tree is ended, what ignored SIGTERM too'
run '{"cmd":"nohup sleep 121 >/dev/null 2>&1 &"}'
run '{"cmd":"pgrep -f \"sleep 12[1]\" >/dev/null && echo alive"}'
expect_json .stdout alive 'a background job of a command that ended by itself outlives its call'

# Streamed: lines as output comes, the result last.
stream() {
	curl -sSN --max-time "${2:-30}" -H "Authorization: Bearer $OT" -H 'Accept: application/x-ndjson' \
		-H 'Content-Type: application/json' --data-binary "$1" "$SANDBOXD_URL$SB/$ID/exec" >"$_T/lines" 2>/dev/null
}
stream '{"cmd":"echo one; sleep 1; echo two >&2; exit 4"}'
check_eq 'streamed: stdout, stderr, then the result' 'one|two|4' "$(jq -rs '[(map(.stdout // empty) | join("")), (map(.stderr // empty) | join("")), (last.exitCode | tostring)] | map(rtrimstr("\n")) | join("|")' "$_T/lines")"
stream '{"cmd":"sleep 30","timeoutMs":1000}'
check_eq 'streamed past its limit: 124' '124|true' "$(tail -n 1 "$_T/lines" | jq -r '[.exitCode, .timedOut] | join("|")')"
# A client that leaves: 499 in the audit row, the tree ended.
curl -sS --max-time 2 -H "Authorization: Bearer $OT" -H 'Content-Type: application/json' \
	--data-binary '{"cmd":"sleep 333"}' "$SANDBOXD_URL$SB/$ID/exec" >/dev/null 2>&1
check 'the client left: its tree is ended (the engine lists no sleep 333)' wait_until 10 box_ended "$CA" 'sleep 333'
check 'and its audit row says 499' wait_until 10 left_rows

# Every exec so far, with its backend, and no fallback.
N=$(sql "select count(*) from audit_log where sandbox_id = '$A' and $RAN")
check_cond "the execs are audited ($N)" "(( N >= 13 ))"
check_eq "every exec row says backend $WANT" "$WANT:$N" "$(backends "$A")"
check_eq 'no row names an agent error (zero fallbacks)' 0 "$(sql "select count(*) from audit_log where sandbox_id = '$A' and details ? 'agent_error'")"

# The file API takes the same backend, with the same answers.
api POST "$SB/$A/write" '{"path":"via/agent.txt","content":"aGk=","mode":384}' "$OT"
expect_status 200 'a write'
run '{"cmd":"stat -c \"%a %u\" via/agent.txt; cat via/agent.txt"}'
expect_json .stdout "600 $BOX_UID"$'\nhi' "lands with its mode, as the sandbox user ($BOX_UID)"
api POST "$SB/$A/read" '{"path":"via/agent.txt"}' "$OT"
expect_json .content aGk= 'a read gives it back'
api POST "$SB/$A/read" '{"path":"via/none"}' "$OT"
expect_status 404 'a missing file: 404'
expect_body '{"error":"no such file: via/none"}' 'a missing file: the same 404'
api POST "$SB/$A/read" '{"path":"via"}' "$OT"
expect_status 400 'a directory: 400'
expect_body '{"error":"via is not a regular file (a directory)"}' 'a directory: the same 400'
api POST "$SB/$A/write" '{"path":"via","content":"aGk="}' "$OT"
expect_status 400 'a write over a directory: 400'
expect_body '{"error":"via is a directory"}' 'a write over a directory: the same 400'
check_eq "the file rows say backend $WANT, with no agent error" "$WANT $WANT $WANT $WANT $WANT|0" \
	"$(sql "select string_agg(details->>'backend', ' ' order by id) || '|' || count(*) filter (where details ? 'agent_error') from audit_log where sandbox_id = '$A' and action in ('sandbox.read', 'sandbox.write')")"

if [ "$WANT" = docker ]; then
	run '{"cmd":"true"}'
	check_eq 'with SANDBOXD_AGENT=0 the agent is not asked' 'docker|' "$(last_row "$A")"
	finish
fi

# The agent's own: what setsid away is still ended with its exec.
run '{"cmd":"setsid sleep 303 & wait","timeoutMs":1000}'
expect_json .exitCode 124 'a setsid child past the limit: 124'
run '{"cmd":"pgrep -f \"sleep 30[3]\" || echo none"}'
expect_json .stdout none 'and it is ended with its exec'
run '{"cmd":"pgrep -f \"sandboxd-agen[t] --listen\" >/dev/null && echo running"}'
expect_json .stdout running 'while the agent runs (pgrep sees processes)'

# --- the key: beside the clone, a 0400 file, never the environment ----------------------------
run '{"cmd":"stat -c %a /workspace/.sandboxd/agent.key; wc -c </workspace/.sandboxd/agent.key; test -e /tmp/.sandboxd/clone || echo gone"}'
expect_json .stdout $'400\n64\ngone' 'the key file is 0400, 64 hex digits, the clone parameters removed'
KEY=$(sql "select agent_key from sandboxes where id = '$A'")
check 'the database holds the key for any worker' grep -qE '^[0-9a-f]{64}$' <<<"$KEY"
check_eq 'the auditor role reads sandboxes but not the key' "$A|denied" "$(sql "set role sandboxd_auditor; select id from sandboxes where id = '$A'")|$(sql "set role sandboxd_auditor; select agent_key from sandboxes where id = '$A'" 2>&1 | grep -q 'permission denied' && echo denied)"
check 'the container configuration does not hold it' fails grep -q "$KEY" <<<"$(docker inspect "$CA")"
run '{"cmd":"cat /proc/1/environ /proc/$(cat /workspace/.sandboxd/agent.pid)/environ | tr \"\\0\" \"\\n\""}'
check 'nor the environment of the first process or the agent' fails grep -q "$KEY" <<<"$BODY"
check_eq 'which the exec could read, both (the check ran)' 2 "$(_json .stdout | grep -c "^HOME=$BOX_HOME$")"
run '{"cmd":"touch /usr/local/lib/sandboxd/sandboxd-agent 2>&1 || echo refused"}'
expect_json_match .stdout 'refused$' 'the agent binary is read-only in the container'

# --- reachable from the host, not from another sandbox -----------------------------------------
IPA=$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$CA")
check "the host reaches the agent at $IPA:7070" timeout 3 bash -c "exec 3<>/dev/tcp/$IPA/7070"
ID=$A
api POST "$SB" '{}' "$OT"
expect_status 201 'a second sandbox'
B=$(_json .id)
AT_EXIT+=("api POST '$SB/$B/close' '' '$OT' >/dev/null 2>&1")
ID=$B
run "$(jq -n --arg c "timeout 3 bash -c 'exec 3<>/dev/tcp/$IPA/7070' 2>/dev/null && echo reached || echo refused" '{cmd: $c}')"
expect_json .stdout refused 'another sandbox cannot reach the agent'
run "$(jq -n '{cmd: "timeout 3 bash -c \"exec 3<>/dev/tcp/127.0.0.1/7070\" && echo reached || echo refused"}')"
expect_json .stdout reached 'while its own agent listens (the check can connect)'
check_eq "the second sandbox's execs ran through the agent" agent:2 "$(backends "$B")"
ID=$A

# Detached: the agent supervises it and keeps its output.
dget() { api GET "$SB/$A/execs/$1" '' "$OT"; }
dsays() { dget "$1"; [ "$STATUS|$(_json .state)|$(_json .stdout)" = "$2" ]; }
api POST "$SB/$A/exec" '{"cmd":"echo held-by-agent; sleep 300","detach":true}' "$OT"
HELD=$(_json .execId)
check_eq 'a detached exec through the agent: 202, its row says agent' '202|agent|' "$STATUS|$(last_row "$A")"
check 'its output read back through the agent' wait_until 10 dsays "$HELD" $'200|running|held-by-agent'
check_eq 'and the read row says agent' agent "$(sql "select details->>'backend' from audit_log where sandbox_id = '$A' and action = 'sandbox.exec_get' order by id desc limit 1")"

# --- faults --------------------------------------------------------------------------------------
# With the agent on, a sandbox's execs run through its agent and nowhere else (decision 0086):
# an agent hung, killed or replaced from inside is a named 502 ("the sandbox's agent cannot
# be reached: ..."), its row says agent and why, and no worker runs the command through
# Docker exec. The test itself (not the sandbox) resumes or replaces the agent through the
# engine.
unreached() { # NAME REASON-RE: the last answer is that 502 and its row says agent and why
	check_eq "$1: 502, named" "502|the sandbox's agent cannot be reached" "$STATUS|$(_json .error | cut -d: -f1)"
	check "$1: its row says agent and why, never docker" grep -qE "^agent\|.*$2" <<<"$(last_row "$A")"
}
# Hung: SIGSTOP. The next exec is refused within the connect limit, the reason audited.
run '{"cmd":"kill -STOP $(cat /workspace/.sandboxd/agent.pid) && echo stopped"}'
expect_json .stdout stopped 'the agent stopped from inside (through itself)'
T0=$(date +%s%3N)
run '{"cmd":"echo via-fallback"}'
T1=$(date +%s%3N)
unreached 'a hung agent' '.+'
check_cond "within the connect limit ($((T1 - T0)) ms)" "(( T1 - T0 < 6000 ))"
echo "# hung: $(last_row "$A")"
docker exec -u 0 "$CA" sh -c 'kill -CONT $(cat /workspace/.sandboxd/agent.pid)'
run '{"cmd":"echo back"}'
check_eq 'resumed (by the engine, from outside): the agent answers again' 'back|agent|' "$(_json .stdout)|$(last_row "$A")"

# Killed: kill -9 of the agent from an exec. The next execs are refused; the worker is unharmed.
run '{"cmd":"kill -9 $(cat /workspace/.sandboxd/agent.pid); echo killed"}'
check_eq 'the exec that killed its agent still answers' '200|killed' "$STATUS|$(_json .stdout)"
run '{"cmd":"echo after"}'
unreached 'the next exec' '(refused|connect)'
echo "# killed: $(last_row "$A")"
dget "$HELD"
expect_status 502 'the detached exec its agent kept, with the agent gone: 502'
expect_json_match .error "^no such exec through Docker exec, and the sandbox's agent did not answer: .*(refused|connect)" 'saying why'
api POST "$SB/$A/exec" '{"cmd":"echo detached-after; exit 3","detach":true}' "$OT"
check_eq 'a detached exec: 502 too, no exec id' "502|the sandbox's agent cannot be reached|" \
	"$STATUS|$(_json .error | cut -d: -f1)|$(_json '.execId // empty')"
check_eq 'its row says agent' 'agent' "$(last_row "$A" | cut -d'|' -f1)"
CODE=$(curl -sS --max-time 30 -o "$_T/lines" -w '%{http_code}' -H "Authorization: Bearer $OT" \
	-H 'Accept: application/x-ndjson' -H 'Content-Type: application/json' \
	--data-binary '{"cmd":"echo streamed-after; exit 5"}' "$SANDBOXD_URL$SB/$ID/exec")
check_eq 'a streamed exec: 502 too' "502|the sandbox's agent cannot be reached" \
	"$CODE|$(jq -r '.error // empty' "$_T/lines" 2>/dev/null | head -n 1 | cut -d: -f1)"
# Garbage: a fake agent on the port (the sandbox's user may listen there once the agent is
# gone; the test starts it through the engine): bytes that are no frame, then a header
# announcing 4 GiB. Each exec is refused, named.
fake() { # PERL-PRINT-EXPR: a listener on :7070 answering it to every connection
	docker exec -u 0 "$CA" bash -c "kill \$(cat /tmp/fake.pid 2>/dev/null) 2>/dev/null; sleep 0.2; nohup perl -MIO::Socket::INET -e '\$0 = \"fake-agent\"; \$s = IO::Socket::INET->new(LocalAddr => \"0.0.0.0:7070\", Listen => 5, ReuseAddr => 1) or die; while (\$c = \$s->accept) { print \$c $1; sleep 1; close \$c }' >/dev/null 2>&1 & echo \$! >/tmp/fake.pid; sleep 0.5; echo listening"
}
check_eq 'a fake agent sending garbage listens' listening "$(fake '"\xff" x 64')"
run '{"cmd":"echo past-garbage"}'
unreached 'garbage' 'agent.+'
echo "# garbage: $(last_row "$A")"
check_eq 'a fake agent announcing a 4 GiB frame listens' listening "$(fake '"\x01\0\0\0\0\0\0\x01\xff\xff\xff\xff"')"
run '{"cmd":"echo past-huge"}'
unreached 'a huge frame' '(limit|bytes)'
echo "# huge: $(last_row "$A")"
docker exec -u 0 "$CA" sh -c 'kill $(cat /tmp/fake.pid)'
check_eq 'no exec row of this sandbox names the docker backend' 0 \
	"$(sql "select count(*) from audit_log where sandbox_id = '$A' and action = 'sandbox.exec' and details->>'backend' = 'docker'")"

ID=$B
run '{"cmd":"echo other"}'
check_eq "the workers are unharmed: the other sandbox's agent answers" 'other|agent|' "$(_json .stdout)|$(last_row "$B")"
api GET /healthz
expect_status 200 'the service is healthy'

# Ending a sandbox clears its key.
api POST "$SB/$B/close" "" "$OT"
expect_status 204 'the second sandbox closed'
check_eq 'its key is gone from the database' '' "$(sql "select coalesce(agent_key, '') from sandboxes where id = '$B'")"
finish
