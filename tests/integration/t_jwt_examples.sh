#!/usr/bin/env bash
# t_jwt_examples.sh: owner-signed git URLs are ordinary ES256 JWTs (issue 17). The two
# examples, examples/giturl.py (PyJWT, Debian's python3-jwt) and examples/giturl.mjs (jose,
# pinned by examples/package-lock.json, installed here by `npm ci`), register a key made by
# openssl and sign URLs with it, nothing of sandboxd's in them: their claims are
# sandboxctl's, the kid is the server's, git clones and pushes where the claims allow, and
# a changed payload, a wrong key, an expiry and a foreign repository are refused with the
# server's own status and reason. Then the sandbox-provider story: one read/write URL used
# from a sandboxd sandbox and from a plain `docker run` container of the runner image on
# the host's default bridge (nothing of ours inside), the same clone and pushes each way.
. "$(dirname "$0")/lib.sh"

export GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=/bin/false
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
HOSTPORT=${SANDBOXD_URL#http://}
PORT=${HOSTPORT##*:}
EX=$ROOT/examples
PY=/usr/bin/python3 # Debian's, with python3-jwt (a python3 earlier on PATH may lack it)
IMAGE=sandboxd-runner:minimal
LABEL=sandboxd.test=t_jwt_examples-$SFX
H=$_T/host
mkdir -p "$H"

# refused TEXT CMD…: CMD fails and says TEXT (stdout and stderr): any failure is not enough.
refused() {
	local want=$1 out
	shift
	if out=$("$@" 2>&1); then
		printf '       it succeeded\n'
		return 1
	fi
	[[ $out == *"$want"* ]] && return 0
	printf '       it failed, but said: %s\n' "$(head -c 400 <<<"$out")"
	return 1
}
bare_ref() { git --git-dir "$REPOS_DIR/$1.git" rev-parse -q --verify "$2" 2>/dev/null; }
tok_of() { local t=${1#*x-token:}; printf '%s' "${t%@*}"; }
b64url() { base64 -w0 | tr '+/' '-_' | tr -d '='; }
unb64url() { # base64url (no padding) on stdin, decoded
	local s
	s=$(tr -- '-_' '+/')
	while ((${#s} % 4)); do s+='='; done
	base64 -d <<<"$s"
}
part() { tok_of "$1" | cut -d. -f"$2" | unb64url; } # URL N: the JWT's header (1) or payload (2)
py() { "$PY" "$EX/giturl.py" "$@"; }
nd() { node "$EX/giturl.mjs" "$@"; }
# url CMD…: the URL that CMD (py, nd, or a script as the README runs it) prints, recorded for
# run.sh's secret check
url() {
	local u
	u=$("$@") || return 1
	it_tokens "$u"
	printf '%s\n' "$u"
}
# info_refs TOKEN [REPO]: info/refs with the token as Basic password (STATUS, BODY, REQ_ID)
info_refs() { # TOKEN|- [REPO]
	local a=-
	[[ $1 == - ]] || a=$(basic "$1")
	# (2>/dev/null: bash's notice about the NUL bytes of a pkt-line answer in BODY)
	api GET "/${2:-$R}.git/info/refs?service=git-upload-pack" '' "$a" 2>/dev/null
}
reason_of() { sql "select details->>'reason' from audit_log where request_id = '$1' and action = 'auth.denied'"; }
# denied NAME TOKEN REASON [REPO]: 401 with git's Basic challenge, audited with REASON
denied() {
	info_refs "$2" "${4:-$R}"
	expect_error 401 'bad credentials' "$1: info/refs 401 'bad credentials'"
	expect_header WWW-Authenticate 'Basic realm="sandboxd"' "$1: with the Basic challenge"
	check_eq "$1: audited as auth.denied, '$3'" "$3" "$(reason_of "$REQ_ID")"
}

# --- the libraries ----------------------------------------------------------------------------
check_eq "Debian's PyJWT and cryptography import" ok "$("$PY" -c 'import jwt, cryptography; print("ok")' 2>&1)"
# Always from the lockfile: nothing a previous run or another machine left is used.
if (cd "$EX" && npm ci --no-audit --no-fund --loglevel=error) >"$_T/npm.log" 2>&1; then
	ok 'npm ci in examples/ installs the pinned jose'
else
	fail 'npm ci in examples/ installs the pinned jose' "$(tail -n 5 "$_T/npm.log")"
	finish
fi
check_eq 'the jose installed is the one package-lock.json pins' \
	"$(jq -r '.packages["node_modules/jose"].version' "$EX/package-lock.json")" \
	"$(jq -r .version "$EX/node_modules/jose/package.json")"

# --- an owner, a repository, two keys made by openssl ------------------------------------------
mk_repo "jx$SFX" site
O=${R%/*}
api POST /api/v3/user/repos '{"name":"other","visibility":"private"}' "$OT"
expect_status 201 "repository $O/other created"
git -C "$W" push -q "http://t:$OT@$HOSTPORT/$O/other.git" main
STRANGER=jxs$SFX
mk_user "$STRANGER" || exit 1
api POST /api/v3/user/repos '{"name":"x","visibility":"public"}' "$LAST_TOKEN"
expect_status 201 "a stranger's public repository $STRANGER/x"
BASE=$(git -C "$W" rev-parse HEAD)
for k in py nd stranger; do
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$_T/$k.pem" 2>/dev/null
done
check 'three P-256 keys from openssl' test -s "$_T/py.pem" -a -s "$_T/nd.pem" -a -s "$_T/stranger.pem"
PYKID=$(py kid --key "$_T/py.pem")
NDKID=$(nd kid --key "$_T/nd.pem")
check_eq 'both libraries compute the same RFC 7638 kid (PyJWT key)' "$PYKID" "$(nd kid --key "$_T/py.pem")"
check_eq 'both libraries compute the same RFC 7638 kid (jose key)' "$NDKID" "$(py kid --key "$_T/nd.pem")"
check_eq 'both libraries write the same public key PEM' "$(py public-key --key "$_T/nd.pem")" \
	"$(nd public-key --key "$_T/nd.pem")"

# --- registering them: POST /api/v3/user/keys with each library's proof ------------------------
register() { # LIB KEY LOGIN: POST /user/keys with LIB's public key and proof
	api POST /api/v3/user/keys "$(jq -n --arg k "$($1 public-key --key "$2")" \
		--arg p "$($1 proof --key "$2" --login "$3")" '{public_key: $k, proof: $p}')" "$OT"
}
register py "$_T/py.pem" "someone-else"
expect_error 400 "field 'proof' does not prove the key: it was made for another account" \
	'a PyJWT proof made for another login: 400'
api POST /api/v3/user/keys "$(jq -n --arg k "$(py public-key --key "$_T/py.pem")" \
	--arg p "$(nd proof --key "$_T/nd.pem" --login "$O")" '{public_key: $k, proof: $p}')" "$OT"
expect_error 400 "field 'proof' does not prove the key: signed by another key" \
	'a jose proof by another key: 400'
register py "$_T/py.pem" "$O"
expect_status 201 'the PyJWT proof registers its key: 201'
check_eq "the server's kid is PyJWT's" "$PYKID" "$(_json .kid)"
register nd "$_T/nd.pem" "$O"
expect_status 201 'the jose proof registers its key: 201'
check_eq "the server's kid is jose's" "$NDKID" "$(_json .kid)"

# The README's commands, as printed there (curl -d, no Content-Type), with a fourth key.
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$_T/readme.pem" 2>/dev/null
check_eq "the README's curl registers a key: 201 and its kid" "201 $(py kid --key "$_T/readme.pem")" "$(
	curl -s -o "$_T/readme.out" -w '%{http_code}' -H "Authorization: Bearer $OT" "$SANDBOXD_URL/api/v3/user/keys" -d "$(jq -n \
		--arg k "$("$EX/giturl.py" public-key --key "$_T/readme.pem")" \
		--arg p "$("$EX/giturl.py" proof --key "$_T/readme.pem" --login "$O")" '{public_key: $k, proof: $p}')"
	) $(jq -r .kid "$_T/readme.out")"
U=$(url "$EX/giturl.py" url --key "$_T/readme.pem" --repo "$R" --scope git:write --url "$SANDBOXD_URL")
check_eq "and the README's giturl.py url line reads with it" "$BASE" "$(git ls-remote "$U" refs/heads/main | cut -f1)"
U=$(url node "$EX/giturl.mjs" url --key "$_T/readme.pem" --repo "$R" --scope git:write --url "$SANDBOXD_URL")
check_eq "and so does the README's node giturl.mjs line" "$BASE" "$(git ls-remote "$U" refs/heads/main | cut -f1)"

# --- the claims are sandboxctl's -----------------------------------------------------------------
T0=$(date +%s)
ARGS=(--repo "$R" --scope git:write --scope git:read --ttl 600 --kind ephemeral
	--policy 'refs/namespaces/ephemeral/refs/heads/s=no-force-push' --policy '*=no-push'
	--url "$SANDBOXD_URL/" --issued-at "$T0")
CTL_URL=$("$SANDBOXCTL" git-url --key "$_T/py.pem" "${ARGS[@]}")
for lib in py nd; do
	U=$(url "$lib" url --key "$_T/py.pem" "${ARGS[@]}")
	check_eq "$lib: the header is sandboxctl's" "$(part "$CTL_URL" 1 | jq -Sc .)" "$(part "$U" 1 | jq -Sc .)"
	check_eq "$lib: the claims are sandboxctl's" "$(part "$CTL_URL" 2 | jq -Sc .)" "$(part "$U" 2 | jq -Sc .)"
	check_eq "$lib: the URL around the token is sandboxctl's" "${CTL_URL%%x-token:*} ${CTL_URL#*@}" "${U%%x-token:*} ${U#*@}"
done

# --- git with each library's URLs, from the host ---------------------------------------------------
POL=(--policy 'refs/heads/jwt-*=no-force-push' --policy '*=no-push')
for lib in py nd; do
	key=$_T/$lib.pem
	RURL=$(url "$lib" url --key "$key" --repo "$R" --url "$SANDBOXD_URL")
	WURL=$(url "$lib" url --key "$key" --repo "$R" --scope git:read --scope git:write "${POL[@]}" --ttl 600 --url "$SANDBOXD_URL")
	check "$lib: git clone with its read URL" git clone -q "$RURL" "$H/$lib-r"
	check_eq "$lib: the clone is at main" "$BASE" "$(git -C "$H/$lib-r" rev-parse HEAD)"
	echo "$lib" >"$H/$lib-r/$lib" && git -C "$H/$lib-r" add "$lib" && git -C "$H/$lib-r" commit -qm "$lib"
	check "$lib: the read URL cannot push: 403" refused 'The requested URL returned error: 403' \
		git -C "$H/$lib-r" push -q origin "HEAD:refs/heads/jwt-$lib-read"
	check_eq "$lib: and nothing landed" '' "$(bare_ref "$R" "refs/heads/jwt-$lib-read")"
	check "$lib: git clone with its read/write URL" git clone -q "$WURL" "$H/$lib-w"
	git -C "$H/$lib-w" pull -q "$H/$lib-r" HEAD
	check "$lib: push to refs/heads/jwt-$lib (its policy allows it)" git -C "$H/$lib-w" push -q origin "HEAD:refs/heads/jwt-$lib"
	check_eq "$lib: and it landed" "$(git -C "$H/$lib-w" rev-parse HEAD)" "$(bare_ref "$R" "refs/heads/jwt-$lib")"
	check "$lib: push to main is refused by its '*' policy" \
		refused "refs/heads/main: push refused by ref policy '*' (no-push)" \
		git -C "$H/$lib-w" push -q origin HEAD:main
	check_eq "$lib: main is unchanged" "$BASE" "$(bare_ref "$R" refs/heads/main)"

	# --- refused: each next to the same request that works ---
	RT=$(tok_of "$RURL")
	info_refs "$RT"
	expect_status 200 "$lib: its read token on info/refs: 200"
	IFS=. read -r HD PL SIG <<<"$RT"
	WIDE=$(unb64url <<<"$PL" | jq -c '.scopes = ["git:read","git:write"]' | b64url)
	check "$lib: git refuses the URL with a changed payload (scopes widened)" \
		refused "fatal: Authentication failed for '$SANDBOXD_URL/$R.git/'" \
		git ls-remote "${RURL/$PL/$WIDE}"
	denied "$lib: changed payload" "$HD.$WIDE.$SIG" 'git URL token: signature does not verify'
	STR=$(tok_of "$(url "$lib" url --key "$_T/stranger.pem" --repo "$R" --url "$SANDBOXD_URL")")
	check "$lib: git refuses a URL signed by a key never registered" \
		refused "fatal: Authentication failed for '$SANDBOXD_URL/$R.git/'" \
		git ls-remote "http://x-token:$STR@$HOSTPORT/$R.git"
	denied "$lib: an unregistered key" "$STR" 'git URL token: unknown key'
	denied "$lib: the registered kid over another key's signature" "$HD.${STR#*.}" \
		'git URL token: signature does not verify'
	OLD=$(url "$lib" url --key "$key" --repo "$R" --url "$SANDBOXD_URL" --issued-at $(($(date +%s) - 1000)) --ttl 900)
	check "$lib: git refuses a URL expired 100 s ago (past the 60 s skew)" \
		refused "fatal: Authentication failed for '$SANDBOXD_URL/$R.git/'" git ls-remote "$OLD"
	denied "$lib: expired" "$(tok_of "$OLD")" 'git URL token: token expired'
	FOREIGN=$(url "$lib" url --key "$key" --repo "$STRANGER/x" --url "$SANDBOXD_URL")
	info_refs - "$STRANGER/x"
	expect_status 200 "$lib: $STRANGER/x is public: info/refs without credentials 200"
	denied "$lib: signed for another owner's repository" "$(tok_of "$FOREIGN")" \
		"git URL token: an owner's key signs only for its own repositories" "$STRANGER/x"
	OTHER=$(url "$lib" url --key "$key" --repo "$O/other" --url "$SANDBOXD_URL")
	check_eq "$lib: a URL for the owner's other repository reads it" "$BASE" \
		"$(git ls-remote "$OTHER" refs/heads/main 2>/dev/null | cut -f1)"
	denied "$lib: that URL on this repository" "$(tok_of "$OTHER")" 'git URL token for another repository'
done

# --- one read/write URL, two sandbox providers ---------------------------------------------------
# The URL names the host as sandboxes reach it (sandboxd.internal, the engine's host-gateway,
# where nginx also listens); the JWT does not name a host.
PURL=$(url py url --key "$_T/py.pem" --repo "$R" --scope git:read --scope git:write "${POL[@]}" --ttl 900 \
	--url "http://sandboxd.internal:$PORT")
MAIN=$(bare_ref "$R" refs/heads/main)

api POST "$SB" '{}' "$OT"
expect_status 201 'a sandboxd sandbox on the repository'
SBID=$(_json .id)
close_sandbox() { [[ -n ${SBID:-} ]] && api POST "$SB/$SBID/close" '' "$OT"; }
AT_EXIT+=(close_sandbox)
clone_done() { api GET "$SB/$SBID" '' "$OT"; [[ $(_json .clone.state) == "done" ]]; }
check 'its clone is done' wait_until 60 clone_done
rm_containers() { docker ps -aq --filter "label=$LABEL" | xargs -r docker rm -f >/dev/null 2>&1; }
AT_EXIT+=(rm_containers)

# in_sandbox CMD / in_docker CMD: bash -c CMD with GIT_URL in its environment; RC, OUT (stdout
# and stderr together)
in_sandbox() {
	api POST "$SB/$SBID/exec" "$(jq -nc --arg c "$1" --arg u "$PURL" '{cmd: ("exec 2>&1; " + $c), env: {GIT_URL: $u}}')" "$OT"
	RC=$(_json .exitCode)
	OUT=$(_json .stdout)
}
in_docker() {
	OUT=$(GIT_URL=$PURL timeout -k 5 120 docker exec -u "$BOX_USER" -w /tmp -e GIT_URL "$CID" bash -c "$1" 2>&1)
	RC=$?
}
# provider NAME RUN: the same steps through RUN (in_sandbox or in_docker)
provider() {
	local p=$1 run=$2 d=/tmp/jwt-$SFX
	$run "git clone -q \"\$GIT_URL\" $d && git -C $d rev-parse HEAD"
	check_eq "$p: git clone with the URL" "0 $MAIN" "$RC $OUT"
	$run "cd $d && echo $p >$p && git add $p && git -c user.name=p -c user.email=p@p commit -qm $p &&
		git push -q origin HEAD:refs/heads/jwt-$p && git rev-parse HEAD"
	check_eq "$p: git push to refs/heads/jwt-$p (exit code)" 0 "$RC"
	PUSHED=$OUT
	check_eq "$p: and it landed" "$(tail -n 1 <<<"$PUSHED")" "$(bare_ref "$R" "refs/heads/jwt-$p")"
	$run "cd $d && git push origin HEAD:main"
	check_cond "$p: git push to main is refused by the '*' policy" \
		"[[ \$RC != 0 && \$OUT == *\"refs/heads/main: push refused by ref policy '*' (no-push)\"* ]]"
	check_eq "$p: main is unchanged" "$MAIN" "$(bare_ref "$R" refs/heads/main)"
	$run "cd $d && git push -q -f origin HEAD~1:refs/heads/jwt-$p"
	check_cond "$p: a force push to jwt-$p is refused by its no-force-push policy" \
		"[[ \$RC != 0 && \$OUT == *\"refs/heads/jwt-$p: push refused by ref policy 'refs/heads/jwt-*' (no-force-push: not a fast-forward)\"* ]]"
	check_eq "$p: jwt-$p is unchanged" "$(tail -n 1 <<<"$PUSHED")" "$(bare_ref "$R" "refs/heads/jwt-$p")"
}
provider sandbox in_sandbox

# The second provider: the runner image (debootstrap's Debian with git, nothing of sandboxd's:
# no agent, no token, no configuration) run by hand on the host's default bridge.
CID=$(docker run -d --label "$LABEL" --add-host sandboxd.internal:host-gateway "$IMAGE" sleep 600 2>"$_T/docker.err")
check "a plain docker run container of $IMAGE" test -n "$CID"
check_eq 'with nothing of sandboxd in it: no mount (no agent), no sandbox or instance label, no token' \
	"0 [] 0" "$(docker inspect -f '{{len .Mounts}} [{{index .Config.Labels "sandboxd.sandbox"}}{{index .Config.Labels "sandboxd.instance"}}]' "$CID") $(
		docker exec "$CID" sh -c 'env; ls -A /workspace /tmp' | grep -cE 'dst_|dfy_|djt_|eyJ|sandboxd')"
provider docker in_docker
in_docker "cd /tmp/jwt-$SFX && git fetch -q origin jwt-sandbox && git rev-parse FETCH_HEAD"
check_eq "docker: fetches what the sandbox pushed with the same URL" "0 $(bare_ref "$R" refs/heads/jwt-sandbox)" "$RC $OUT"
in_sandbox "cd /tmp/jwt-$SFX && git fetch -q origin jwt-docker && git rev-parse FETCH_HEAD"
check_eq "sandbox: fetches what the docker container pushed" "0 $(bare_ref "$R" refs/heads/jwt-docker)" "$RC $OUT"
check_eq "both pushes audited as $O's, through the git URL of the PyJWT key" \
	"refs/heads/jwt-docker $O git-url $PYKID,refs/heads/jwt-sandbox $O git-url $PYKID" \
	"$(sql "select string_agg(distinct concat_ws(' ', p.details->>'ref', p.login, p.token_kind, q.details->>'kid'), ',')
		from audit_log p join audit_log q on q.request_id = p.request_id and q.details ? 'kid'
		where p.action = 'git.push.ref' and p.repository = '$R' and p.details->>'result' = 'accepted'
		and p.details->>'ref' in ('refs/heads/jwt-sandbox', 'refs/heads/jwt-docker')")"
rm_containers
check_eq 'the docker container is removed' '' "$(docker ps -aq --filter "label=$LABEL")"
close_sandbox
expect_status 204 'the sandbox closes'
SBID=''
finish
