#!/usr/bin/env bash
# t_push_protect.sh: push protection against the attacks of issue 11 (items 2, 11 and 13),
# with the stock git client through nginx and sandboxd: secrets pushed under a tag, a tree
# or a blob ref, or already sitting in the repository; a NUL byte in a file; a history
# longer than the old 20,000-commit walk; ref names longer than the hook's old buffer; a
# hook environment with a variable missing. Each refusal is checked by git's text, and
# each is paired with a push that must succeed.
. "$(dirname "$0")/lib.sh"

export GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=/bin/false
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
HOSTPORT=${SANDBOXD_URL#http://}
HOOK="$ROOT/${SANDBOXD_BUILD:-build}/hooks/pre-receive"
W=$_T/work
mkdir -p "$W"
g() { git -C "$W/$1" "${@:2}"; }
bare() { git --git-dir "$REPOS_DIR/$R.git" "$@"; }
bare_ref() { bare rev-parse -q --verify "$1" 2>/dev/null; }
has_text() { # NAME TEXT: git's output (OUT) holds TEXT
	if grep -qF -- "$2" <<<"$OUT"; then ok "$1"; else fail "$1" "no '$2' in: $(head -c 600 <<<"$OUT")"; fi
}
# Split so that this file itself does not look like a secret to a scanner.
GH="ghp""_R8cTqW2nZk5yHb0mXv7LpD4sJf9aGe3uNi6o"
AWS="AKIA""Q3EGRLW7PLXNZK4T"

O="pp$SFX"
mk_user "$O" || exit 1
OT=$LAST_TOKEN
R="$O/prot"
api POST /api/v3/user/repos '{"name":"prot","visibility":"private"}' "$OT"
expect_status 201 'repository created'
URL="http://t:$OT@$HOSTPORT/$R.git"
git init -q -b main "$W/a"
echo base >"$W/a/README" && g a add README && g a commit -qm base
check 'the first push lands' g a push -q "$URL" main
BASE=$(g a rev-parse HEAD)

# --- 1. a secret under a tag, a tree ref or a blob ref ------------------------------
B=$(printf 'token = %s\n' "$GH" | g a hash-object -w --stdin)
OUT=$(g a push "$URL" "$B:refs/tags/t-blob" 2>&1)
has_text 'a tag pointing at a blob with a secret is refused' "GitHub token found in the blob (line 1) that refs/tags/t-blob points at"
check_eq 'the tag is not created' '' "$(bare_ref refs/tags/t-blob)"
check 'never echoing the secret' bash -c '! grep -qF "$1" <<<"$2"' _ "$GH" "$OUT"
TREE=$(printf '100644 blob %s\tcreds.txt\n' "$B" | g a mktree)
OUT=$(g a push "$URL" "$TREE:refs/tags/t-tree" 2>&1)
has_text 'a tag pointing at a tree with a secret is refused, naming the file' "GitHub token found in creds.txt (line 1) that refs/tags/t-tree points at"
g a tag -a -m 'release' t-ann "$B"
OUT=$(g a push "$URL" refs/tags/t-ann 2>&1)
has_text 'an annotated tag of that blob is refused' "that refs/tags/t-ann points at"
g a tag -a -m "notes: $AWS" t-msg HEAD
OUT=$(g a push "$URL" refs/tags/t-msg 2>&1)
has_text 'a tag message holding a secret is refused' "AWS access key id found in the message of tag"
CLEAN=$(printf 'nothing to see\n' | g a hash-object -w --stdin)
check 'positive: a tag pointing at a clean blob lands' g a push -q "$URL" "$CLEAN:refs/tags/t-clean"
check_eq 'positive: it is there' "$CLEAN" "$(bare_ref refs/tags/t-clean)"

# The blob already sits in the repository (pushed before the scanner knew its format, or
# written there by an operator), under a tag: a commit that adds it to a branch must be
# refused although the push brings no new blob.
B2=$(printf 'export GITHUB_TOKEN=%s\n' "$GH" | bare hash-object -w --stdin)
bare update-ref refs/tags/old-blob "$B2"
chown -R --reference="$REPOS_DIR/$R.git/config" "$REPOS_DIR/$R.git"
printf 'export GITHUB_TOKEN=%s\n' "$GH" >"$W/a/env.sh" && g a add env.sh && g a commit -qm 'add env'
check_eq 'the commit reuses the blob already in the repository' "$B2" "$(g a rev-parse HEAD:env.sh)"
OUT=$(g a push "$URL" main 2>&1)
has_text 'a commit adding a blob that sits in the repository under a tag is refused' "GitHub token found in env.sh (line 1) in commit $(g a rev-parse --short=12 HEAD)"
check_eq 'main is unchanged' "$BASE" "$(bare_ref refs/heads/main)"
g a reset -q --hard "$BASE"
echo more >"$W/a/more" && g a add more && g a commit -qm more
check 'positive: a clean commit on main lands (with a tag to a blob in the repository)' g a push -q "$URL" main
BASE=$(g a rev-parse HEAD)

# --- 2. a NUL byte does not turn the scan off ----------------------------------------
printf '\0\nAWS_ACCESS_KEY_ID=%s\n' "$AWS" >"$W/a/.env" && g a add .env && g a commit -qm env
OUT=$(g a push "$URL" main 2>&1)
has_text 'a file starting with a NUL byte and holding an AWS key is refused' "AWS access key id found in .env (line 2)"
check_eq 'main is unchanged' "$BASE" "$(bare_ref refs/heads/main)"
g a reset -q --hard "$BASE"
printf '\0\1\2binary\0data\n' >"$W/a/blob.bin" && g a add blob.bin && g a commit -qm bin
check 'positive: a binary file without a secret lands' g a push -q "$URL" main
BASE=$(g a rev-parse HEAD)
printf 'KEY=%s\n' "$AWS" | iconv -f UTF-8 -t UTF-16 >"$W/a/key.txt" && g a add key.txt && g a commit -qm utf16
OUT=$(g a push "$URL" main 2>&1)
has_text 'a UTF-16 file holding an AWS key is refused' "AWS access key id found in key.txt (line 1)"
g a reset -q --hard "$BASE"
g a commit -q --allow-empty -m "deploy with $AWS"
OUT=$(g a push "$URL" main 2>&1)
has_text 'a commit message holding a secret is refused' "AWS access key id found in the message of commit $(g a rev-parse --short=12 HEAD)"
g a reset -q --hard "$BASE"

# Many blobs (read and scanned by several threads): the one secret among them is found and
# named; the same files without it land.
mkdir -p "$W/a/many"
for i in $(seq 200); do printf 'file %d\n%s\n' "$i" "$(head -c 3000 /dev/urandom | base64 -w 76)" >"$W/a/many/f$i.txt"; done
printf 'deploy:\n  token: %s\n' "$GH" >>"$W/a/many/f137.txt"
g a add many && g a commit -qm many
OUT=$(g a push "$URL" main 2>&1)
has_text 'one secret among 200 new files is refused, naming its file' "GitHub token found in many/f137.txt (line 56) in commit"
g a reset -q --hard "$BASE"
mkdir -p "$W/a/many"
for i in $(seq 200); do printf 'file %d\n%s\n' "$i" "$(head -c 3000 /dev/urandom | base64 -w 76)" >"$W/a/many/f$i.txt"; done
g a add many && g a commit -qm many
check 'positive: 200 clean files land' g a push -q "$URL" main
BASE=$(g a rev-parse HEAD)

# --- 3. more than 20,000 commits --------------------------------------------------------
long_history() { # DIR CONTENT: a root commit with config.txt, then 20,005 empty commits
	git init -q -b main "$1"
	{
		printf 'blob\nmark :1\ndata %d\n%s\n' $((${#2} + 1)) "$2"
		printf 'commit refs/heads/main\nmark :2\ncommitter t <t@t> 1700000000 +0000\ndata 4\nroot\nM 100644 :1 config.txt\n'
		for ((i = 3; i < 20008; i++)); do
			printf 'commit refs/heads/main\nmark :%d\ncommitter t <t@t> %d +0000\ndata 2\nc\nfrom :%d\n' \
				"$i" $((1700000000 + i)) $((i - 1))
		done
	} | git -C "$1" fast-import --quiet
}
long_history "$W/long" "aws_access_key_id = $AWS"
check_eq 'the history has 20,006 commits' 20006 "$(g long rev-list --count main)"
OUT=$(g long push "$URL" main:refs/heads/long 2>&1)
has_text 'a root commit with an AWS key under 20,005 empty commits is refused' "AWS access key id found in config.txt (line 1) in commit $(g long rev-list --max-parents=0 --abbrev-commit --abbrev=12 main)"
check_eq 'the branch is not created' '' "$(bare_ref refs/heads/long)"
long_history "$W/long2" "region = eu-west-1"
check 'positive: the same history without the key lands' g long2 push -q "$URL" main:refs/heads/long2

# --- 4. ref names past the hook's old 1,024-byte buffer --------------------------------
api POST "/api/v3/repos/$R/git-urls" '{"scopes":["git:read","git:write"],"ref_policies":[{"pattern":"*/locked","ops":["no-push"]}]}' "$OT"
expect_status 201 'a git URL with a */locked no-push policy'
PURL=$(_json .url)
SEG=$(printf 'x%.0s' $(seq 107))
LONG="refs/heads/$(for _ in $(seq 10); do printf '%s/' "$SEG"; done)locked"
check "the name has ${#LONG} bytes, more than 1,080" [ "${#LONG}" -gt 1080 ]
OUT=$(g a push "$PURL" "HEAD:$LONG" 2>&1)
has_text 'a ref name that long ending in /locked is refused' "ref names are limited to 1023 bytes (this one has ${#LONG})"
check_eq 'the ref is not created' '' "$(bare_ref "$LONG")"
check_eq 'its audit row holds the whole name' 1 "$(sql "select count(*) from audit_log where action = 'git.push.ref' and repository = '$R' and details->>'ref' = '$LONG' and details->>'result' = 'refused'")"
OUT=$(g a push "$PURL" HEAD:refs/heads/short/locked 2>&1)
has_text 'positive: the policy refuses a short */locked name with its own reason' "no-push"
check_eq 'and it is not created' '' "$(bare_ref refs/heads/short/locked)"
OK_NAME="refs/heads/$(for _ in $(seq 9); do printf '%s/' "$SEG"; done)open"
check "positive: a ${#OK_NAME}-byte name that no policy refuses lands" g a push -q "$PURL" "HEAD:$OK_NAME"
check_eq 'positive: it is there' "$BASE" "$(bare_ref "$OK_NAME")"

# --- 5. the hook's environment: every variable or no push ---------------------------------
# An ephemeral push with both headers that once pushed the report's variable out of a full
# environment: every check still runs (the policy refuses, a clean push lands).
api POST "/api/v3/repos/$R/git-urls" '{"scopes":["git:read","git:write"],"kind":"ephemeral","ref_policies":[{"pattern":"*/locked","ops":["no-push"]}]}' "$OT"
EURL=$(_json .url)
HDR=(-c protocol.version=1 -c 'http.extraHeader=Content-Encoding: identity')
OUT=$(g a "${HDR[@]}" push "$EURL" HEAD:refs/heads/e/locked 2>&1)
has_text 'an ephemeral push with Git-Protocol and Content-Encoding: the policy still refuses' "no-push"
check 'positive: and a clean ephemeral push with them lands' g a "${HDR[@]}" push -q "$EURL" HEAD:refs/heads/e/open
check_eq 'positive: under the namespace' "$BASE" "$(bare_ref refs/namespaces/ephemeral/refs/heads/e/open)"
check_eq 'positive: the hook reported it (accepted, no failed row)' 0 "$(sql "select count(*) from audit_log where action = 'git.push.ref' and repository = '$R' and details->>'ref' like '%/e/open' and details->>'result' = 'failed'")"

# The hook itself, run as git runs it, with one variable missing: refused, fail closed.
HR=$_T/hookrepo.git
git init -q --bare "$HR"
HC=$(git --git-dir "$HR" commit-tree "$(git --git-dir "$HR" mktree </dev/null)" -m x)
hook_env=(GIT_DIR="$HR" SANDBOXD_DATABASE_URL="$SANDBOXD_DATABASE_URL" SANDBOXD_HOOK_REPO="$R"
	SANDBOXD_HOOK_REPO_ID=0 SANDBOXD_HOOK_DEFAULT_BRANCH=main SANDBOXD_HOOK_LOGIN="$O"
	SANDBOXD_HOOK_ACCOUNT_ID= SANDBOXD_HOOK_AGENT=0 SANDBOXD_HOOK_TOKEN_ID=
	SANDBOXD_HOOK_TOKEN_KIND=personal SANDBOXD_HOOK_REQUEST_ID="hooktest-$SFX"
	SANDBOXD_HOOK_NAMESPACE= SANDBOXD_HOOK_REPORT_FD= SANDBOXD_HOOK_VALUES=)
HOUT=$(printf '%040d %s refs/heads/x\n' 0 "$HC" | env -i PATH="$PATH" "${hook_env[@]}" "$HOOK" 2>&1)
HRC=$?
check_eq 'the hook without SANDBOXD_HOOK_POLICIES refuses the push' 1 "$HRC"
OUT=$HOUT has_text 'naming the missing variable' "SANDBOXD_HOOK_POLICIES is missing from the hook's environment"
HOUT=$(printf '%040d %s refs/heads/x\n' 0 "$HC" | env -i PATH="$PATH" "${hook_env[@]}" SANDBOXD_HOOK_POLICIES= "$HOOK" 2>&1)
check_eq "positive: with every variable the hook accepts it ($HOUT)" 0 "$?"
# A sandbox's secret values (valscan.h) promised on descriptor 6 that is not there: refused.
HOUT=$(printf '%040d %s refs/heads/x\n' 0 "$HC" | env -i PATH="$PATH" "${hook_env[@]}" SANDBOXD_HOOK_POLICIES= SANDBOXD_HOOK_VALUES=6 "$HOOK" 2>&1 6<&-)
check_eq 'the hook without the values it was told of refuses the push' 1 "$?"
OUT=$HOUT has_text 'saying so' "push refused: the sandbox's secrets could not be read to scan the push"
# Given them (a value in the ref's name): refused by name, the name withheld.
printf 'K %s\n' "$(printf 'v4lue-%s' "$SFX" | od -An -tx1 | tr -d ' \n')" >"$_T/values"
HOUT=$(printf '%040d %s refs/heads/x-v4lue-%s\n' 0 "$HC" "$SFX" | env -i PATH="$PATH" "${hook_env[@]}" SANDBOXD_HOOK_POLICIES= SANDBOXD_HOOK_VALUES=6 "$HOOK" 2>&1 6<"$_T/values")
check_eq 'the hook with a value in a ref name refuses the push' 1 "$?"
OUT=$HOUT has_text 'naming the secret, not the ref' "push refused: sandbox secret K found in the name of a ref (withheld here)"
check_eq 'and the name is nowhere in what it says' 0 "$(grep -c "v4lue-$SFX" <<<"$HOUT")"
finish
