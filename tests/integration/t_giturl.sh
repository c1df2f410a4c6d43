#!/usr/bin/env bash
# t_giturl.sh: git URLs with short-lived JWTs: minting, the session-branch workflow of a
# sandbox provider, the ephemeral namespace, owner-signed URLs from sandboxctl, and every
# way a token must be refused (401), through the real git client, nginx and sandboxd.
. "$(dirname "$0")/lib.sh"

export GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=/bin/false
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
HOSTPORT=${SANDBOXD_URL#http://}
W=$_T/work
mkdir -p "$W"
fails() { ! "$@"; }
# refused TEXT CMD…: CMD fails and says TEXT on stderr (any failure is not enough: a push that
# fails for another reason, a typo or a dead server, must not pass for a refusal).
refused() {
	local want=$1 err
	shift
	if err=$("$@" 2>&1 >/dev/null); then
		printf '       it succeeded\n'
		return 1
	fi
	[[ $err == *"$want"* ]] && return 0
	printf '       it failed, but said: %s\n' "$(head -c 400 <<<"$err")"
	return 1
}
g() { git -C "$W/$1" "${@:2}"; }
bare_ref() { git --git-dir "$REPOS_DIR/$1.git" rev-parse -q --verify "$2" 2>/dev/null; }
mint() { # REPO BODY [TOKEN]: sets URL (and STATUS/BODY)
	api POST "/api/v3/repos/$1/git-urls" "$2" "${3:-$OT}"
	URL=$(_json .url)
}
tok_of() { local t=${1#*x-token:}; printf '%s' "${t%@*}"; }
refs_status() { # TOKEN REPO [SERVICE]: the HTTP status of info/refs with the token as password
	curl -s -o /dev/null -w '%{http_code}' -u "x:$1" \
		"$SANDBOXD_URL/$2.git/info/refs?service=${3:-git-upload-pack}"
}
b64url() { base64 -w0 | tr '+/' '-_' | tr -d '='; }
# denied NAME TOKEN REASON [REPO]: info/refs with the token answers 401 'bad credentials'
# with git's Basic challenge, and its audit row (auth.denied) says REASON: refused for that
# reason, not any 401 (as t_jwt_examples.sh's denied).
denied() {
	# (2>/dev/null: bash's notice about NUL bytes, were it a pkt-line answer)
	api GET "/${4:-$R}.git/info/refs?service=git-upload-pack" '' "$(basic "$2")" 2>/dev/null
	expect_error 401 'bad credentials' "$1: 401 'bad credentials'"
	expect_header WWW-Authenticate 'Basic realm="sandboxd"' "$1: with the Basic challenge"
	check_eq "$1: audited as auth.denied, '$3'" "$3" \
		"$(sql "select details->>'reason' from audit_log where request_id = '$REQ_ID' and action = 'auth.denied'")"
}
# es256 KEY: signs stdin; prints the JOSE signature (raw R||S, base64url).
es256() {
	openssl dgst -sha256 -sign "$1" -binary >"$_T/sig.der"
	local hex='' h
	for h in $(openssl asn1parse -inform DER -in "$_T/sig.der" | awk -F: '/INTEGER/ {print $NF}'); do
		h=$(sed 's/^0*//' <<<"$h")
		hex+=$(printf '%64s' "$h" | tr ' ' 0)
	done
	printf "$(sed 's/../\\x&/g' <<<"$hex")" | b64url
}
craft() { # KEY HEADER_JSON PAYLOAD_JSON: a token signed with ES256 over whatever is given
	local hp
	hp="$(printf '%s' "$2" | b64url).$(printf '%s' "$3" | b64url)"
	printf '%s.%s' "$hp" "$(printf '%s' "$hp" | es256 "$1")"
}

O="gu$SFX"
mk_user "$O" || exit 1
OT=$LAST_TOKEN
api POST /api/v3/user/repos '{"name":"site","visibility":"private"}' "$OT"
api POST /api/v3/user/repos '{"name":"other","visibility":"private"}' "$OT"
R="$O/site"
git init -q -b main "$W/seed"
echo base >"$W/seed/f" && g seed add f && g seed commit -qm base
g seed push -q "http://t:$OT@$HOSTPORT/$R.git" main
g seed push -q "http://t:$OT@$HOSTPORT/$O/other.git" main
BASE=$(g seed rev-parse HEAD)

# --- minting -----------------------------------------------------------------------
mint "$R" '{"scopes":["git:read"]}'
expect_status 201 'POST git-urls: 201'
expect_keys . 'expires_at,url' '{url, expires_at}'
expect_schema git_url.create 201
expect_json_match .url "^http://x-token:[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+@$HOSTPORT/$R\\.git\$" 'the url carries the JWT as Basic password'
EXP=$(epoch "$(_json .expires_at)")
LEFT=$((EXP - $(date +%s)))
check "ttl defaults to 900 s ($LEFT s left)" [ "$LEFT" -ge 890 -a "$LEFT" -le 905 ]
READ_URL=$URL
mint "$R" '{"scopes":["git:read"],"ttl":3601}'
expect_error 400 "field 'ttl' must be an integer between 1 and 3600" 'ttl over an hour: 400'
mint "$R" '{"scopes":["git:admin"]}'
expect_status 400 'an unknown scope: 400'
mint "$R" '{"scopes":["git:read"],"kind":"odd"}'
expect_error 400 "field 'kind' must be 'normal' or 'ephemeral'" 'an unknown kind: 400'
mint "$R" '{"scopes":["git:write"],"ref_policies":[{"pattern":"*","ops":["no-pull"]}]}'
expect_error 400 "ref_policies[0].ops[0] must be 'no-push' or 'no-force-push'" 'a bad ref policy: 400 naming it'
RO="guro$SFX"
mk_user "$RO" || exit 1
ROT=$LAST_TOKEN
api PUT "/api/v3/repos/$R/collaborators/$RO" '{"role":"read"}' "$OT"
mint "$R" '{"scopes":["git:write"]}' "$ROT"
expect_error 403 "this needs the write role on $R" 'asking for more than the caller holds: 403 naming the role it needs'
expect_schema git_url.create 403
mint "$R" '{"scopes":["git:read"]}' "$ROT"
expect_status 201 'a reader may mint a read URL'
RO_URL=$URL

# --- the session-branch workflow of a sandbox provider --------------------------------
S="session-$SFX"
mint "$R" '{"scopes":["git:read"]}'
RURL=$URL
mint "$R" "{\"scopes\":[\"git:write\"],\"kind\":\"ephemeral\",\"ref_policies\":[{\"pattern\":\"refs/namespaces/ephemeral/refs/heads/$S\",\"ops\":[\"no-force-push\"]},{\"pattern\":\"*\",\"ops\":[\"no-push\"]}]}"
WURL=$URL
check 'clone --depth 1 --single-branch --no-checkout with the read URL' git clone -q --depth 1 --single-branch --no-checkout "$RURL" "$W/work"
check 'fetch the base commit by SHA' g work fetch -q origin "$BASE"
g work remote set-url --push origin "$WURL"
check 'switch to the session branch at the base' g work switch -q -c "$S" "$BASE"
echo change >"$W/work/g" && g work add g && g work commit -qm change
check 'git push origin S' g work push -q origin "$S"
check_eq "it lands at refs/namespaces/ephemeral/refs/heads/$S" "$(g work rev-parse HEAD)" "$(bare_ref "$R" "refs/namespaces/ephemeral/refs/heads/$S")"
check_eq 'no normal branch of that name' '' "$(bare_ref "$R" "refs/heads/$S")"
check 'a stray git push origin main is refused by the catch-all policy' \
	refused "refs/namespaces/ephemeral/refs/heads/main: push refused by ref policy '*' (no-push)" \
	g work push -q origin "HEAD:main"
check_eq 'main is unchanged' "$BASE" "$(bare_ref "$R" refs/heads/main)"
SESSION_TIP=$(g work rev-parse HEAD)
g work reset -q --hard "$BASE"
echo other >"$W/work/h" && g work add h && g work commit -qm other
check 'a force push to S is refused by its no-force-push policy' \
	refused "refs/namespaces/ephemeral/refs/heads/$S: push refused by ref policy 'refs/namespaces/ephemeral/refs/heads/$S' (no-force-push: not a fast-forward)" \
	g work push -q -f origin "$S"
check_eq 'S is unchanged' "$SESSION_TIP" "$(bare_ref "$R" "refs/namespaces/ephemeral/refs/heads/$S")"
g work reset -q --hard "$SESSION_TIP"
echo more >"$W/work/i" && g work add i && g work commit -qm more
check 'a fast-forward push to S is accepted' g work push -q origin "$S"
check_eq 'and lands' "$(g work rev-parse HEAD)" "$(bare_ref "$R" "refs/namespaces/ephemeral/refs/heads/$S")"
LS=$(git ls-remote "http://t:$OT@$HOSTPORT/$R.git") && LS_RC=0 || LS_RC=$?
check_eq 'a normal ls-remote works' "0 $BASE" "$LS_RC $(awk '$2 == "refs/heads/main" {print $1}' <<<"$LS")"
check 'and does not see the ephemeral namespace' fails grep -q namespaces <<<"$LS"
check 'the read URL reads' git ls-remote -q "$RURL"
check 'the read URL cannot push: 403' refused 'The requested URL returned error: 403' \
	git -C "$W/work" push -q "$RURL" "HEAD:refs/heads/x"
check_eq 'and nothing landed' '' "$(bare_ref "$R" refs/heads/x)"
check_eq 'the ephemeral push is audited with its kind' t "$(sql "select count(*) > 0 from audit_log where action = 'git.push.ref' and repository = '$R' and details->>'kind' = 'ephemeral' and details->>'result' = 'accepted'")"

# --- refusals: 401 for every token that does not verify --------------------------------
RT=$(tok_of "$READ_URL")
check_eq 'a valid read token: 200' 200 "$(refs_status "$RT" "$R")"
denied 'the token on another repository' "$RT" 'git URL token for another repository' "$O/other"
# One character of the signature changed: its first (6 bits of R), so that the text stays
# base64url without padding (the last one carries padding bits that must be zero).
SIG1=${RT##*.}
denied 'a tampered signature' "${RT%.*}.$([ "${SIG1:0:1}" = A ] && echo B || echo A)${SIG1:1}" 'git URL token: signature does not verify'
IFS=. read -r H P SIG <<<"$RT"
PAY=$(printf '%s' "$P" | tr -- '-_' '+/' | { s=$(cat); while [ $(( ${#s} % 4 )) -ne 0 ]; do s+='='; done; printf '%s' "$s"; } | base64 -d)
EVIL=$(jq -c '.repo = "'"$O/other"'"' <<<"$PAY" | b64url)
denied 'a tampered payload' "$H.$EVIL.$SIG" 'git URL token: signature does not verify' "$O/other"
NONE_H=$(printf '{"alg":"none","typ":"JWT","kid":"%s"}' "$(jq -r .kid <<<"$(printf '%s' "$H" | tr -- '-_' '+/' | { s=$(cat); while [ $(( ${#s} % 4 )) -ne 0 ]; do s+='='; done; printf '%s' "$s"; } | base64 -d)")" | b64url)
denied 'alg none (empty signature)' "$NONE_H.$P." 'not a token (bad format or checksum)'
denied 'alg none (any signature)' "$NONE_H.$P.$SIG" 'malformed git URL token'
denied 'garbage' "a.b.c" 'malformed git URL token'
# 5000 bytes: past our limit, below nginx's 8 KiB header buffers (which answer 400 first).
denied 'an oversized token' "$(head -c 5000 /dev/zero | tr '\0' a).b.c" 'malformed git URL token'

# Owner-signed tokens, made by sandboxctl as an SDK would and by hand for the odd ones.
KEY=$_T/owner.pem
check 'sandboxctl key generate' "$SANDBOXCTL" key generate --out "$KEY" >"$_T/owner.pub" 2>/dev/null
check_eq 'the private key file is 0600' 600 "$(stat -c %a "$KEY")"
PROOF=$("$SANDBOXCTL" key proof --key "$KEY" --login "$O")
check 'sandboxctl key proof' test -n "$PROOF"
api POST /api/v3/user/keys "$(jq -n --rawfile k "$_T/owner.pub" '{public_key: $k}')" "$OT"
expect_error 400 "field 'proof' is required" 'POST /user/keys without a proof: 400'
api POST /api/v3/user/keys "$(jq -n --rawfile k "$_T/owner.pub" --arg p "$PROOF" '{public_key: $k, proof: $p}')" "$OT"
expect_status 201 'POST /user/keys with its proof: 201'
expect_schema key.create 201
KID=$(_json .kid)
api POST /api/v3/user/keys "$(jq -n --rawfile k "$_T/owner.pub" --arg p "$PROOF" '{public_key: $k, proof: $p}')" "$OT"
expect_error 409 "key $KID is already registered" 'the same key twice: 409'
api POST /api/v3/user/keys "$(jq -n --arg p "$PROOF" '{public_key: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", proof: $p}')" "$OT"
expect_names_field 400 public_key 'a key that is not P-256 PEM: 400'
OURL=$("$SANDBOXCTL" git-url --key "$KEY" --repo "$R" --scope git:read --scope git:write --ttl 600 --url "$SANDBOXD_URL")
check 'an owner-signed URL clones' git clone -q "$OURL" "$W/owner"
check 'and pushes' g owner push -q origin "HEAD:refs/heads/by-owner-key"
OT2=$(tok_of "$("$SANDBOXCTL" git-url --key "$KEY" --repo "$R" --url "$SANDBOXD_URL" --issued-at $(($(date +%s) - 1000)) --ttl 900)")
denied 'expired (beyond the 60 s skew)' "$OT2" 'git URL token: token expired'
OT3=$(tok_of "$("$SANDBOXCTL" git-url --key "$KEY" --repo "$R" --url "$SANDBOXD_URL" --issued-at $(($(date +%s) - 930)) --ttl 900)")
check_eq 'expired but within the skew: 200' 200 "$(refs_status "$OT3" "$R")"
NOW=$(date +%s)
CL="{\"iss\":\"$O\",\"aud\":\"sandboxd\",\"repo\":\"$R\",\"scopes\":[\"git:read\"],\"iat\":$NOW"
HDR="{\"alg\":\"ES256\",\"typ\":\"JWT\",\"kid\":\"$KID\"}"
check_eq 'a hand-made token that verifies: 200 (the crafting is right)' 200 "$(refs_status "$(craft "$KEY" "$HDR" "$CL,\"exp\":$((NOW + 600))}")" "$R")"
denied 'ttl over an hour' "$(craft "$KEY" "$HDR" "$CL,\"exp\":$((NOW + 3700))}")" 'git URL token: ttl over 3600 s'
denied 'no exp' "$(craft "$KEY" "$HDR" "$CL}")" "git URL token: claim 'exp' is required"
denied 'another audience' "$(craft "$KEY" "$HDR" "${CL/sandboxd/elsewhere},\"exp\":$((NOW + 600))}")" 'git URL token: token is for another audience'
HP="$(printf '%s' "$HDR" | b64url).$(printf '%s' "$CL,\"exp\":$((NOW + 600))}" | b64url)"
printf '%s' "$HP" | openssl dgst -sha256 -sign "$KEY" -binary >"$_T/der"
DER=$(b64url <"$_T/der")   # 70 to 72 bytes: DER's integers keep a leading zero byte or not
DER_LEN=$(stat -c %s "$_T/der")
denied 'a DER signature instead of raw R||S' "$HP.$DER" "git URL token: signature must be 64 bytes (R||S), not $DER_LEN"
HS_H=$(printf '{"alg":"HS256","typ":"JWT","kid":"%s"}' "$KID" | b64url)
HS_P=$(printf '%s' "$CL,\"exp\":$((NOW + 600))}" | b64url)
HS_S=$(printf '%s' "$HS_H.$HS_P" | openssl dgst -sha256 -hmac "$(cat "$_T/owner.pub")" -binary | b64url)
denied 'HS256 with the public key as secret' "$HS_H.$HS_P.$HS_S" 'malformed git URL token'
STR="strange$SFX"
mk_user "$STR" || exit 1
denied "an owner's key signing for someone else's repository" "$(craft "$KEY" "$HDR" "{\"iss\":\"$O\",\"aud\":\"sandboxd\",\"repo\":\"$STR/x\",\"scopes\":[\"git:read\"],\"iat\":$NOW,\"exp\":$((NOW + 600))}")" "git URL token: an owner's key signs only for its own repositories" "$STR/x"

# --- the account behind a URL ----------------------------------------------------------
ROT_TOK=$(tok_of "$RO_URL")
check_eq "a reader's URL works while the role lasts" 200 "$(refs_status "$ROT_TOK" "$R")"
api DELETE "/api/v3/repos/$R/collaborators/$RO" '' "$OT"
check_eq 'and stops when the role is gone' 404 "$(refs_status "$ROT_TOK" "$R")"
mint "$R" '{"scopes":["git:read"]}'
DT=$(tok_of "$URL")
ctl account disable "$O"
denied "a disabled account's URL" "$DT" 'account disabled'
ctl account enable "$O"
check_eq 'and works again once enabled' 200 "$(refs_status "$DT" "$R")"
check_eq 'denials say why in the audit log' t "$(sql "select count(*) > 0 from audit_log where action = 'auth.denied' and details->>'reason' like 'git URL token: %expired%'")"
check_eq 'no audit row holds a JWT' 0 "$(sql "select count(*) from audit_log where details::text like '%$RT%'")"
finish
