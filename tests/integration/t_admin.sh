#!/usr/bin/env bash
# t_admin.sh: POST /api/v3/admin/accounts, PATCH /api/v3/admin/accounts/{login},
# POST /api/v3/admin/accounts/{login}/tokens (site admins only).
. "$(dirname "$0")/lib.sh"

ACCOUNT_KEYS='login,kind,site_admin,disabled,name,email,created_at'
NEEDS_SITE_ADMIN='this needs a site admin'

# --- create ----------------------------------------------------------------------
A="adm$SFX"
api POST /api/v3/admin/accounts "{\"login\":\"$A\"}"
expect_status 201 'POST /admin/accounts {login}: 201'
expect_keys . "$ACCOUNT_KEYS" 'account shape {login, kind, site_admin, disabled, name, email, created_at}'
expect_json .login "$A" 'login as given'
expect_json .kind user 'kind defaults to user'
expect_json .site_admin false 'site_admin defaults to false'
expect_json .disabled false 'a new account is enabled'
expect_json_match .created_at "$RFC3339_UTC" 'created_at is RFC 3339 UTC'

G="agent$SFX"
api POST /api/v3/admin/accounts "{\"login\":\"$G\",\"kind\":\"agent\",\"name\":\"Build Bot\",\"email\":\"bot$SFX@example.com\",\"extra\":1}"
expect_status 201 'POST /admin/accounts {kind: agent, name, email}: 201'
expect_json .kind agent 'kind agent as asked'
expect_json .name 'Build Bot' 'name as given'
expect_json .email "bot$SFX@example.com" 'email as given'

S="siteadm$SFX"
api POST /api/v3/admin/accounts "{\"login\":\"$S\",\"site_admin\":true}"
expect_status 201 'POST /admin/accounts {site_admin: true}: 201'
expect_json .site_admin true 'site_admin as asked'

api POST /api/v3/admin/accounts "{\"login\":\"$A\",\"kind\":\"agent\"}"
expect_error 409 "account '$A' already exists" 'duplicate login: 409'
api POST /api/v3/admin/accounts "{\"login\":\"${A^^}\"}"
expect_error 409 "account '${A^^}' already exists" 'the same login in other case: 409'
api POST /api/v3/admin/accounts '{"login":"admin"}'
expect_error 409 "account 'admin' already exists" 'duplicate of the admin login: 409'

# --- validation --------------------------------------------------------------------
bad_login() {
	api POST /api/v3/admin/accounts "{\"login\":$1}"
	expect_names_field 400 login "login $2: 400 naming 'login'"
}
bad_login '".."' '..'
bad_login '"a/b"' 'a/b'
bad_login '"has space"' 'has space'
bad_login '""' '(empty)'
bad_login '"semi;colon"' 'semi;colon'
bad_login "\"$(printf 'l%.0s' {1..200})\"" '200 characters long'
api POST /api/v3/admin/accounts '{}'
expect_error 400 "field 'login' is required" 'missing login: 400'
api POST /api/v3/admin/accounts '{"login":42}'
expect_error 400 "field 'login' must be a string" 'login of the wrong type: 400'
api POST /api/v3/admin/accounts "{\"login\":\"k$SFX\",\"kind\":\"robot\"}"
expect_names_field 400 kind 'kind robot: 400 naming kind'
api POST /api/v3/admin/accounts "{\"login\":\"k$SFX\",\"site_admin\":\"yes\"}"
expect_error 400 "field 'site_admin' must be a boolean" 'site_admin of the wrong type: 400'
api POST /api/v3/admin/accounts "{\"login\":\"k$SFX\",\"name\":[]}"
expect_error 400 "field 'name' must be a string" 'name of the wrong type: 400'
api POST /api/v3/admin/accounts "{\"login\":\"k$SFX\",\"email\":{}}"
expect_error 400 "field 'email' must be a string" 'email of the wrong type: 400'
check_eq 'refused creates made no account' 0 "$(sql "select count(*) from accounts where login = 'k$SFX'")"

# --- tokens for an account -------------------------------------------------------------
api POST "/api/v3/admin/accounts/$A/tokens" '{"scope":"write"}'
expect_status 201 'POST /admin/accounts/{login}/tokens: 201'
expect_keys . 'id,token,scope,expires_at' 'token shape {id, token, scope, expires_at}'
expect_json_match .token '^dfy_[0-9A-Za-z]{42}$' 'a personal dfy_ token'
AT=$(_json .token)
api GET /api/v3/user "" "$AT"
expect_status 200 'the minted token works'
expect_json .login "$A" 'the minted token acts as that account'
api POST "/api/v3/admin/accounts/$A/tokens" '{"scope":"read","expires_in":120}'
expect_status 201 'admin token with expires_in 120: 201'
ART=$(_json .token)
exp=$(epoch "$(_json .expires_at)")
now=$(date -u +%s)
check_cond 'expires_in 120 honoured' "[[ -n '$exp' ]] && (( $exp - $now >= 0 && $exp - $now <= 240 ))"
api POST "/api/v3/admin/accounts/nosuch$SFX/tokens" '{"scope":"read"}'
expect_error 404 "account 'nosuch$SFX' not found" 'token for an unknown account: 404'
api POST "/api/v3/admin/accounts/$A/tokens" '{}'
expect_error 400 "field 'scope' is required" 'admin token without scope: 400'
api POST "/api/v3/admin/accounts/$A/tokens" '{"scope":"root"}'
expect_names_field 400 scope 'admin token scope root: 400 naming scope'

# --- only site admins ---------------------------------------------------------------------
api POST /api/v3/admin/accounts "{\"login\":\"x$SFX\"}" "$AT"
expect_error 403 "$NEEDS_SITE_ADMIN" 'a plain account: POST /admin/accounts 403'
api PATCH "/api/v3/admin/accounts/$A" '{"site_admin":true}' "$AT"
expect_error 403 "$NEEDS_SITE_ADMIN" 'a plain account cannot make itself a site admin'
api POST "/api/v3/admin/accounts/$A/tokens" '{"scope":"write"}' "$AT"
expect_error 403 "$NEEDS_SITE_ADMIN" 'a plain account: POST /admin/accounts/{login}/tokens 403'
api POST /api/v3/admin/accounts "{\"login\":\"x$SFX\"}" -
expect_error 401 'authentication required' 'no token: POST /admin/accounts 401'
ADMIN_READ=$(mk_token admin read)
api POST /api/v3/admin/accounts "{\"login\":\"x$SFX\"}" "$ADMIN_READ"
expect_error 403 'this needs a token with write scope' "a site admin's read token: POST /admin/accounts 403"
check_eq 'refused creates made no account x…' 0 "$(sql "select count(*) from accounts where login = 'x$SFX'")"

# --- PATCH: disable / enable, at once -----------------------------------------------------
api PATCH "/api/v3/admin/accounts/$A" '{"disabled":true}'
expect_status 200 'PATCH {disabled: true}: 200'
expect_keys . "$ACCOUNT_KEYS" 'PATCH returns the account shape'
expect_json .disabled true 'disabled is true'
api GET /api/v3/user "" "$AT"
expect_error 401 'bad credentials' 'disabled: its write token is refused at once'
api GET /api/v3/user "" "$ART"
expect_error 401 'bad credentials' 'disabled: its read token is refused at once'
api PATCH "/api/v3/admin/accounts/$A" '{"disabled":false}'
expect_status 200 'PATCH {disabled: false}: 200'
expect_json .disabled false 'disabled is false'
api GET /api/v3/user "" "$AT"
expect_status 200 'enabled again: its token works at once'

# --- PATCH: site_admin, at once -------------------------------------------------------------
api PATCH "/api/v3/admin/accounts/$A" '{"site_admin":true}'
expect_status 200 'PATCH {site_admin: true}: 200'
expect_json .site_admin true 'site_admin is true'
api POST /api/v3/admin/accounts "{\"login\":\"made$SFX\"}" "$AT"
expect_status 201 'new site admin: POST /admin/accounts works at once'
api PATCH "/api/v3/admin/accounts/$A" '{"site_admin":false}'
expect_json .site_admin false 'site_admin is false again'
api POST /api/v3/admin/accounts "{\"login\":\"made2$SFX\"}" "$AT"
expect_error 403 "$NEEDS_SITE_ADMIN" 'site admin removed: refused at once'

# --- PATCH errors ---------------------------------------------------------------------------
api PATCH "/api/v3/admin/accounts/nosuch$SFX" '{"disabled":true}'
expect_error 404 "account 'nosuch$SFX' not found" 'PATCH an unknown account: 404'
api PATCH "/api/v3/admin/accounts/$A" '{"disabled":"true"}'
expect_error 400 "field 'disabled' must be a boolean" 'disabled of the wrong type: 400'
api PATCH "/api/v3/admin/accounts/$A" '{"site_admin":1}'
expect_error 400 "field 'site_admin' must be a boolean" 'site_admin of the wrong type: 400'
api PATCH "/api/v3/admin/accounts/$A" '{}'
expect_status 200 'PATCH {} changes nothing: 200'
expect_json .disabled false 'PATCH {} left disabled false'

# an agent account's token works like any other for REST reads
api POST "/api/v3/admin/accounts/$G/tokens" '{"scope":"read"}'
GT=$(_json .token)
api GET /api/v3/user "" "$GT"
expect_json .kind agent 'an agent token: GET /user shows kind agent'

finish
