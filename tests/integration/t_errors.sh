#!/usr/bin/env bash
# t_errors.sh: 404 unknown route, 405 with Allow, 400 bodies that are not JSON
# objects, 413 over the body limit, X-Request-Id on every response, /healthz, the OpenAPI
# document (GET /api/v3/openapi.json).
. "$(dirname "$0")/lib.sh"

LIMIT=${SANDBOXD_BODY_LIMIT:-1048576}
U="err$SFX"
mk_user "$U" || exit 1
UT=$LAST_TOKEN
api POST /api/v3/user/repos "{\"name\":\"r$SFX\"}" "$UT"
expect_status 201 'a repository for the route tests'
RB="/api/v3/repos/$U/r$SFX"

IDS=()
request_id_ok() { # every response carries X-Request-Id
	local id
	if id=$(header X-Request-Id) && [[ -n $id ]]; then
		IDS+=("$id")
		ok "$1: X-Request-Id present"
	else
		fail "$1: X-Request-Id present" "headers were: $(tr '\n' '|' <<<"$HEADERS")"
	fi
}

json_ct() { expect_header_match Content-Type '^application/json' "$1: Content-Type application/json"; }

# --- 404 -----------------------------------------------------------------------------
for p in /api/v3/nope /api/v3/user/nope "$RB/nope" /api/v3/repos/onlyowner /api/v3 "/api/v3/repos/$U/r$SFX/collaborators/$U/x"; do
	api GET "$p" "" "$UT"
	expect_error 404 'not found' "GET $p: 404 not found"
	request_id_ok "404 $p"
done
json_ct '404'
# nginx's internal relay location, asked for from outside: nginx's own 404, in JSON too.
api GET /_relay/http/127.0.0.1:1/GET/v1_x "" "$UT"
expect_error 404 'not found' 'GET /_relay/… from outside: 404 not found, in JSON'
json_ct '404 /_relay'

# --- 405 with Allow ---------------------------------------------------------------------
allow_is() { # expected methods (space separated), label
	local got want g
	if ! got=$(header Allow); then
		fail "$2: Allow header" "no Allow header"
		return
	fi
	want=$(tr ' ' '\n' <<<"$1" | sort | paste -sd' ' -)
	g=$(tr ',' '\n' <<<"$got" | tr -d ' ' | grep -v '^HEAD$' | sort | paste -sd' ' -)
	check_eq "$2: Allow lists $1" "$want" "$g"
}
api DELETE /api/v3/user "" "$UT"
expect_error 405 'method not allowed' 'DELETE /api/v3/user: 405 method not allowed'
allow_is GET 'DELETE /api/v3/user'
request_id_ok '405'
json_ct '405'
api PUT "$RB" '{"archived":true}' "$UT"
expect_error 405 'method not allowed' 'PUT /repos/{owner}/{repo}: 405'
allow_is 'GET PATCH DELETE' 'PUT /repos/{owner}/{repo}'
api DELETE /api/v3/user/repos "" "$UT"
expect_error 405 'method not allowed' 'DELETE /user/repos: 405'
allow_is 'GET POST' 'DELETE /user/repos'
api GET "$RB/collaborators/$U" "" "$UT"
expect_error 405 'method not allowed' 'GET …/collaborators/{login}: 405'
allow_is 'PUT DELETE' 'GET …/collaborators/{login}'
api POST /api/v3/user "" "$UT"
expect_error 405 'method not allowed' 'POST /api/v3/user: 405'
api GET /api/v3/admin/accounts "" "$UT"
expect_error 405 'method not allowed' 'GET /admin/accounts: 405'
allow_is POST 'GET /admin/accounts'
api GET /api/v3/user/tokens/1 "" "$UT"
expect_error 405 'method not allowed' 'GET /user/tokens/{id}: 405'
allow_is DELETE 'GET /user/tokens/{id}'
api POST "$RB" '{}' "$UT"
expect_error 405 'method not allowed' 'POST /repos/{owner}/{repo}: 405'
check 'the POST changed nothing: the repository is there' test -d "$REPOS_DIR/$U/r$SFX.git"

# --- encoded path tricks are refused, never served from elsewhere ------------------------------
for p in '/api/v3/repos/%2e%2e/%2e%2e' "/api/v3/repos/$U/r$SFX%2Fx" "/api/v3/repos/$U%2Fr$SFX" \
	'/api/v3/repos/..%2F..%2Fetc/passwd' '/api/v3/user%00'; do
	api GET "$p" "" "$UT"
	check_cond "GET $p: 400 or 404 with a JSON message" '[[ ($STATUS == 400 || $STATUS == 404) && -n $(_json .message) ]]'
done

# --- query strings do not change routing ----------------------------------------------------
api GET '/api/v3/user?page=2&x=%2F' "" "$UT"
expect_status 200 'GET /api/v3/user?query: 200'
expect_json .login "$U" 'GET /api/v3/user?query: the account'

# --- 400: bodies that are not a JSON object ---------------------------------------------------
not_json() {
	api POST /api/v3/user/repos "$1" "$UT"
	expect_json_match .message '^body is not valid JSON: .+' "$2: 400 body is not valid JSON: …"
	expect_status 400 "$2: status 400"
}
not_json '{"name":' 'truncated JSON'
not_json 'name=x' 'form-encoded body'
not_json "{'name':'x'}" 'single-quoted JSON'
not_json "{\"name\":\"t$SFX\"} trailing" 'JSON followed by garbage'
api POST /api/v3/user/repos $'{"name":"u\xff\xfe"}' "$UT"
expect_status 400 'invalid UTF-8 in the body: 400'
check 'the JSON followed by garbage created nothing' test ! -e "$REPOS_DIR/$U/t$SFX.git"
request_id_ok '400'
json_ct '400'
for b in '[1,2]' '"name"' '42' 'null' 'true'; do
	api POST /api/v3/user/repos "$b" "$UT"
	expect_error 400 'body must be a JSON object' "body $b: 400 body must be a JSON object"
done
api POST /api/v3/user/repos '' "$UT"
check_cond 'no body at all: 400' '[[ $STATUS == 400 && -n $(_json .message) ]]'

# a deeply nested body is refused, not a crash
deep=$(printf '[%.0s' {1..20000})
printf '{"name":"deep%s","x":%s' "$SFX" "$deep" >"$_T/deep.json"
api POST /api/v3/user/repos "@$_T/deep.json" "$UT"
expect_status 400 'JSON nested 20000 deep: 400'
deep=$(printf '{"a":%.0s' {1..5000})
printf '{"name":"deep%s","x":%s1%s}' "$SFX" "$deep" "$(printf '}%.0s' {1..5000})" >"$_T/deep2.json"
api POST /api/v3/user/repos "@$_T/deep2.json" "$UT"
check_cond 'objects nested 5000 deep: 400 (or ignored as an unknown field: 201)' '[[ $STATUS == 400 || $STATUS == 201 ]]'
api GET /api/v3/user "" "$UT"
expect_status 200 'the service still answers after the deep bodies'

# missing field / wrong type name the field (per route; more in the route tests)
api POST /api/v3/user/repos '{"visibility":"public"}' "$UT"
expect_error 400 "field 'name' is required" 'missing field: 400 names it'
api POST /api/v3/user/repos '{"name":["x"]}' "$UT"
expect_error 400 "field 'name' must be a string" 'wrong type: 400 names it'
api PATCH "$RB" '{"archived":1}' "$UT"
expect_error 400 "field 'archived' must be a boolean" 'archived 1: must be a boolean'

# --- 413 over the body limit --------------------------------------------------------------------
body_of_size() { # SIZE FILE: a JSON object of exactly SIZE bytes
	local pre="{\"name\":\"$3\",\"pad\":\"" post='"}'
	local n=$(($1 - ${#pre} - ${#post}))
	{
		printf '%s' "$pre"
		head -c "$n" /dev/zero | tr '\0' a
		printf '%s' "$post"
	} >"$2"
}
body_of_size $((LIMIT + 1)) "$_T/big.json" "big$SFX"
api POST /api/v3/user/repos "@$_T/big.json" "$UT"
expect_error 413 "request body is larger than $LIMIT bytes" "a body of $((LIMIT + 1)) bytes: 413"
request_id_ok '413'
json_ct '413'
check 'the 413 created nothing' test ! -e "$REPOS_DIR/$U/big$SFX.git"
head -c $((8 * 1024 * 1024)) /dev/zero | tr '\0' ' ' >"$_T/huge.json"
api PATCH "$RB" "@$_T/huge.json" "$UT"
expect_error 413 "request body is larger than $LIMIT bytes" 'a body of 8 MiB: 413'
API_HEADERS=('Transfer-Encoding: chunked')
api POST /api/v3/user/repos "@$_T/big.json" "$UT"
expect_error 413 "request body is larger than $LIMIT bytes" "a chunked body of $((LIMIT + 1)) bytes: 413"
api POST /api/v3/user/repos "{\"name\":\"chunked$SFX\"}" "$UT"
expect_status 201 'a small chunked body: 201'
API_HEADERS=()
body_of_size "$LIMIT" "$_T/exact.json" "exact$SFX"
api POST /api/v3/user/repos "@$_T/exact.json" "$UT"
expect_status 201 "a body of exactly $LIMIT bytes is accepted"
api GET /api/v3/user "" "$UT"
expect_status 200 'the service answers after the big bodies'

# --- headers and request lines over nginx's buffers (16 KiB each, 64 KiB in all): JSON -----
A8K=$(head -c 8192 /dev/zero | tr '\0' a)
A20K=$(head -c 20000 /dev/zero | tr '\0' a)
API_HEADERS=("X-Pad: $A8K")
api GET /api/v3/user "" "$UT"
expect_status 200 'a header of 8 KiB (a git URL JWT fits): 200'
API_HEADERS=("X-Pad: $A20K")
api GET /api/v3/user "" "$UT"
expect_error 431 'a request header is longer than 16384 bytes, or all of them together longer than 65536' \
	'a header of 20,000 bytes: 431 in JSON, not nginx HTML'
json_ct '431'
request_id_ok '431'
API_HEADERS=("X-A: ${A20K:0:15000}" "X-B: ${A20K:0:15000}" "X-C: ${A20K:0:15000}" "X-D: ${A20K:0:15000}" "X-E: ${A20K:0:15000}")
api GET /api/v3/user "" "$UT"
expect_error 431 'a request header is longer than 16384 bytes, or all of them together longer than 65536' \
	'five headers of 15,000 bytes: 431 in JSON'
API_HEADERS=()
api GET "/api/v3/user?pad=$A20K" "" "$UT"
expect_error 414 'the request line is longer than 16384 bytes' 'a request line of 20 KB: 414 in JSON'
json_ct '414'
api GET "/api/v3/user?pad=${A8K:0:4096}" "" "$UT"
expect_status 200 'a request line of 4 KiB: 200'

# --- X-Request-Id: present and unique -------------------------------------------------------------
api GET /api/v3/user "" "$UT"
request_id_ok '200'
api GET /api/v3/user "" -
request_id_ok '401'
uniq=$(printf '%s\n' "${IDS[@]}" | sort -u | wc -l)
check_eq 'request ids are unique per request' "${#IDS[@]}" "$uniq"

# --- /healthz ------------------------------------------------------------------------------------
api GET /healthz "" -
expect_status 200 'GET /healthz without a token: 200'
# sandbox_user: root on an engine that remaps it, else the fallback (t_root_inside checks both);
# isolation: no engine of this stack has a gVisor runtime (t_gvisor checks one that has)
if [[ $BOX_UID == 0 ]]; then BOX_MODE=userns; else BOX_MODE=fallback; fi
expect_body "{\"status\":\"ok\",\"database\":\"ok\",\"docker\":\"ok\",\"git_endpoint\":\"ok\",\"sandbox_user\":{\"mode\":\"$BOX_MODE\",\"uid\":$BOX_UID},\"isolation\":{\"gvisor\":[]}}" 'GET /healthz body'
request_id_ok 'healthz'
json_ct 'healthz'
api GET /healthz "" "$UT"
expect_status 200 'GET /healthz with a token: 200'

# --- /api/v3/openapi.json -------------------------------------------------------------------
# The OpenAPI document, public as /healthz is: the build's docs/openapi.yaml as JSON.
OAS=/api/v3/openapi.json
api GET "$OAS" "" -
expect_status 200 "GET $OAS without a token: 200"
json_ct 'openapi.json'
request_id_ok 'openapi.json'
expect_json .openapi 3.1.0 'openapi.json: .openapi is 3.1.0'
expect_json '.paths["/api/v3/repos/{owner}/{repo}/diffinery/sandboxes"].post.operationId' \
	sandbox.create 'openapi.json names the sandbox create path'
expect_json '.paths["/api/v3/openapi.json"].get.operationId' openapi.get 'openapi.json names itself'
want=$(/usr/bin/python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))' \
	"$ROOT/docs/openapi.yaml" | jq -S -c .)
check_eq 'openapi.json is docs/openapi.yaml, whole' "$want" "$(jq -S -c . <<<"$BODY")"
expect_header Cache-Control no-store 'openapi.json: Cache-Control no-store, as every answer'
if ETAG=$(header ETag) && [[ $ETAG =~ ^\"[0-9a-f]{32}\"$ ]]; then
	ok 'openapi.json: a strong ETag'
else
	fail 'openapi.json: a strong ETag' "ETag: ${ETAG:-none}"
fi
API_HEADERS=("If-None-Match: $ETAG")
api GET "$OAS" "" -
expect_status 304 'openapi.json with If-None-Match of its ETag: 304'
expect_empty_body 'openapi.json 304: no body'
API_HEADERS=('If-None-Match: "0123456789abcdef0123456789abcdef"')
api GET "$OAS" "" -
expect_status 200 'openapi.json with If-None-Match of another ETag: 200'
expect_json .openapi 3.1.0 'openapi.json after another ETag: the document'
API_HEADERS=()
api GET "$OAS" "" "$UT"
expect_status 200 "GET $OAS with a token: 200"
api GET "$OAS" "" "dfy_not_a_real_token"
expect_error 401 'bad credentials' "GET $OAS with a bad token: 401 bad credentials"
api POST "$OAS" '{}' "$UT"
expect_error 405 'method not allowed' "POST $OAS: 405"
allow_is GET "POST $OAS"

finish
