#!/usr/bin/env bash
# t_previews.sh: previews (SPEC.md §4 "Previews"). A sandbox runs a small server of this
# test's own on port 3000 (Perl: the runner image has no Python; IO::Socket, Digest::SHA
# and MIME::Base64 are Perl's own) that serves a page, answers a POST with the SHA-256 of
# its body and completes a WebSocket upgrade with 101. Through the preview URL (curl with
# the Host header, to the stack's nginx port): the page, a 20 MiB POST and its hash, the
# upgrade and a frame after it, 502 with SPEC's JSON where nothing listens, 404 once
# expired, deleted or the sandbox closed; no forged header and no id of another sandbox
# reaches anything but that sandbox's own address and port; the check route is nginx's
# only; the routes' refusals (ranges, tokens, roles). Headless Chromium loads the page: the
# rendered DOM is checked and a screenshot kept in $IT_ARTIFACTS (build/it-artifacts).
# shellcheck disable=SC2034 # LAST_REQ, STATUS, BODY, HEADERS and API_HEADERS are lib.sh's
. "$(dirname "$0")/lib.sh"

PORT=${SANDBOXD_URL##*:}
PORT=${PORT%%/*}
DOMAIN=${SANDBOXD_PREVIEW_DOMAIN:-preview.localhost}
ARTIFACTS=${IT_ARTIFACTS:-$ROOT/build/it-artifacts}/$TEST_NAME
mkdir -p "$ARTIFACTS"

# The server, in the sandbox: perl srv.pl PORT NAME. One process per connection.
read -r -d '' SERVER <<'PERL'
use strict; use warnings;
use IO::Socket::INET; use Digest::SHA qw(sha1_base64); use POSIX ();
my ($port, $name) = @ARGV;
$SIG{CHLD} = 'IGNORE';
my $srv = IO::Socket::INET->new(LocalAddr => '0.0.0.0', LocalPort => $port, Listen => 64,
                                ReuseAddr => 1) or die "listen $port: $!";
while (1) {
    my $c = $srv->accept or next;
    if (fork()) { close $c; next; }
    close $srv; binmode $c;
    my $head = '';
    while (my $l = <$c>) { $head .= $l; last if $l =~ /^\r?\n$/; }
    my ($method, $path) = $head =~ /^(\S+) (\S+)/;
    my %h; for (split /\r?\n/, $head) { $h{lc $1} = $2 if /^([^:]+):\s*(.*?)\s*$/; }
    if (lc($h{upgrade} // '') eq 'websocket') {
        my $accept = sha1_base64($h{'sec-websocket-key'} . '258EAFA5-E914-47DA-95CA-C5AB0DC85B11') . '=';
        print $c "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               . "Sec-WebSocket-Accept: $accept\r\n\r\n";
        print $c "\x81\x05hello";   # one text frame, then the connection ends
        close $c; POSIX::_exit(0);
    }
    my ($type, $body) = ('text/plain', '');
    if ($method eq 'POST') {
        my $left = $h{'content-length'} // 0;
        my $sha = Digest::SHA->new(256);
        while ($left > 0) {
            my $n = read($c, my $buf, $left > 65536 ? 65536 : $left) or last;
            $sha->add($buf); $left -= $n;
        }
        $body = $sha->hexdigest . "\n";
    } else {
        $type = 'text/html';
        $body = "<!doctype html><html><head><title>preview $name</title></head><body>"
              . "<h1 id=\"who\">served by $name</h1><p id=\"js\">no script ran</p><script>"
              . "document.getElementById('js').textContent = 'script ran for ' + "
              . "location.hostname.split('.')[0].length + '-character id';</script></body></html>\n";
    }
    print $c "HTTP/1.1 200 OK\r\nContent-Type: $type\r\nContent-Length: " . length($body)
           . "\r\nConnection: close\r\n\r\n$body";
    close $c; POSIX::_exit(0);
}
PERL

# serve ID NAME: the server started in sandbox ID, detached (nohup … &), port 3000.
serve() {
	local b64
	b64=$(printf '%s\n' "$SERVER" | base64 -w0)
	api POST "$SB/$1/write" "{\"path\":\"/tmp/srv.pl\",\"content\":\"$b64\"}" "$OT"
	expect_status 200 "the server's script written into $2"
	api POST "$SB/$1/exec" "{\"cmd\":\"nohup perl /tmp/srv.pl 3000 $2 >/tmp/srv.log 2>&1 &\",\"detach\":true}" "$OT"
	expect_status 202 "the server started in $2 (detached)"
}

# pv METHOD HOST PATH [curl args…]: one request to the stack's nginx with that Host; sets
# STATUS, BODY, HEADERS.
pv() {
	local method=$1 host=$2 path=$3
	shift 3
	LAST_REQ="$method http://$host$path (to 127.0.0.1:$PORT) $*"
	: >"$_T/pbody"
	STATUS=$(curl -sS -X "$method" -o "$_T/pbody" -D "$_T/pheaders" -w '%{http_code}' \
		--max-time "${PV_TIMEOUT:-30}" -H "Host: $host" -H 'Expect:' "$@" \
		"http://127.0.0.1:$PORT$path" 2>"$_T/curl.err") || STATUS=000
	BODY=$(tr -d '\0' <"$_T/pbody")
	HEADERS=$(tr -d '\r' <"$_T/pheaders")
}
host_of() { printf '%s.%s:%s' "$1" "$DOMAIN" "$PORT"; }
page_is() { pv GET "$(host_of "$1")" / && [[ $STATUS == 200 && $BODY == *"served by $2"* ]]; }
gone() { pv GET "$(host_of "$1")" / && [[ $STATUS == 404 ]]; }
mk_preview() { # ID JSON -> PID (the preview's id)
	api POST "$SB/$1/previews" "$2" "$OT"
	PID=$(_json .previewId)
}

mk_sandbox "pv$SFX" preview
A=$ID
api POST "$SB" '{}' "$OT"
expect_status 201 'a second sandbox'
B=$(_json .id)
AT_EXIT+=("curl -s -o /dev/null -X POST -H 'Authorization: Bearer $OT' '$SANDBOXD_URL$SB/$A/close'"
	"curl -s -o /dev/null -X POST -H 'Authorization: Bearer $OT' '$SANDBOXD_URL$SB/$B/close'")
serve "$A" "$A"
serve "$B" "$B"

# --- making one: the body's fields, the token and the role ----------------------------------
api POST "$SB/$A/previews" '{}' "$OT"
expect_error 400 "field 'port' is required" 'no port: 400 naming it'
api POST "$SB/$A/previews" '{"port":0}' "$OT"
expect_error 400 "field 'port' must be an integer between 1 and 65535" 'port 0: 400 naming the range'
api POST "$SB/$A/previews" '{"port":65536}' "$OT"
expect_error 400 "field 'port' must be an integer between 1 and 65535" 'port 65536: 400'
api POST "$SB/$A/previews" '{"port":"3000"}' "$OT"
expect_error 400 "field 'port' must be an integer" 'a port as a string: 400'
api POST "$SB/$A/previews" '{"port":3000,"ttl":86401}' "$OT"
expect_error 400 "field 'ttl' must be an integer between 1 and 86400" 'ttl over the maximum: 400 naming it'
api POST "$SB/$A/previews" '{"port":3000,"ttl":0}' "$OT"
expect_error 400 "field 'ttl' must be an integer between 1 and 86400" 'ttl 0: 400'
READ_T=$(mk_token "pv$SFX" read)
api POST "$SB/$A/previews" '{"port":3000}' "$READ_T"
expect_error 403 'this needs a token with write scope' 'a read-scoped token: 403'
api POST "/api/v3/repos/$R/job-tokens" '{"scope":"write"}' "$OT"
JOB_T=$(_json .token)
api POST "$SB/$A/previews" '{"port":3000}' "$JOB_T"
expect_error 403 "job and sandbox tokens can't start sandboxes" 'a job token: 403'
mk_user "pvo$SFX" || exit 1
OTHER_T=$LAST_TOKEN
api POST "$SB/$A/previews" '{"port":3000}' "$OTHER_T"
expect_error 404 'repository not found' 'a stranger: 404'
api PUT "/api/v3/repos/$R/collaborators/pvo$SFX" '{"role":"read"}' "$OT"
api POST "$SB/$A/previews" '{"port":3000}' "$OTHER_T"
expect_error 403 "this needs the write role on $R" 'a read collaborator: 403'
api PUT "/api/v3/repos/$R/collaborators/pvo$SFX" '{"role":"write"}' "$OT"
api POST "$SB/$A/previews" '{"port":3000}' "$OTHER_T"
expect_error 403 'not your sandbox' "a write collaborator, not the creator: 403"
api POST "$SB/sb_000000000000000000000000/previews" '{"port":3000}' "$OT"
expect_error 404 'sandbox not found' 'an unknown sandbox: 404'
check_eq 'none of those made a preview' 0 "$(sql "select count(*) from previews where sandbox_id in ('$A', '$B')")"

api POST "$SB/$A/previews" '{"port":3000}' "$OT"
expect_status 201 'the creator: 201'
expect_keys . 'expires_at,port,previewId,url' 'the shape: {previewId, port, url, expires_at}'
expect_json_match .previewId '^[a-z2-7]{26}$' 'previewId: 26 lower-case base32 characters'
PA=$(_json .previewId)
expect_json .port 3000 'the port asked for'
expect_json .url "http://$PA.$DOMAIN:$PORT/" 'url: <scheme>://<previewId>.<domain>:<port>/'
expect_json_match .expires_at "$RFC3339_UTC" 'expires_at in RFC 3339'
TTL=$(($(epoch "$(_json .expires_at)") - $(date -u +%s)))
check_cond 'expires in an hour by default' "((TTL > 3590 && TTL <= 3601))"
check_eq 'its row holds the address the engine gives the sandbox' \
	"$(docker inspect -f "{{(index .NetworkSettings.Networks \"$SANDBOXD_SANDBOX_NETWORK\").IPAddress}}" \
		"$(docker ps -q --filter "label=sandboxd.sandbox=$(owner_label_of "$A")")")" \
	"$(sql "select host(addr) from previews where id = '$PA'")"
check_eq 'the create is audited with the port, ttl and id' "201|3000|3600|$PA" \
	"$(sql "select status || '|' || (details->>'port') || '|' || (details->>'ttl') || '|' || (details->>'preview_id')
		from audit_log where action = 'sandbox.preview_create' and sandbox_id = '$A' and status = 201")"

# --- the bytes: a page, 20 MiB up, a WebSocket ------------------------------------------
check 'the page comes back through the preview' wait_until 30 page_is "$PA" "$A"
check_eq 'as the server sent it' text/html "$(grep -i '^content-type:' <<<"$HEADERS" | cut -d' ' -f2)"
head -c $((20 << 20)) /dev/urandom >"$_T/big"
PV_TIMEOUT=120 pv POST "$(host_of "$PA")" /upload --data-binary "@$_T/big" -H 'Content-Type: application/octet-stream'
expect_status 200 'a 20 MiB POST: 200'
check_eq 'its SHA-256 as the sandbox computed it' "$(sha256sum "$_T/big" | cut -d' ' -f1)" "$BODY"
PV_TIMEOUT=10 pv GET "$(host_of "$PA")" /ws --http1.1 -H 'Connection: Upgrade' -H 'Upgrade: websocket' \
	-H 'Sec-WebSocket-Version: 13' -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=='
expect_status 101 'a WebSocket upgrade: 101'
expect_header Sec-WebSocket-Accept 's3pPLMBiTxaQ9kYGzzhZRbK+xOo=' 'with the accept key of RFC 6455'
check_eq 'and the frame after it reaches the client' 'hello' "$(tail -c 5 "$_T/pbody")"

# --- nothing listening, forged headers, other sandboxes ---------------------------------
mk_preview "$A" '{"port":3001}'
expect_status 201 'a preview of a port nothing listens on'
PN=$PID
pv GET "$(host_of "$PN")" /
expect_error 502 'nothing listens on port 3001 in the sandbox' 'through it: 502 with the JSON'
mk_preview "$B" '{"port":3000}'
PB=$PID
check "the other sandbox's preview serves its own page" wait_until 30 page_is "$PB" "$B"
B_ADDR=$(sql "select host(addr) from previews where id = '$PB'")
check_cond 'the two sandboxes have two addresses' "[[ -n '$B_ADDR' && '$B_ADDR' != \"\$(sql \"select host(addr) from previews where id = '$PA'\")\" ]]"
FORGED=(-H "X-Sandboxd-Preview-Addr: $B_ADDR" -H 'X-Sandboxd-Preview-Port: 3000')
pv GET "$(host_of "$PN")" / "${FORGED[@]}"
expect_error 502 'nothing listens on port 3001 in the sandbox' "forged headers naming the other sandbox: still its own port (502)"
pv GET "$(host_of "$PA")" / "${FORGED[@]}"
check_cond 'forged headers on a working preview: its own page, never the other' \
	"[[ \$STATUS == 200 && \$BODY == *'served by $A'* && \$BODY != *'$B'* ]]"
pv GET "$(host_of "$PA")" / -H "X-Forwarded-Host: $(host_of "$PB")" -H "X-Original-Host: $(host_of "$PB")"
check_cond 'forwarded-host headers do not pick another preview' "[[ \$STATUS == 200 && \$BODY == *'served by $A'* ]]"
pv GET "x.$(host_of "$PA")" /
expect_error 404 'preview not found' 'a label in front of the id: 404'
pv GET "$(host_of abcdefghijklmnopqrstuvwxyz)" /
expect_error 404 'preview not found' 'an unknown id: 404'
api DELETE "$SB/$B/previews/$PA" '' "$OT"
expect_error 404 'preview not found' "deleting a preview through another sandbox's path: 404"
check 'and it still works' page_is "$PA" "$A"
api GET "$SB/$B/previews" '' "$OT"
expect_json '[.[].previewId] | join(",")' "$PB" "the other sandbox's list holds only its own"

# The check is nginx's alone: a client asking sandboxd for it, with the parameter's name as
# a header, gets 404 and no address.
API_HEADERS=("SANDBOXD_PREVIEW_HOST: $(host_of "$PA")" "Sandboxd-Preview-Host: $(host_of "$PA")")
api GET /_sandboxd/preview-check '' -
API_HEADERS=()
expect_error 404 'not found' 'the check route asked by a client: 404'
check 'with no address in its answer' eval '! grep -qi "^x-sandboxd-preview" <<<"$HEADERS"'
# From inside a sandbox, nginx's bridge address serves git, never a preview.
api POST "$SB/$B/exec" "{\"cmd\":\"curl -s -o /dev/null -w '%{http_code}' -H 'Host: $(host_of "$PA")' http://sandboxd.internal:$PORT/\"}" "$OT"
expect_json .stdout 404 'a sandbox asking for a preview through the bridge: 404'
check_eq 'no check of a preview is audited (only its making and deletion)' 0 \
	"$(sql "select count(*) from audit_log where action = 'preview.check' and status < 400")"

# --- the list, a delete, a ttl ---------------------------------------------------------------
api GET "$SB/$A/previews" '' "$OT"
expect_status 200 'the list: 200'
expect_json '[.[] | "\(.previewId):\(.port)"] | join(",")' "$PA:3000,$PN:3001" 'both previews of the sandbox, oldest first'
expect_keys '.[0]' 'expires_at,port,previewId,url' 'each with the shape of the create'
api DELETE "$SB/$A/previews/$PN" '' "$OT"
expect_status 204 'a delete: 204'
expect_empty_body 'with no body'
check_eq 'the delete is audited' "204|$PN" \
	"$(sql "select status || '|' || (details->>'preview_id') from audit_log where action = 'sandbox.preview_delete' and sandbox_id = '$A'")"
pv GET "$(host_of "$PN")" /
expect_error 404 'preview not found' 'deleted: 404'
api DELETE "$SB/$A/previews/$PN" '' "$OT"
expect_error 404 'preview not found' 'deleting it again: 404'
api DELETE "$SB/$A/previews/nonsense" '' "$OT"
expect_error 404 'preview not found' 'deleting a malformed id: 404'
mk_preview "$A" '{"port":3000,"ttl":3}'
expect_status 201 'a preview with a ttl of 3 s'
PT=$PID
TTL=$(($(epoch "$(_json .expires_at)") - $(date -u +%s)))
check_cond 'expiring in 3 s' "((TTL >= 1 && TTL <= 4))"
check 'works before it expires' page_is "$PT" "$A"
check 'and answers 404 once expired' wait_until 15 gone "$PT"
expect_error 404 'preview not found' 'expired: 404 with the JSON'
api GET "$SB/$A/previews" '' "$OT"
expect_json '[.[].previewId] | join(",")' "$PA" 'an expired preview is no longer listed'

# At most 64 live previews per sandbox (expired ones do not count).
LIVE=$(sql "select count(*) from previews where sandbox_id = '$A' and expires_at > now()")
for ((i = LIVE; i < 64; i++)); do
	api POST "$SB/$A/previews" '{"port":8000}' "$OT"
	[[ $STATUS == 201 ]] || break
done
check_eq 'up to 64 live previews of one sandbox' 64 "$(sql "select count(*) from previews where sandbox_id = '$A' and expires_at > now()")"
api POST "$SB/$A/previews" '{"port":8000}' "$OT"
expect_error 429 'preview limit reached' 'the 65th: 429'
api DELETE "$SB/$A/previews/$(sql "select id from previews where sandbox_id = '$A' and port = 8000 limit 1")" '' "$OT"
api POST "$SB/$A/previews" '{"port":8000}' "$OT"
expect_status 201 'one deleted: room for one more'
check 'the first preview serves on' page_is "$PA" "$A"

# --- a browser ---------------------------------------------------------------------------------
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $CHROMIUM ]]; then
	fail 'chromium is installed (deploy/install-deps.sh)' 'no chromium on PATH'
else
	chrome() { # chromium's flags for this test: root, headless, no network beyond the stack
		timeout -k 5 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic \
			--no-first-run --disable-background-networking --disable-component-update \
			--disable-sync --disable-dev-shm-usage --user-data-dir="$_T/chrome-$1" \
			--host-resolver-rules="MAP *.$DOMAIN 127.0.0.1" "${@:2}" 2>>"$_T/chrome.err"
	}
	URL_A="http://$(host_of "$PA")/"
	chrome dom --virtual-time-budget=5000 --dump-dom "$URL_A" >"$_T/dom.html"
	cp "$_T/dom.html" "$ARTIFACTS/preview-dom.html"
	check 'Chromium loads the page: the server wrote it' grep -q "served by $A" "$_T/dom.html"
	check 'and its script ran in the rendered DOM' grep -q 'script ran for 26-character id' "$_T/dom.html"
	rm -f "$ARTIFACTS/preview.png"
	(cd "$_T" && chrome shot --window-size=800,600 --screenshot="$ARTIFACTS/preview.png" "$URL_A" >/dev/null)
	check_eq "a screenshot is kept ($ARTIFACTS/preview.png)" '89504e470d0a1a0a' \
		"$(head -c 8 "$ARTIFACTS/preview.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')"
	[[ -s $_T/chrome.err ]] && cp "$_T/chrome.err" "$ARTIFACTS/chromium.log"
fi

# --- the sandbox ends: its previews die ---------------------------------------------------------
api POST "$SB/$B/close" '' "$OT"
expect_status 204 'the other sandbox closed'
pv GET "$(host_of "$PB")" /
expect_error 404 'preview not found' "its preview: 404"
api GET "$SB/$B/previews" '' "$OT"
expect_body '[]' 'a closed sandbox lists none'
api POST "$SB/$B/previews" '{"port":3000}' "$OT"
expect_error 410 'sandbox is closed' 'and makes none: 410'
check 'the first sandbox still serves' page_is "$PA" "$A"

finish
