#!/usr/bin/env bash
# t_user_tokens.sh: POST /api/v3/user/tokens and DELETE /api/v3/user/tokens/{id};
# read-scoped tokens refused on writes.
. "$(dirname "$0")/lib.sh"

TOKEN_KEYS='id,token,scope,expires_at'
now=$(date -u +%s)

U="tok$SFX"
mk_user "$U" || exit 1
W=$LAST_TOKEN
O="tokother$SFX"
mk_user "$O" || exit 1
OTHER=$LAST_TOKEN

# --- create ------------------------------------------------------------------
api POST /api/v3/user/tokens '{"scope":"read","note":"ci reader"}' "$W"
expect_status 201 'POST /user/tokens {scope: read}: 201'
expect_keys . "$TOKEN_KEYS" 'token shape {id, token, scope, expires_at}'
expect_schema token.create 201
expect_json '.id | type' string 'id is a string'
expect_json_match .id '^[0-9]+$' 'id is a string of digits'
expect_json_match .token '^dfy_[0-9A-Za-z]{42}$' 'token is dfy_ + 36 + 6 base62 chars'
expect_json .scope read 'scope is read'
expect_json_match .expires_at "$RFC3339_UTC" 'expires_at is RFC 3339 UTC'
R=$(_json .token)
R_ID=$(_json .id)
exp=$(epoch "$(_json .expires_at)")
check_cond 'default expiry is 90 days (7776000 s)' "[[ -n '$exp' ]] && (( $exp - $now >= 7776000 - 120 && $exp - $now <= 7776000 + 120 ))"

api GET /api/v3/user "" "$R"
expect_status 200 'the new read token works at once'
expect_json .login "$U" 'the new token acts as its creator'

api POST /api/v3/user/tokens '{"scope":"write","expires_in":3600}' "$W"
expect_status 201 'POST /user/tokens {scope: write, expires_in: 3600}: 201'
expect_json .scope write 'scope is write'
W2=$(_json .token)
W2_ID=$(_json .id)
exp=$(epoch "$(_json .expires_at)")
check_cond 'expires_in 3600 gives an expiry one hour ahead' "[[ -n '$exp' ]] && (( $exp - $now >= 3600 - 120 && $exp - $now <= 3600 + 120 ))"
check_cond 'each token gets its own id' "[[ '$W2_ID' != '$R_ID' ]]"

api POST /api/v3/user/tokens '{"scope":"write","expires_in":60}' "$W"
expect_status 201 'expires_in 60 (the minimum) is accepted'
api POST /api/v3/user/tokens '{"scope":"read","expires_in":31536000}' "$W"
expect_status 201 'expires_in 31536000 (the maximum) is accepted'

api POST /api/v3/user/tokens '{"scope":"read","unknown_field":[1,2,3]}' "$W"
expect_status 201 'unknown fields are ignored'

# --- validation --------------------------------------------------------------
api POST /api/v3/user/tokens '{}' "$W"
expect_error 400 "field 'scope' is required" 'missing scope: 400'
api POST /api/v3/user/tokens '{"scope":1}' "$W"
expect_error 400 "field 'scope' must be a string" 'scope of the wrong type: 400'
api POST /api/v3/user/tokens '{"scope":"admin"}' "$W"
expect_names_field 400 scope 'scope admin: 400 naming scope'
api POST /api/v3/user/tokens '{"scope":"read","expires_in":59}' "$W"
expect_names_field 400 expires_in 'expires_in 59: 400 naming expires_in'
api POST /api/v3/user/tokens '{"scope":"read","expires_in":31536001}' "$W"
expect_names_field 400 expires_in 'expires_in 31536001: 400 naming expires_in'
api POST /api/v3/user/tokens '{"scope":"read","expires_in":"3600"}' "$W"
expect_error 400 "field 'expires_in' must be an integer" 'expires_in as a string: 400'
api POST /api/v3/user/tokens '{"scope":"read","expires_in":3600.5}' "$W"
expect_names_field 400 expires_in 'expires_in 3600.5: 400 naming expires_in'
api POST /api/v3/user/tokens '{"scope":"read","note":7}' "$W"
expect_error 400 "field 'note' must be a string" 'note of the wrong type: 400'

# --- read scope: reads only ----------------------------------------------------
api POST /api/v3/user/tokens '{"scope":"read"}' "$R"
expect_error 403 'this needs a token with write scope' 'read token cannot create tokens'
api POST /api/v3/user/repos "{\"name\":\"ro$SFX\"}" "$R"
expect_error 403 'this needs a token with write scope' 'read token cannot create a repository'
check 'refused repository create left nothing on disk' test ! -e "$REPOS_DIR/$U/ro$SFX.git"
# revoking is for "the token's account" (SPEC.md §4), whatever the scope
api POST /api/v3/user/tokens '{"scope":"read"}' "$W"
V_ID=$(_json .id)
V=$(_json .token)
api DELETE "/api/v3/user/tokens/$V_ID" "" "$R"
expect_error 403 'this needs a token with write scope' 'a read token cannot revoke a token (issue 11, item 13): 403'
api GET /api/v3/user "" "$V"
expect_status 200 'the token a read token tried to revoke still works'
api DELETE "/api/v3/user/tokens/$V_ID" "" "$W"
expect_status 204 'a write token of the same account revokes it: 204'
api GET /api/v3/user "" "$V"
expect_error 401 'bad credentials' 'the revoked token is refused'

# --- revoke ------------------------------------------------------------------
api DELETE "/api/v3/user/tokens/$W2_ID" "" "$OTHER"
expect_error 404 'token not found' "another account's token id: 404 token not found"
api GET /api/v3/user "" "$W2"
expect_status 200 "the token still works after another account's revoke attempt"

api DELETE "/api/v3/user/tokens/$W2_ID" "" "$W"
expect_status 204 'DELETE /user/tokens/{id}: 204'
expect_empty_body 'revoke answers with no body'
api GET /api/v3/user "" "$W2"
expect_error 401 'bad credentials' 'revoked token: 401 at once'
api GET /api/v3/user "" "$W"
expect_status 200 'revoking one token leaves the others working'

api DELETE /api/v3/user/tokens/999999999 "" "$W"
expect_error 404 'token not found' 'unknown token id: 404 token not found'

# a token may revoke itself
api POST /api/v3/user/tokens '{"scope":"write"}' "$W"
SELF=$(_json .token)
SELF_ID=$(_json .id)
api DELETE "/api/v3/user/tokens/$SELF_ID" "" "$SELF"
expect_status 204 'a token revokes itself: 204'
api GET /api/v3/user "" "$SELF"
expect_status 401 'the self-revoked token is refused'

# --- what is stored -------------------------------------------------------------
row=$(sql "select t::text from tokens t where id = '$R_ID'")
check_cond 'the new token secret is not stored' "[[ -n \$row && \$row != *\"\${R:4:36}\"* ]]"
sha=$(printf '%s' "$R" | sha256sum | cut -d' ' -f1)
check 'its SHA-256 is stored' grep -qiF "$sha" <<<"$row"

finish
