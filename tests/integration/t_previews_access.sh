#!/usr/bin/env bash
# t_previews_access.sh: a preview lives only while its maker could make it, and only at its
# sandbox's container (issue 32 A.6; docs/decisions/0079). Admins make previews of the
# owner's sandbox, then lose their access each way the service knows (collaborator removed,
# demoted to write, account disabled, site admin dropped, a collaborator row deleted by
# hand, the repository archived): each preview answers nginx's 404 `preview not found` at
# once, and given the access back, the old URL stays dead while a new one works. The owner's
# preview, and one made by an admin who keeps access, serve throughout. Then the container:
# the sandbox's row pointed at another tenant's address, and at a new container, and the
# preview never reaches the other container or the old one.
# shellcheck disable=SC2034 # LAST_REQ, STATUS, BODY and HEADERS are lib.sh's
. "$(dirname "$0")/lib.sh"

PORT=${SANDBOXD_URL##*:}
PORT=${PORT%%/*}
DOMAIN=${SANDBOXD_PREVIEW_DOMAIN:-preview.localhost}

# The server, in a sandbox (or a container): perl -e SERVER PORT NAME answers every request
# with "served by NAME". The runner image has Perl, not Python.
read -r -d '' SERVER <<'PERL'
use strict; use warnings; use IO::Socket::INET;
my ($port, $name) = @ARGV;
my $srv = IO::Socket::INET->new(LocalAddr => '0.0.0.0', LocalPort => $port, Listen => 16,
                                ReuseAddr => 1) or die "listen $port: $!";
while (1) {
    my $c = $srv->accept or next;
    while (my $l = <$c>) { last if $l =~ /^\r?\n$/; }
    my $body = "served by $name\n";
    print $c "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " . length($body)
           . "\r\nConnection: close\r\n\r\n$body";
    close $c;
}
PERL

# serve SB_ROUTE ID NAME TOKEN: the server started in sandbox ID, detached, on port 3000.
serve() {
	local b64
	b64=$(printf '%s\n' "$SERVER" | base64 -w0)
	api POST "$1/$2/write" "{\"path\":\"/tmp/srv.pl\",\"content\":\"$b64\"}" "$4"
	expect_status 200 "the server's script written into $3"
	api POST "$1/$2/exec" "{\"cmd\":\"nohup perl /tmp/srv.pl 3000 $3 >/tmp/srv.log 2>&1 &\",\"detach\":true}" "$4"
	expect_status 202 "the server started in $3 (detached)"
}

# pv HOST: GET / of the stack's nginx with that Host; sets STATUS, BODY.
pv() {
	LAST_REQ="GET http://$1/ (to 127.0.0.1:$PORT)"
	STATUS=$(curl -sS -o "$_T/pbody" -w '%{http_code}' --max-time 30 -H "Host: $1" \
		"http://127.0.0.1:$PORT/" 2>"$_T/curl.err") || STATUS=000
	BODY=$(tr -d '\0' <"$_T/pbody")
	HEADERS=''
}
host_of() { printf '%s.%s:%s' "$1" "$DOMAIN" "$PORT"; }
page_is() { pv "$(host_of "$1")" && [[ $STATUS == 200 && $BODY == "served by $2" ]]; }
# mk_preview SB_ROUTE ID TOKEN NAME: a preview of port 3000 (its id in PID), checked 201.
mk_preview() {
	api POST "$1/$2/previews" '{"port":3000}' "$3"
	expect_status 201 "$4 makes a preview"
	PID=$(_json .previewId)
}
# dead PID NAME: the preview answers what an unknown one does, and its row is gone or not.
dead() {
	pv "$(host_of "$1")"
	expect_error 404 'preview not found' "$2: its preview answers 404 preview not found"
}
rows() { sql "select count(*) from previews where id = '$1'"; }

# --- the owner's sandbox, and the people who make previews of it ---------------------------
mk_sandbox "pva$SFX" access
A=$ID
O=pva$SFX
OT_A=$OT
SB_A=$SB
R_A=$R
AT_EXIT+=("curl -s -o /dev/null -X POST -H 'Authorization: Bearer $OT_A' '$SANDBOXD_URL$SB_A/$A/close'")
serve "$SB_A" "$A" A "$OT_A"

declare -A TOK
for who in x y z d v w; do
	mk_user "pv$who$SFX" || exit 1
	TOK[$who]=$LAST_TOKEN
done
for who in x y z d v; do
	api PUT "/api/v3/repos/$R_A/collaborators/pv$who$SFX" '{"role":"admin"}' "$OT_A"
	expect_status 204 "pv$who is an admin collaborator"
done
api PUT "/api/v3/repos/$R_A/collaborators/pvw$SFX" '{"role":"write"}' "$OT_A"
expect_status 204 'pvw is a write collaborator'
mk_user "pvs$SFX" --site-admin || exit 1
TOK[s]=$LAST_TOKEN

mk_preview "$SB_A" "$A" "$OT_A" 'the owner'
PA=$PID
check "the owner's preview serves the sandbox" wait_until 30 page_is "$PA" A
declare -A PV
for who in x y z d s; do
	mk_preview "$SB_A" "$A" "${TOK[$who]}" "pv$who (an admin, not the creator)"
	PV[$who]=$PID
	check "pv$who's preview serves the owner's sandbox" page_is "$PID" A
done
# The write collaborator's own sandbox: the creator's case, which ends the sandbox.
api POST "$SB_A" '{}' "${TOK[w]}"
expect_status 201 'pvw creates a sandbox of its own'
WB=$(_json .id)
AT_EXIT+=("curl -s -o /dev/null -X POST -H 'Authorization: Bearer ${TOK[w]}' '$SANDBOXD_URL$SB_A/$WB/close'")
serve "$SB_A" "$WB" WB "${TOK[w]}"
mk_preview "$SB_A" "$WB" "${TOK[w]}" 'pvw (the creator)'
PW=$PID
check "pvw's preview serves its sandbox" wait_until 30 page_is "$PW" WB

# --- each way of losing the access ---------------------------------------------------------
api DELETE "/api/v3/repos/$R_A/collaborators/pvx$SFX" '' "$OT_A"
expect_status 204 'pvx removed as collaborator'
dead "${PV[x]}" 'removed'
check_eq 'and its row is gone with the removal' 0 "$(rows "${PV[x]}")"
check 'the owner'"'"'s preview still serves' page_is "$PA" A

api PUT "/api/v3/repos/$R_A/collaborators/pvy$SFX" '{"role":"write"}' "$OT_A"
expect_status 204 'pvy demoted to write'
dead "${PV[y]}" 'demoted to write (below what a preview of another'"'"'s sandbox needs)'
check_eq 'and its row is gone' 0 "$(rows "${PV[y]}")"
api POST "$SB_A/$A/previews" '{"port":3000}' "${TOK[y]}"
expect_error 403 'not your sandbox' 'pvy can make none there either (as before)'

api PATCH "/api/v3/admin/accounts/pvz$SFX" '{"disabled":true}'
expect_status 200 'pvz disabled by a site admin'
dead "${PV[z]}" 'account disabled'
check_eq 'and its row is gone' 0 "$(rows "${PV[z]}")"

api PATCH "/api/v3/admin/accounts/pvs$SFX" '{"site_admin":false}'
expect_status 200 'pvs is no longer a site admin'
dead "${PV[s]}" 'site admin dropped'
check_eq 'and its row is gone' 0 "$(rows "${PV[s]}")"

api DELETE "/api/v3/repos/$R_A/collaborators/pvw$SFX" '' "$OT_A"
expect_status 204 'pvw (a creator) removed'
dead "$PW" "the creator removed (its sandbox ended)"

# No path of the service at all: the check alone decides, on every request.
sql "delete from collaborators where account_id = (select id from accounts where login = 'pvd$SFX')" >/dev/null
dead "${PV[d]}" 'collaborator row deleted by hand (no eager delete ran)'
check_eq 'its row is still there: the check refused it' 1 "$(rows "${PV[d]}")"

check 'through all of it the owner'"'"'s preview serves' page_is "$PA" A

# --- the access given back: the old URL stays dead, a new one works ------------------------
api PUT "/api/v3/repos/$R_A/collaborators/pvx$SFX" '{"role":"admin"}' "$OT_A"
expect_status 204 'pvx made an admin again'
dead "${PV[x]}" 'given back: the old preview'
mk_preview "$SB_A" "$A" "${TOK[x]}" 'pvx, again an admin,'
PX2=$PID
check 'and the new one serves' page_is "$PX2" A
mk_preview "$SB_A" "$A" "${TOK[v]}" 'pvv, an admin who kept the access,'
PV_V=$PID
check "pvv's preview serves" page_is "$PV_V" A

api GET "$SB_A/$A/previews" '' "$OT_A"
expect_status 200 'the list'
expect_json '[.[].previewId] | sort | join(",")' "$(printf '%s\n' "$PA" "$PX2" "$PV_V" | sort | paste -sd,)" \
	'lists exactly the previews that serve'

# Archived: no sandbox route works, so no preview serves; unarchived, they serve again.
api PATCH "/api/v3/repos/$R_A" '{"archived":true}' "$OT_A"
expect_status 200 'the repository archived'
dead "$PA" 'archived, the owner'
dead "$PV_V" 'archived, an admin'
api PATCH "/api/v3/repos/$R_A" '{"archived":false}' "$OT_A"
expect_status 200 'the repository unarchived'
check 'the owner'"'"'s preview serves again' page_is "$PA" A
check "and pvv's" page_is "$PV_V" A

# --- bound to the container ------------------------------------------------------------------
# Another tenant's sandbox, serving its own page.
mk_sandbox "pvt$SFX" other
T=$ID
AT_EXIT+=("curl -s -o /dev/null -X POST -H 'Authorization: Bearer $OT' '$SANDBOXD_URL$SB/$T/close'")
serve "$SB" "$T" T "$OT"
mk_preview "$SB" "$T" "$OT" 'the other tenant'
PT=$PID
check "the other tenant's preview serves its sandbox" wait_until 30 page_is "$PT" T
A_CID=$(sql "select container_id from sandboxes where id = '$A'")
A_ADDR=$(sql "select host(agent_ip) from sandboxes where id = '$A'")
T_ADDR=$(sql "select host(agent_ip) from sandboxes where id = '$T'")
check_cond 'two sandboxes, two addresses' "[[ -n '$A_ADDR' && -n '$T_ADDR' && '$A_ADDR' != '$T_ADDR' ]]"

# A's container gone and its address given to T's (before the reaper ends A): what the rows
# then say, A's preview made at that address.
sql "update previews set addr = '$T_ADDR' where id = '$PA'; update sandboxes set agent_ip = '$T_ADDR' where id = '$A'" >/dev/null
pv "$(host_of "$PA")"
check_cond "A's preview never reaches T's server at the address T now holds" "[[ \$BODY != *'served by T'* ]]"
expect_error 404 'preview not found' 'an address two live sandboxes claim: 404'
pv "$(host_of "$PT")"
expect_error 404 'preview not found' "T's own preview too, while the rows disagree (closed, not guessed)"
sql "update previews set addr = '$A_ADDR' where id = '$PA'; update sandboxes set agent_ip = '$A_ADDR' where id = '$A'" >/dev/null
check 'the rows right again: A serves A' page_is "$PA" A
check 'and T serves T' page_is "$PT" T

# A row that lacks the address (a sandbox whose start did not learn it): nothing is served
# until a create asks the engine and puts the answer in the row.
sql "update sandboxes set agent_ip = null where id = '$A'" >/dev/null
dead "$PA" 'the sandbox'"'"'s row without an address'
mk_preview "$SB_A" "$A" "$OT_A" 'the owner, the row without an address,'
check_eq "the engine's address is in the row again" "$A_ADDR" "$(sql "select host(agent_ip) from sandboxes where id = '$A'")"
check 'and the first preview serves again' page_is "$PA" A

# A's container replaced by a new one (the row names it and its address): the preview made
# for the old container reaches neither.
NET=$(docker inspect -f '{{range $k, $v := .NetworkSettings.Networks}}{{$k}}{{end}}' "$A_CID")
IMG=$(docker inspect -f '{{.Config.Image}}' "$A_CID")
NEW=$(docker run -d --rm --network "$NET" --label "sandboxd-test=$SFX" --entrypoint perl "$IMG" \
	-e "$SERVER" 3000 NEW 2>"$_T/run.err")
AT_EXIT+=("docker rm -f '$NEW' >/dev/null 2>&1")
check_cond 'a new container on the sandbox network' "[[ -n '$NEW' ]]"
NEW_ADDR=$(docker inspect -f "{{(index .NetworkSettings.Networks \"$NET\").IPAddress}}" "$NEW")
sql "update sandboxes set container_id = '$NEW', agent_ip = '$NEW_ADDR' where id = '$A'" >/dev/null
pv "$(host_of "$PA")"
check_cond 'the old preview does not reach the old container' "[[ \$BODY != *'served by A'* ]]"
expect_error 404 'preview not found' 'a preview of a replaced container: 404'
mk_preview "$SB_A" "$A" "$OT_A" 'the owner, after the replacement,'
PNEW=$PID
check_eq 'made for the new container' "$NEW" "$(sql "select container_id from previews where id = '$PNEW'")"
check 'and it serves the new container' wait_until 30 page_is "$PNEW" NEW
sql "update sandboxes set container_id = '$A_CID', agent_ip = '$A_ADDR' where id = '$A'" >/dev/null
check 'the old container back in the row: its preview serves it' page_is "$PA" A
pv "$(host_of "$PNEW")"
expect_error 404 'preview not found' "and the new container's preview is not found"

finish
