#!/usr/bin/env bash
# t_exec_stream.sh: exec with Accept: application/x-ndjson: lines as output arrives, the
# same caps and masking as the attached result, keep-alives in silence, the result last,
# and a client that goes away ending the command.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_guard.sh"

fails() { ! "$@"; }
mk_sandbox "sbs$SFX" stream
CONTAINER=$(docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$ID")")

# stream JSON [MAX_TIME]: the exec streamed; each line prefixed with its arrival time (ms)
# in $_T/lines; headers in $_T/sheaders; curl's exit code in SRC.
stream() {
	local max=${2:-60}
	LAST_REQ="POST $SB/$ID/exec (ndjson) $1"
	curl -sSN --max-time "$max" -D "$_T/sheaders" -H "Authorization: Bearer $OT" \
		-H 'Accept: application/x-ndjson' -H 'Content-Type: application/json' \
		--data-binary "$1" "$SANDBOXD_URL$SB/$ID/exec" 2>"$_T/curl.err" |
		while IFS= read -r line; do printf '%s %s\n' "$(date +%s%3N)" "$line"; done >"$_T/lines"
	SRC=${PIPESTATUS[0]}
	BODY=$(head -c 2000 "$_T/lines")
	STATUS=$(sed -n '1s/^HTTP[^ ]* \([0-9]*\).*/\1/p' "$_T/sheaders")
}
lines() { cut -d' ' -f2- "$_T/lines"; }
last_line() { lines | tail -n 1; }
text_of() { lines | jq -j --arg k "$1" 'select(has($k)) | .[$k]'; }

# --- lines as output arrives ---------------------------------------------------------------
stream '{"cmd":"echo one; sleep 2; echo two >&2; exit 3"}'
check_eq 'streamed: 200' 200 "$STATUS"
check 'as application/x-ndjson' grep -qi '^content-type: application/x-ndjson' "$_T/sheaders"
check_eq 'stdout as it came' 'one' "$(text_of stdout)"
check_eq 'stderr apart' 'two' "$(text_of stderr)"
first=$(head -n 1 "$_T/lines" | cut -d' ' -f1)
end=$(tail -n 1 "$_T/lines" | cut -d' ' -f1)
check_cond 'the first line arrived while the command still ran (2 s before the end)' "(( $end - $first >= 1500 ))"
check_eq 'the result comes last' '3|false|4|4|false' "$(last_line | jq -r '[.exitCode, .timedOut, .stdoutBytes, .stderrBytes, .truncated] | join("|")')"
check_eq 'the result has no stdout or stderr' 'durationMs,exitCode,stderrBytes,stdoutBytes,timedOut,truncated' "$(last_line | jq -r 'keys | join(",")')"
check 'every line is one JSON object' bash -c "cut -d' ' -f2- '$_T/lines' | jq -e 'type == \"object\"' >/dev/null"

# --- caps and masking as attached ----------------------------------------------------------
CMD='{"cmd":"seq 1 400000; seq 1 1000 >&2"}'
stream "$CMD"
text_of stdout >"$_T/streamed"
api POST "$SB/$ID/exec" "$CMD" "$OT"
jq -j .stdout <<<"$BODY" >"$_T/attached"
check 'capped output: the streamed text is the attached text' cmp -s "$_T/streamed" "$_T/attached"
check_eq 'with the marker and the full count' "1|$(jq -r .stdoutBytes <<<"$BODY")" "$(grep -c 'bytes omitted' "$_T/streamed")|$(last_line | jq -r .stdoutBytes)"
check_eq 'truncated' true "$(last_line | jq -r .truncated)"
stream '{"cmd":"git config --list; cat .git/config"}'
check 'the sandbox token never shows in any line' fails grep -q 'dst_' "$_T/lines"
check 'it is masked' grep -q '\*\*\*' <<<"$(text_of stdout)"

# --- time limits, silence, refusals --------------------------------------------------------
stream '{"cmd":"sleep 30","timeoutMs":1000}'
check_eq 'past its limit: 124 and timedOut' '124|true' "$(last_line | jq -r '[.exitCode, .timedOut] | join("|")')"
stream '{"cmd":"sleep 16; echo late"}'
check 'a keep-alive line in a quiet stretch' grep -q '{"keepalive":true}' "$_T/lines"
check_eq 'and the output after it' late "$(text_of stdout)"
API_HEADERS=('Accept: application/x-ndjson')
api POST "$SB/$ID/exec" '{"cwd":"x"}' "$OT"
API_HEADERS=()
expect_status 400 'a refusal before the start is an ordinary JSON answer'
expect_json .error "field 'cmd' is required" 'with its text'
check_eq 'the streamed execs are audited' 5 "$(sql "select count(*) from audit_log where sandbox_id = '$ID' and action = 'sandbox.exec' and (details->>'streamed')::boolean")"

# --- a client that goes away ----------------------------------------------------------------
stream '{"cmd":"sleep 123 & sleep 124; echo never"}' 3
check_eq 'the client gave up (curl timed out)' 28 "$SRC"
# As the host sees the container (lib_guard.sh): an engine that cannot say is not "ended".
check 'the command ends soon after' wait_until 30 box_ended "$CONTAINER" 'sleep 12[34]'
check_eq 'the call is audited as 499' 499 "$(sql "select status from audit_log where sandbox_id = '$ID' and action = 'sandbox.exec' order by at desc limit 1")"
api POST "$SB/$ID/exec" '{"cmd":"echo still here"}' "$OT"
expect_json .stdout 'still here' 'the sandbox serves the next call'

api POST "$SB/$ID/close" '' "$OT"
finish
