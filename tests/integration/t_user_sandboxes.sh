#!/usr/bin/env bash
# t_user_sandboxes.sh: a sandbox from its id alone (issue 33 item 5, decision 0091):
# GET /api/v3/user/sandboxes (the caller's own, on every repository, newest first,
# paginated as the forge's lists, ?state=) and GET /api/v3/sandboxes/{id} (the scoped
# GET's answer and checks, plus repository; what the caller cannot see is "sandbox not
# found"), and MCP's sandbox_list on the first. Two accounts, three repositories.
. "$(dirname "$0")/lib.sh"

HOSTPORT=${SANDBOXD_URL#http://}
ids() { jq -r '[.[].id] | join(",")' <<<"$BODY"; }
repos() { jq -r '[.[].repository] | join(",")' <<<"$BODY"; }
rpc() { # BODY TOKEN: POST /mcp
	API_HEADERS=('Accept: application/json, text/event-stream')
	api POST /mcp "$1" "$2"
	API_HEADERS=()
}
# new_repo TOKEN OWNER NAME: a private repository with one commit on main.
new_repo() {
	api POST /api/v3/user/repos "{\"name\":\"$3\",\"visibility\":\"private\"}" "$1"
	expect_status 201 "repository $2/$3 created"
	local w=$_T/w-$2-$3
	git init -q -b main "$w"
	echo x >"$w/x" && git -C "$w" add x && git -C "$w" -c user.name=t -c user.email=t@t commit -qm x
	git -C "$w" push -q "http://t:$1@$HOSTPORT/$2/$3.git" main
}
# new_box TOKEN OWNER/NAME: a sandbox there; its id in NEW.
new_box() {
	api POST "/api/v3/repos/$2/diffinery/sandboxes" '{}' "$1"
	expect_status 201 "a sandbox on $2"
	NEW=$(_json .id)
	AT_EXIT+=("api POST '/api/v3/repos/$2/diffinery/sandboxes/$NEW/close' '' '$1' >/dev/null")
}

A="usa$SFX"
B="usb$SFX"
mk_user "$A" || exit 1
AT=$LAST_TOKEN
mk_user "$B" || exit 1
BT=$LAST_TOKEN
new_repo "$AT" "$A" one
new_repo "$AT" "$A" two
new_repo "$BT" "$B" three
api PUT "/api/v3/repos/$A/one/collaborators/$B" '{"role":"write"}' "$AT"
expect_status 204 "$B writes to $A/one"

# A's three, oldest first: A1 (closed below), A2, A3; B's two, one on A's repository.
new_box "$AT" "$A/one"; A1=$NEW
new_box "$AT" "$A/two"; A2=$NEW
new_box "$AT" "$A/one"; A3=$NEW
new_box "$BT" "$B/three"; B1=$NEW
new_box "$BT" "$A/one"; B2=$NEW
api POST "/api/v3/repos/$A/one/diffinery/sandboxes/$A1/close" '' "$AT"
expect_status 204 "$A1 closed"

# --- the list ----------------------------------------------------------------------------
U=/api/v3/user/sandboxes
BASE="$SANDBOXD_URL$U"
api GET $U '' "$AT"
expect_schema sandbox.list_own 200
check_eq "$A's own three, newest first" "$A3,$A2,$A1" "$(ids)"
check_eq 'each with its repository' "$A/one,$A/two,$A/one" "$(repos)"
check_eq 'everything on one page: no Link header' '' "$(header Link || true)"
api GET "/api/v3/repos/$A/one/diffinery/sandboxes" '' "$AT"
check_eq "the repository's list shows its owner $B's sandbox there too; the caller's list does not" true \
	"$(jq --arg id "$B2" 'any(.[]; .id == $id)' <<<"$BODY")"
api GET $U '' "$BT"
check_eq "$B's own two, not $A's on the repository they share" "$B2,$B1" "$(ids)"
check_eq 'with their repositories' "$A/one,$B/three" "$(repos)"

# Each item is the scoped GET's object plus repository.
api GET "/api/v3/repos/$A/two/diffinery/sandboxes/$A2" '' "$AT"
SCOPED=$(jq -c 'del(.last_used_at, .idle_stop_at)' <<<"$BODY")
SCOPED_KEYS=$(jq -r 'keys + ["repository"] | sort | join(",")' <<<"$BODY")
api GET $U '' "$AT"
check_eq "a list item has the scoped GET's fields and repository" "$SCOPED_KEYS" \
	"$(jq -r --arg id "$A2" '.[] | select(.id == $id) | keys | sort | join(",")' <<<"$BODY")"
check_eq 'with the same values' "$SCOPED" \
	"$(jq -c --arg id "$A2" '.[] | select(.id == $id) | del(.last_used_at, .idle_stop_at, .repository)' <<<"$BODY")"

# Pagination, as GET /api/v3/user/repos.
api GET "$U?per_page=1" '' "$AT"
check_eq 'per_page=1: the newest' "$A3" "$(ids)"
expect_header Link "<$BASE?per_page=1&page=2>; rel=\"next\", <$BASE?per_page=1&page=3>; rel=\"last\"" \
	'page 1 of 3: Link next and last'
api GET "$U?per_page=1&page=2" '' "$AT"
check_eq 'page 2: the next' "$A2" "$(ids)"
expect_header Link "<$BASE?per_page=1&page=3>; rel=\"next\", <$BASE?per_page=1&page=3>; rel=\"last\", <$BASE?per_page=1&page=1>; rel=\"first\", <$BASE?per_page=1&page=1>; rel=\"prev\"" \
	'page 2 of 3: next, last, first, prev'
api GET "$U?per_page=1&page=3" '' "$AT"
check_eq 'page 3: the oldest' "$A1" "$(ids)"
api GET "$U?per_page=1&page=9" '' "$AT"
expect_status 200 'a page past the end: 200'
check_eq 'and an empty array' 0 "$(jq length <<<"$BODY")"

# The state filter; the Link header keeps it.
api GET "$U?state=closed" '' "$AT"
expect_schema sandbox.list_own 200 'state=closed: 200, as the schema says'
check_eq 'state=closed: the closed one only' "$A1" "$(ids)"
expect_json '.[0].state' closed 'in state closed'
api GET "$U?state=ready" '' "$AT"
check_eq 'state=ready: the two that run, not the closed one' "$A3,$A2" "$(ids)"
api GET "$U?state=ready&per_page=1&page=1" '' "$AT"
check_eq 'state=ready, per_page=1: the newest that runs' "$A3" "$(ids)"
expect_header Link "<$BASE?state=ready&per_page=1&page=2>; rel=\"next\", <$BASE?state=ready&per_page=1&page=2>; rel=\"last\"" \
	'the links keep state=ready'
api GET "$U?state=failed" '' "$AT"
expect_status 200 'state=failed: 200'
check_eq 'and none' 0 "$(jq length <<<"$BODY")"
api GET "$U?state=" '' "$AT"
check_eq 'an empty state is no filter' "$A3,$A2,$A1" "$(ids)"
STATE_TEXT="query 'state' must be one of starting, ready, closed, stopped, failed"
api GET "$U?state=running" '' "$AT"
expect_error 422 "$STATE_TEXT" 'state=running: 422 naming the states'
expect_schema sandbox.list_own 422
api GET "$U?state=$(printf 'x%.0s' {1..40})" '' "$AT"
expect_error 422 "$STATE_TEXT" 'a state too long to be one: the same 422'

# Who may list: a write-scoped personal token, as on every sandbox route.
api GET $U '' -
expect_error 401 'authentication required' 'no token: 401'
ART=$(mk_token "$A" read)
api GET $U '' "$ART"
expect_error 403 'this needs a token with write scope' 'a read token: 403'
api GET "/api/v3/sandboxes/$A2" '' "$ART"
expect_error 403 'this needs a token with write scope' 'a read token by id: 403'

# --- by id -------------------------------------------------------------------------------
api GET "/api/v3/sandboxes/$A2" '' "$AT"
expect_schema sandbox.get_by_id 200
expect_json .repository "$A/two" 'by id: its repository'
check_eq "the scoped GET's fields and repository" "$SCOPED_KEYS" "$(jq -r 'keys | sort | join(",")' <<<"$BODY")"
check_eq 'with the same values' "$SCOPED" "$(jq -c 'del(.last_used_at, .idle_stop_at, .repository)' <<<"$BODY")"
api GET "/api/v3/sandboxes/$A1" '' "$AT"
expect_schema sandbox.get_by_id 200 'a closed one by id: 200'
expect_json '[.state, .repository] | join("|")' "closed|$A/one" 'closed, on its repository'
api GET "/api/v3/sandboxes/$B2" '' "$AT"
expect_status 200 "$B's sandbox on $A's repository, by its admin: 200 as on the scoped route"
expect_json .repository "$A/one" 'on its repository'

# What the caller may not see or use.
api GET "/api/v3/repos/$A/one/diffinery/sandboxes/$A3" '' "$BT"
expect_error 403 'not your sandbox' "$A's sandbox, scoped, by a collaborator: 403"
api GET "/api/v3/sandboxes/$A3" '' "$BT"
expect_error 403 'not your sandbox' 'by id: the same 403'
api GET "/api/v3/repos/$A/two/diffinery/sandboxes/$A2" '' "$BT"
expect_error 404 'repository not found' "a sandbox of a repository $B cannot see, scoped: 404"
api GET "/api/v3/sandboxes/$A2" '' "$BT"
expect_error 404 'sandbox not found' 'by id: sandbox not found, naming no repository'
expect_schema sandbox.get_by_id 404
api GET /api/v3/sandboxes/sb_000000000000000000000000 '' "$AT"
expect_error 404 'sandbox not found' 'an id of no sandbox: 404'
api GET "/api/v3/repos/$A/one/diffinery/sandboxes/nope" '' "$AT"
expect_error 404 'sandbox not found' 'a malformed id, scoped: 404'
api GET /api/v3/sandboxes/nope '' "$AT"
expect_error 404 'sandbox not found' 'by id: the same 404'
api GET /api/v3/sandboxes/%27%3B%20select%201 '' "$AT"
expect_error 404 'sandbox not found' 'an id of quotes and spaces: 404'
api GET "/api/v3/sandboxes/$A2" '' -
expect_error 401 'authentication required' 'by id without a token: 401'

# --- MCP's sandbox_list ------------------------------------------------------------------
call() { # ARGUMENTS TOKEN
	rpc "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"sandbox_list\",\"arguments\":$1}}" "$2"
}
call '{}' "$AT"
expect_json .result.isError false 'sandbox_list: a result'
expect_json '[.result.structuredContent.sandboxes[].id] | join(",")' "$A3,$A2,$A1" "$A's three, newest first"
expect_json '.result.structuredContent.sandboxes[0].repository' "$A/one" 'each with its repository'
call '{"state":"ready","per_page":1,"page":2}' "$AT"
expect_json '[.result.structuredContent.sandboxes[].id] | join(",")' "$A2" 'state, per_page and page reach the route'
call '{"state":"closed"}' "$BT"
expect_json '.result.structuredContent.sandboxes | length' 0 "$B has no closed sandbox"
call '{"state":"running"}' "$AT"
expect_json '[.result.isError, .result.content[0].text] | map(tostring) | join("|")' \
	"true|$STATE_TEXT" 'a bad state: the REST text'
call '{"state":"ready&per_page=1"}' "$AT"
expect_json '[.result.isError, .result.content[0].text] | map(tostring) | join("|")' \
	"true|$STATE_TEXT" 'a state that tries to add a query pair stays one value'
call '{"per_page":0}' "$AT"
expect_json '.result.content[0].text' "argument 'per_page' must be an integer from 1 to 100" \
	'per_page 0: named'

finish
