#!/usr/bin/env bash
# t_admin_page.sh: GET /admin, the operators' page (SPEC §8). Who may read it (401 with the
# Basic challenge a browser answers, 403 for a user, 200 for a site admin over Basic or
# Bearer); what it shows (the engine, the sandbox this test made with its creator and
# repository, the warm pool, the test's own denial and failure from the audit log), with an
# account name and a request path full of HTML coming out escaped; headless Chromium signs
# in with Basic and renders it (DOM checked, screenshot kept in $IT_ARTIFACTS). And the
# guard that makes Basic safe in a browser: a cross-site form's POST with the admin's Basic
# credentials (form-encoded, or text/plain) is refused with 415 and changes nothing, while
# Basic with a JSON body and Bearer with none still work.
# shellcheck disable=SC2034 # LAST_REQ, STATUS, BODY, HEADERS are lib.sh's
. "$(dirname "$0")/lib.sh"

ARTIFACTS=${IT_ARTIFACTS:-$ROOT/build/it-artifacts}/$TEST_NAME
mkdir -p "$ARTIFACTS"
HOSTPORT=${SANDBOXD_URL#http://}
HOSTPORT=${HOSTPORT%%/*}
U=pg$SFX
NAME='<img src=x onerror="document.title=1"><b>Bold</b> & Co'

# --- a user whose name is HTML, a repository, a sandbox --------------------------------------
mk_account "$U" --name "$NAME" || exit 1
UT=$(mk_token "$U" write) || exit 1
api POST /api/v3/user/repos '{"name":"page","visibility":"private"}' "$UT"
expect_status 201 "repository $U/page created"
W=$_T/w
git init -q -b main "$W" && echo x >"$W/x" && git -C "$W" add x &&
	git -C "$W" -c user.name=t -c user.email=t@t commit -qm x
git -C "$W" push -q "http://t:$UT@$HOSTPORT/$U/page.git" main
SB=/api/v3/repos/$U/page/diffinery/sandboxes
api POST "$SB" '{}' "$UT"
expect_status 201 'a sandbox'
ID=$(_json .id)
[[ -n $ID && $ID != null ]] && AT_EXIT+=("api POST '$SB/$ID/close' '' '$UT' >/dev/null 2>&1")
# A failure of this test's own, its path with markup in it (curl sends it as it is).
api GET "/api/v3/repos/$U/<i>nope</i>" '' "$UT"
expect_status 404 'a request for a repository that is not there: 404'

# --- who may read it -----------------------------------------------------------------------
api GET /admin '' -
expect_error 401 'authentication required' 'no credentials: 401'
expect_header WWW-Authenticate 'Basic realm="sandboxd"' 'with the Basic challenge a browser answers'
api GET /admin '' "$(basic "$UT")"
expect_error 403 'this needs a site admin' "a user's token over Basic: 403"
api GET /admin '' "$(basic dfy_notatoken)"
expect_error 401 'bad credentials' 'a password that is no token: 401'
api GET /admin '' "$SANDBOXD_TOKEN"
expect_status 200 "the site admin's token over Bearer: 200"
api GET /admin '' "$(basic "$SANDBOXD_TOKEN" operator)"
expect_status 200 'over Basic, any user name: 200'
expect_header_match Content-Type '^text/html; charset=utf-8' 'an HTML page'
expect_header Cache-Control no-store 'that no cache keeps'
printf '%s' "$BODY" >"$ARTIFACTS/admin.html"
check 'the engine is listed, answering' grep -q '<td>answering</td>' "$ARTIFACTS/admin.html"
check 'the sandbox is listed' grep -q "<td>$ID</td>" "$ARTIFACTS/admin.html"
check 'with its repository' grep -q "<td>$U/page</td>" "$ARTIFACTS/admin.html"
check "its creator's name, escaped" grep -qF \
	"<td>$U (&lt;img src=x onerror=&quot;document.title=1&quot;&gt;&lt;b&gt;Bold&lt;/b&gt; &amp; Co)</td>" \
	"$ARTIFACTS/admin.html"
check_eq 'and nowhere as markup' 0 "$(grep -c '<b>Bold\|<img' "$ARTIFACTS/admin.html")"
check 'the failed request is among the recent failures, its path escaped' grep -qF \
	"<td>GET /api/v3/repos/$U/&lt;i&gt;nope&lt;/i&gt;</td>" "$ARTIFACTS/admin.html"
check 'the 403 of this test is among the denials' grep -qF "<td>$U</td><td></td><td>GET /admin</td><td>this needs a site admin</td>" \
	"$ARTIFACTS/admin.html"
check 'each section names the view for more' grep -qF '<code>SELECT * FROM audit_running_sandboxes</code>' \
	"$ARTIFACTS/admin.html"
check_eq 'and the page has no script' 0 "$(grep -ci '<script' "$ARTIFACTS/admin.html")"

# --- a browser -------------------------------------------------------------------------------
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $CHROMIUM ]]; then
	fail 'chromium is installed (deploy/install-deps.sh)' 'no chromium on PATH'
else
	chrome() { # headless, as root, nothing but the stack; the credentials in the URL
		timeout -k 5 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic \
			--no-first-run --disable-background-networking --disable-component-update \
			--disable-sync --disable-dev-shm-usage --user-data-dir="$_T/chrome-$1" \
			"${@:2}" 2>>"$_T/chrome.err"
	}
	PAGE="http://operator:$SANDBOXD_TOKEN@$HOSTPORT/admin"
	chrome dom --dump-dom "$PAGE" >"$_T/dom.html"
	cp "$_T/dom.html" "$ARTIFACTS/admin-dom.html"
	check 'Chromium signs in with Basic and renders the page' grep -q '<h1>sandboxd</h1>' "$_T/dom.html"
	check 'its DOM holds the sandbox' grep -q "<td>$ID</td>" "$_T/dom.html"
	check "and the creator's name as text" grep -qF '&lt;b&gt;Bold&lt;/b&gt; &amp; Co)</td>' "$_T/dom.html"
	check_eq 'no element came out of the name (no <b>, no <img>)' 0 \
		"$(grep -c '<b>Bold\|<img' "$_T/dom.html")"
	check 'the title is the page'"'"'s own (no handler of the name ran)' \
		grep -q '<title>sandboxd: operators</title>' "$_T/dom.html"
	rm -f "$ARTIFACTS/admin.png"
	(cd "$_T" && chrome shot --window-size=1100,700 --screenshot="$ARTIFACTS/admin.png" "$PAGE" >/dev/null)
	check_eq "a screenshot is kept ($ARTIFACTS/admin.png)" '89504e470d0a1a0a' \
		"$(head -c 8 "$ARTIFACTS/admin.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')"
	[[ -s $_T/chrome.err ]] && cp "$_T/chrome.err" "$ARTIFACTS/chromium.log"
fi

# --- the browser's credentials cannot be replayed by another site's form ---------------------
form() { # CONTENT-TYPE BODY PATH: a POST as a form of another site would send it
	STATUS=$(curl -sS -o "$_T/body" -w '%{http_code}' --max-time 30 -X POST \
		-H "Authorization: $(basic "$SANDBOXD_TOKEN" | sed 's/^raw://')" \
		-H "Content-Type: $1" -H "Origin: http://evil.example" --data-binary "$2" \
		"$SANDBOXD_URL$3")
	BODY=$(cat "$_T/body")
	LAST_REQ="form POST $3 ($1)"
}
MSG='a call that changes something needs Content-Type: application/json or a Bearer token'
form application/x-www-form-urlencoded 'x=1' "$SB/$ID/close"
expect_error 415 "$MSG" "a form-encoded POST to …/close with the admin's Basic credentials: 415"
form text/plain 'x=1' "$SB/$ID/close"
expect_error 415 "$MSG" 'text/plain (the other form encoding): 415'
form multipart/form-data 'x=1' "$SB/$ID/exec"
expect_error 415 "$MSG" 'multipart to …/exec: 415'
api GET "$SB/$ID" '' "$UT"
expect_json .state ready 'the sandbox is still running'
check_eq 'and nothing ran in it (no exec, no close succeeded)' 0 \
	"$(sql "select count(*) from audit_log where details->>'path' like '%/$ID/%' and status < 400")"
check_eq 'each refusal is audited as a 415' 3 \
	"$(sql "select count(*) from audit_log where details->>'path' like '%/$ID/%' and status = 415")"
form 'application/json; charset=utf-8' '{"name":"bybasic"}' /api/v3/user/repos
expect_status 201 'Basic with a JSON body (no form can send one) still works: 201'
api POST "$SB/$ID/close" '' "$UT"
expect_status 204 'Bearer with no body at all still works: the sandbox closed'

finish
