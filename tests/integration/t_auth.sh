#!/usr/bin/env bash
# t_auth.sh: authentication (SPEC.md §2, CONTRACT.tmp.md): Bearer and Basic,
# every kind of bad credential, expiry, revocation, disabled accounts.
. "$(dirname "$0")/lib.sh"

WWW='Bearer realm="sandboxd"'
ACCOUNT_KEYS='login,kind,site_admin,disabled,name,email,created_at'

denied() { # the standard 401 for a bad credential
	expect_error 401 'bad credentials' "$1: 401 bad credentials"
	expect_header WWW-Authenticate "$WWW" "$1: WWW-Authenticate"
}

# --- the site admin from local.env -------------------------------------------
api GET /api/v3/user
expect_status 200 'GET /api/v3/user with the admin token: 200'
expect_keys . "$ACCOUNT_KEYS" 'account shape {login, kind, site_admin, disabled, name, email, created_at}'
expect_json .login admin 'login is admin'
expect_json .site_admin true 'admin is a site admin'
expect_json .kind user 'admin is a user account'
expect_json .disabled false 'admin is not disabled'
expect_json_match .created_at "$RFC3339_UTC" 'created_at is RFC 3339 UTC'
expect_header_match Content-Type '^application/json' 'Content-Type is application/json'

# --- a fresh account -----------------------------------------------------------
U="auth$SFX"
mk_user "$U" --name "Auth Tester" --email "auth$SFX@example.com" || exit 1
TOK=$LAST_TOKEN
TOK_ID=$LAST_TOKEN_ID
check "sandboxctl token is dfy_ + 36 base62 + 6 checksum chars" [ -n "$(grep -E '^dfy_[0-9A-Za-z]{42}$' <<<"$TOK")" ]
check "sandboxctl prints the token id on stderr" [ -n "$TOK_ID" ]

api GET /api/v3/user "" "$TOK"
expect_status 200 'a new account token: GET /api/v3/user 200'
expect_json .login "$U" 'the token acts as its account'
expect_json .name 'Auth Tester' 'name from sandboxctl --name'
expect_json .email "auth$SFX@example.com" 'email from sandboxctl --email'
expect_json .site_admin false 'a plain account is not a site admin'

# --- missing and malformed credentials -----------------------------------------
api GET /api/v3/user "" -
expect_error 401 'authentication required' 'no Authorization header: 401 authentication required'
expect_header WWW-Authenticate "$WWW" 'no Authorization header: WWW-Authenticate'

api GET /api/v3/user "" "raw:Bearer"
denied 'Bearer with no token'

api GET /api/v3/user "" garbage
denied 'garbage token'

api GET /api/v3/user "" "dfy_short"
denied 'dfy_ token of the wrong length'

# the last checksum character changed: the format is right, the checksum is not
last=${TOK: -1}
if [[ $last == a ]]; then repl=b; else repl=a; fi
api GET /api/v3/user "" "${TOK:0:${#TOK}-1}$repl"
denied 'wrong checksum'

# a body character changed (checksum no longer matches)
mid=${TOK:10:1}
if [[ $mid == Z ]]; then repl=Y; else repl=Z; fi
api GET /api/v3/user "" "${TOK:0:10}$repl${TOK:11}"
denied 'changed token body'

# the scheme is case-insensitive (RFC 9110 §11.1)
api GET /api/v3/user "" "raw:bearer $TOK"
expect_status 200 'scheme "bearer" in lower case: 200'
api GET /api/v3/user "" "raw:BASIC $(printf 'x:%s' "$TOK" | base64 -w0)"
expect_status 200 'scheme "BASIC" in upper case: 200'

api GET /api/v3/user "" "raw:Token $TOK"
denied 'unknown auth scheme (Token …)'

api GET /api/v3/user "" "raw:Bearer $TOK extra"
denied 'Bearer with trailing garbage'

# an unknown token: well formed with a valid checksum (minted by sandboxctl),
# but its stored hash no longer matches anything
ORPHAN=$(mk_token "$U" write)
ORPHAN_ID=$(last_token_id)
api GET /api/v3/user "" "$ORPHAN"
expect_status 200 'the token to orphan works before its hash is changed'
hashcol=$(sql "select column_name || ' ' || data_type from information_schema.columns
  where table_schema = current_schema() and table_name = 'tokens' and column_name like '%hash%' order by ordinal_position limit 1")
if [[ -z $hashcol ]]; then
	fail 'unknown token' 'no *hash* column in table tokens to alter'
else
	col=${hashcol%% *} type=${hashcol#* }
	if [[ $type == bytea ]]; then
		val="sha256(convert_to('orphaned-$SFX', 'UTF8'))"
	else
		val="encode(sha256(convert_to('orphaned-$SFX', 'UTF8')), 'hex')"
	fi
	sql "update tokens set $col = $val where id = '$ORPHAN_ID'" >/dev/null
	api GET /api/v3/user "" "$ORPHAN"
	denied 'unknown token (valid checksum, no stored hash)'
fi

# --- Basic auth: the password is the token, the user name is ignored ------------
api GET /api/v3/user "" "$(basic "$TOK" anything)"
expect_status 200 'Basic auth with the token as password: 200'
expect_json .login "$U" 'Basic auth acts as the token account'
api GET /api/v3/user "" "$(basic "$TOK" "")"
expect_status 200 'Basic auth with an empty user name: 200'
api GET /api/v3/user "" "$(basic wrong-password "$U")"
denied 'Basic auth with a wrong password'
api GET /api/v3/user "" "raw:Basic !!!notbase64"
denied 'Basic auth that is not base64'

# --- expiry ---------------------------------------------------------------------
EXP=$(mk_token "$U" write --expires-in 60)
EXP_ID=$(last_token_id)
api GET /api/v3/user "" "$EXP"
expect_status 200 'a token with --expires-in 60 works'
got=$(sql "select extract(epoch from expires_at - now())::int from tokens where id = '$EXP_ID'")
check_cond "--expires-in 60 stores an expiry about 60 s ahead (got ${got}s)" '[[ $got =~ ^[0-9]+$ ]] && ((got >= 50 && got <= 61))'
sql "update tokens set expires_at = now() - interval '1 second' where id = '$EXP_ID'" >/dev/null
api GET /api/v3/user "" "$EXP"
denied 'expired token'
api GET /api/v3/user "" "$(basic "$EXP")"
denied 'expired token over Basic auth'

# --- revocation -------------------------------------------------------------------
REV=$(mk_token "$U" read)
REV_ID=$(last_token_id)
api GET /api/v3/user "" "$REV"
expect_status 200 'a token works before sandboxctl token revoke'
ctl token revoke "$REV_ID"
check_eq 'sandboxctl token revoke exits 0' 0 "$CTL_RC"
api GET /api/v3/user "" "$REV"
denied 'revoked token (sandboxctl token revoke)'

# --- disabled account: refused at once, every token; enabled again: works at once --
TOK2=$(mk_token "$U" read)
ctl account disable "$U"
check_eq 'sandboxctl account disable exits 0' 0 "$CTL_RC"
api GET /api/v3/user "" "$TOK"
denied 'disabled account, write token'
api GET /api/v3/user "" "$TOK2"
denied 'disabled account, read token'
api GET /api/v3/user "" "$(basic "$TOK")"
denied 'disabled account over Basic auth'
ctl account enable "$U"
check_eq 'sandboxctl account enable exits 0' 0 "$CTL_RC"
api GET /api/v3/user "" "$TOK"
expect_status 200 're-enabled account: its token works again at once'
expect_json .disabled false 're-enabled account shows disabled false'

# --- the token's secret is not stored, its SHA-256 is -----------------------------
raw=$(sql "select t::text from tokens t where id = '$TOK_ID'")
check_cond 'the token secret is not stored in the tokens row' '[[ -n $raw && $raw != *"${TOK:4:36}"* ]]'
sha=$(printf '%s' "$TOK" | sha256sum | cut -d' ' -f1)
check 'the tokens row holds the SHA-256 of the token' grep -qiF "$sha" <<<"$raw"

finish
