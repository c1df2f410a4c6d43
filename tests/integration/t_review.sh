#!/usr/bin/env bash
# t_review.sh: reviewing agent work over REST (SPEC §5): branches, a commit, compare and
# DELETE …/git/refs in both namespaces, with the real git client pushing normal and (by an
# ephemeral git URL) ephemeral branches; the limits and their flags, binary and huge files,
# 404s, who may read and who may delete, the default branch. Every refusal is checked by its
# text next to a call that is accepted.
. "$(dirname "$0")/lib.sh"

export GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=/bin/false
export GIT_AUTHOR_NAME='Ada Reviewer' GIT_AUTHOR_EMAIL=ada@example.com
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
HOSTPORT=${SANDBOXD_URL#http://}
W=$_T/work
g() { git -C "$W" "$@"; }
bare_ref() { git --git-dir "$REPOS_DIR/$R.git" rev-parse -q --verify "$1" 2>/dev/null; }
remote_has() { git ls-remote "http://t:$OT@$HOSTPORT/$R.git" "$1" | grep -q .; }
fails() { ! "$@"; }

O="rv$SFX"
mk_user "$O" || exit 1
OT=$LAST_TOKEN OT_ID=$LAST_TOKEN_ID
R="$O/site"
API=/api/v3/repos/$R
api POST /api/v3/user/repos '{"name":"site","visibility":"private"}' "$OT"
expect_status 201 "repository $R created"
RO_T=$(mk_token "$O" read) RO_ID=$(last_token_id)
RD="rvread$SFX"
mk_user "$RD" || exit 1
RDT=$LAST_TOKEN RD_ID=$LAST_TOKEN_ID
api PUT "$API/collaborators/$RD" '{"role":"read"}' "$OT"
AG="rvagent$SFX"
mk_user "$AG" --kind agent || exit 1
AGT=$LAST_TOKEN AG_ID=$LAST_TOKEN_ID
api PUT "$API/collaborators/$AG" '{"role":"write"}' "$OT"
AT_EXIT+=("ctl token revoke $OT_ID; ctl token revoke $RO_ID; ctl token revoke $RD_ID; ctl token revoke $AG_ID")
AT_EXIT+=("ctl account disable $RD; ctl account disable $AG; ctl account disable $O")

# --- the history: main, feature (diverged), a tag, a '/' name, big and huge branches ----
git init -q -b main "$W"
printf 'line1\n' >"$W/f.txt" && g add f.txt && g commit -qm base
BASE=$(g rev-parse HEAD)
g tag v1
g switch -q -c feature
printf 'line1\nline2\n' >"$W/f.txt"
printf 'new\n' >"$W/new.txt"
printf 'bin\000ary\001\002' >"$W/bin.dat"
g add -A && g commit -qm 'feature work' -m 'with a body'
FEAT=$(g rev-parse HEAD)
g switch -q main
printf 'other\n' >"$W/other.txt" && g add other.txt && g commit -qm 'main moves'
MAIN=$(g rev-parse HEAD)
# huge: a 2 MiB text file next to a small one
g switch -q -c huge "$BASE"
head -c 2200000 /dev/zero | tr '\0' 'a' | fold -w 100 >"$W/huge.txt"
printf 'small\n' >"$W/small.txt"
g add -A && g commit -qm huge
HUGE=$(g rev-parse HEAD)
# big: 310 files in one commit, then 260 more commits (past 250 commits and 300 files)
g switch -q -c big "$BASE"
for i in $(seq -w 1 310); do printf '%s\n' "$i" >"$W/m$i.txt"; done
g add -A && g commit -qm 'many files'
MANY=$(g rev-parse HEAD)
for i in $(seq 1 260); do g commit -q --allow-empty -m "empty $i"; done
g switch -q main
check 'push main, feature, huge, big, team/feature-x and the tag' \
	g push -q "http://t:$OT@$HOSTPORT/$R.git" main feature huge big feature:team/feature-x v1

# the agent's session branch and an ephemeral main, through an ephemeral git URL
api POST "$API/git-urls" '{"scopes":["git:write"],"kind":"ephemeral"}' "$AGT"
expect_status 201 'the agent mints an ephemeral write URL'
EURL=$(_json .url)
g switch -q -c agent/s1 "$BASE"
printf 'line1\nagent\n' >"$W/f.txt" && g commit -qam 'agent change'
S1=$(g rev-parse HEAD)
g switch -q main
check 'the agent pushes agent/s1 and main to the ephemeral namespace' \
	g push -q "$EURL" agent/s1 "$BASE:refs/heads/main"
check_eq 'agent/s1 is stored in the ephemeral namespace' "$S1" \
	"$(bare_ref refs/namespaces/ephemeral/refs/heads/agent/s1)"

# --- branches ---------------------------------------------------------------------------
api GET "$API/branches" '' "$OT"
expect_status 200 'GET branches: 200'
expect_schema review.branches 200
expect_json '[.[].name] | join(",")' 'big,feature,huge,main,team/feature-x' 'the normal branches, by name, no ephemeral one'
expect_keys '.[0]' 'commit,name,protected' '[{name, commit, protected}]'
expect_json '.[] | select(.name == "main") | .commit.sha' "$MAIN" 'main: its commit'
expect_json '.[] | select(.name == "main") | .protected' true 'main (the default branch) is protected'
expect_json '[.[] | select(.name != "main") | .protected] | unique | join(",")' false 'the others are not'
expect_json '.[] | select(.name == "team/feature-x") | .commit.sha' "$FEAT" "a name with '/'"
api GET "$API/branches?namespace=ephemeral" '' "$OT"
expect_status 200 'GET branches?namespace=ephemeral: 200'
expect_json '[.[].name] | join(",")' 'agent/s1,main' 'the ephemeral branches, named as their clients see them'
expect_json '.[] | select(.name == "agent/s1") | .commit.sha' "$S1" 'agent/s1: its commit'
expect_json '[.[].protected] | unique | join(",")' false 'no ephemeral branch is protected (no default branch there)'
api GET "$API/branches?namespace=normal" '' "$OT"
expect_error 422 "query 'namespace' must be absent or 'ephemeral'" 'namespace=normal: 422 naming the problem'
expect_schema review.branches 422
api GET "$API/branches?namespace=ephemeral&namespace=ephemeral" '' "$OT"
expect_error 422 "query 'namespace' must be given once" 'namespace twice: 422'
api GET "$API/branches?namespace=" '' "$OT"
expect_json '[.[].name] | join(",")' 'big,feature,huge,main,team/feature-x' 'an empty namespace= is the normal refs'

# --- who may read -------------------------------------------------------------------------
api GET "$API/branches" '' "$RO_T"
expect_status 200 "the owner's read-scoped token reads"
api GET "$API/branches" '' "$RDT"
expect_status 200 'a read collaborator reads'
api GET "$API/branches" '' -
expect_error 401 'authentication required' 'no credentials: 401'
api GET "/api/v3/repos/$O/nope/branches" '' "$OT"
expect_error 404 'repository not found' 'an unknown repository: 404'
OUT="rvout$SFX"
mk_user "$OUT" || exit 1
OUTT=$LAST_TOKEN
AT_EXIT+=("ctl token revoke $LAST_TOKEN_ID; ctl account disable $OUT")
api GET "$API/branches" '' "$OUTT"
expect_error 404 'repository not found' 'a stranger to the private repository: 404'
api POST "$API/job-tokens" '{"scope":"read"}' "$OT"
JT=$(_json .token)
api GET "$API/commits/main" '' "$JT"
expect_status 200 'a job token of the repository reads'
EJWT=${EURL#*x-token:} EJWT=${EJWT%@*}
api GET "$API/branches" '' "$EJWT"
expect_error 401 'bad credentials' 'a git URL token on REST: 401 (git only)'

# --- one commit ---------------------------------------------------------------------------
api GET "$API/commits/feature" '' "$OT"
expect_status 200 'GET commits/feature: 200'
expect_schema review.commit 200
expect_json .sha "$FEAT" 'its sha'
expect_json .commit.message $'feature work\n\nwith a body' 'the message, without the trailing newline'
expect_json '.commit.author | "\(.name) <\(.email)>"' 'Ada Reviewer <ada@example.com>' 'the author'
expect_json_match .commit.author.date "$RFC3339_UTC" 'the date in RFC 3339 UTC'
expect_json '[.parents[].sha] | join(",")' "$BASE" 'parents: [{sha}]'
expect_json '[.files[].filename] | join(",")' 'bin.dat,f.txt,new.txt' 'files against the first parent'
expect_json '.files[] | select(.filename == "f.txt") | "\(.status) +\(.additions) -\(.deletions)"' 'modified +1 -0' 'f.txt: modified, +1 -0'
expect_json '.files[] | select(.filename == "f.txt") | .patch' $'@@ -1 +1,2 @@\n line1\n+line2' 'f.txt: the patch, hunks only'
expect_json '.files[] | select(.filename == "new.txt") | .status' added 'new.txt: added'
expect_json '.files[] | select(.filename == "bin.dat") | .patch_omitted' binary 'a binary file says binary'
expect_json '.files[] | select(.filename == "bin.dat") | has("patch")' false 'and has no patch'
expect_json .files_truncated false 'files_truncated false'
api GET "$API/commits/$BASE" '' "$OT"
expect_json .sha "$BASE" 'GET commits/{sha}: that commit'
expect_json '.parents | length' 0 'a root commit has no parents'
expect_json '.files[0] | "\(.filename) \(.status)"' 'f.txt added' 'its files against nothing'
api GET "$API/commits/${FEAT:0:7}" '' "$OT"
expect_json .sha "$FEAT" 'an abbreviated sha'
api GET "$API/commits/team/feature-x" '' "$OT"
expect_json .sha "$FEAT" "a ref with '/' in the path"
api GET "$API/commits/v1" '' "$OT"
expect_json .sha "$BASE" 'a tag'
api GET "$API/commits/agent/s1?namespace=ephemeral" '' "$OT"
expect_json .sha "$S1" 'an ephemeral branch with namespace=ephemeral'
api GET "$API/commits/agent/s1" '' "$OT"
expect_error 404 'unknown ref' 'and without it: 404 unknown ref'
api GET "$API/commits/nope" '' "$OT"
expect_error 404 'unknown ref' 'an unknown ref: 404'
api GET "$API/commits/0000000" '' "$OT"
expect_error 404 'unknown ref' 'an unknown sha: 404'
api GET "$API/commits/$(g rev-parse "$BASE:f.txt")" '' "$OT"
expect_error 404 'unknown ref' 'the sha of a blob: 404'
api GET "/api/v3/repos/$O/nope/commits/main" '' "$OT"
expect_error 404 'repository not found' 'commits on an unknown repository: 404'
api GET "$API/commits/huge" '' "$OT"
expect_json .sha "$HUGE" 'commits/huge: its commit'
expect_json '.files[] | select(.filename == "huge.txt") | .patch_omitted' 'too large' 'a 2 MiB file says too large'
expect_json '.files[] | select(.filename == "huge.txt") | "\(.additions) \(.deletions) \(has("patch"))"' '0 0 false' 'no patch, and no line counts (its lines are never read)'
expect_json '.files[] | select(.filename == "small.txt") | .patch' '@@ -0,0 +1 @@
+small' 'the small file beside it has its patch'
api GET "$API/commits/$MANY" '' "$OT"
expect_json '.files | length' 300 'a commit of 310 files answers 300'
expect_json .files_truncated true 'with files_truncated true'

# bytes that are not UTF-8 (a Latin-1 message, which git keeps as it is under an encoding
# header, and a Latin-1 file name): the answer stays JSON
g switch -q -c latin "$BASE" && printf 'x\n' >"$W/"$'\xe9'.txt && g add -A &&
	g -c i18n.commitEncoding=ISO-8859-1 commit -q -m $'caf\xe9' && g switch -q main
g push -q "http://t:$OT@$HOSTPORT/$R.git" latin
api GET "$API/commits/latin" '' "$OT"
expect_json .commit.message $'caf\xef\xbf\xbd' 'a Latin-1 message: its stray byte becomes U+FFFD'
expect_json '.files[0].filename' $'\xef\xbf\xbd.txt' 'and so in a file name'
api DELETE "$API/git/refs/heads/latin" '' "$OT"
expect_status 204 'clean-up: latin deleted'

# --- compare ------------------------------------------------------------------------------
api GET "$API/compare/main...feature" '' "$OT"
expect_status 200 'GET compare/main...feature: 200'
expect_schema review.compare 200
expect_json '"\(.status) \(.ahead_by) \(.behind_by)"' 'diverged 1 1' 'diverged, ahead 1, behind 1'
expect_json .merge_base_commit.sha "$BASE" 'merge_base_commit'
expect_json '[.commits[].sha] | join(",")' "$FEAT" "the commits head has"
expect_json '.commits[0].commit.message' $'feature work\n\nwith a body' 'in the commit shape'
expect_json '[.files[].filename] | join(",")' 'bin.dat,f.txt,new.txt' 'files from the merge base (not main.s other.txt)'
expect_json '.files[] | select(.filename == "f.txt") | .patch' $'@@ -1 +1,2 @@\n line1\n+line2' 'with patches'
expect_json '.files[] | select(.filename == "bin.dat") | .patch_omitted' binary 'and binary files say so'
expect_json '"\(.commits_truncated) \(.files_truncated)"' 'false false' 'nothing cut'
api GET "$API/compare/v1...feature" '' "$OT"
expect_json '"\(.status) \(.ahead_by) \(.behind_by)"' 'ahead 1 0' 'v1...feature: ahead'
api GET "$API/compare/feature...$BASE" '' "$OT"
expect_json '"\(.status) \(.ahead_by) \(.behind_by) \(.files | length)"' 'behind 0 1 0' 'feature...{sha}: behind, no files'
api GET "$API/compare/main...main" '' "$OT"
expect_json '"\(.status) \(.ahead_by) \(.behind_by) \(.commits | length) \(.files | length)"' 'identical 0 0 0 0' 'main...main: identical'
api GET "$API/compare/main...agent/s1?namespace=ephemeral" '' "$OT"
expect_json '"\(.status) \(.ahead_by) \(.behind_by)"' 'diverged 1 1' 'main...agent/s1 in the ephemeral namespace: diverged'
expect_json '.files[0].patch' $'@@ -1 +1,2 @@\n line1\n+agent' "the agent's diff"
api GET "$API/compare/v1...main?namespace=ephemeral" '' "$OT"
expect_json '"\(.status) \(.commits | length)"' 'identical 0' "head main is the ephemeral one (at base), base v1 a normal ref"
api GET "$API/compare/main...agent/s1" '' "$OT"
expect_error 404 'unknown ref' 'the ephemeral head without namespace: 404'
api GET "$API/compare/nope...feature" '' "$OT"
expect_error 404 'unknown ref' 'an unknown base: 404'
api GET "$API/compare/main..feature" '' "$OT"
expect_error 422 "compare takes '{base}...{head}'" 'two dots: 422'
api GET "$API/compare/main...feature?namespace=x" '' "$OT"
expect_error 422 "query 'namespace' must be absent or 'ephemeral'" 'compare with a bad namespace: 422'
api GET "$API/compare/main...big" '' "$OT"
expect_json '"\(.ahead_by) \(.total_commits) \(.commits | length) \(.commits_truncated)"' '261 261 250 true' 'past 250 commits: 250, commits_truncated'
expect_json .commits[0].sha "$MANY" 'oldest first'
expect_json '"\(.files | length) \(.files_truncated)"' '300 true' 'past 300 files: 300, files_truncated'
api GET "$API/compare/main...big" '' "$RO_T"
expect_status 200 'a read token compares'

# --- DELETE …/git/refs --------------------------------------------------------------------
api DELETE "$API/git/refs/heads/feature" '' "$RO_T"
expect_error 403 'this needs a token with write scope' 'a read token cannot delete: 403'
api DELETE "$API/git/refs/heads/feature" '' "$RDT"
expect_error 403 "this needs the write role on $R" 'a read collaborator cannot delete: 403'
check 'feature is still there' remote_has refs/heads/feature
api DELETE "$API/git/refs/heads/feature" '' "$OT"
expect_status 204 'the owner deletes heads/feature: 204'
expect_empty_body
check 'git ls-remote no longer shows it' fails remote_has refs/heads/feature
check_eq 'the deletion is audited' "204 heads/feature $FEAT" \
	"$(sql "select status, details->>'ref', details->>'old' from audit_log where action = 'ref.delete' and request_id = '$REQ_ID'" | tr '|' ' ')"
api DELETE "$API/git/refs/heads/feature" '' "$OT"
expect_error 404 'unknown ref' 'deleting it again: 404'
api DELETE "$API/git/refs/tags/v1" '' "$OT"
expect_status 204 'deleting tags/v1: 204'
check 'the tag is gone' fails remote_has refs/tags/v1
api DELETE "$API/git/refs/heads/main" '' "$OT"
expect_error 422 "refs/heads/main: the default branch can't be deleted" 'the default branch: 422'
api DELETE "$API/git/refs/heads/main" '' "$AGT"
expect_error 422 'refs/heads/main: agents may not update the default branch' "an agent and the default branch: 422, the hook's text"
check_eq 'main is untouched' "$MAIN" "$(bare_ref refs/heads/main)"
check_eq 'the refusals are audited with their reason' "422 refs/heads/main: agents may not update the default branch" \
	"$(sql "select status, details->>'reason' from audit_log where request_id = '$REQ_ID'" | tr '|' ' ')"
api DELETE "$API/git/refs/heads/team/feature-x" '' "$AGT"
expect_status 204 "the agent deletes another branch, with '/' in its name: 204"
check 'team/feature-x is gone' fails remote_has refs/heads/team/feature-x
api DELETE "$API/git/refs/feature" '' "$OT"
expect_error 422 "ref must start with 'heads/' or 'tags/'" 'a ref without heads/ or tags/: 422'
api DELETE "$API/git/refs/heads/a..b" '' "$OT"
expect_error 422 "'heads/a..b' is not a valid ref name" 'an invalid ref name: 422'
api DELETE "/api/v3/repos/$O/nope/git/refs/heads/x" '' "$OT"
expect_error 404 'repository not found' 'on an unknown repository: 404'
api DELETE "$API/git/refs/heads/main?namespace=ephemeral" '' "$AGT"
expect_status 204 "the ephemeral namespace's main is no default branch: the agent deletes it"
check_eq 'it is gone from the ephemeral namespace' '' "$(bare_ref refs/namespaces/ephemeral/refs/heads/main)"
check_eq 'and the normal main stays' "$MAIN" "$(bare_ref refs/heads/main)"
api PATCH "$API" '{"archived":true}' "$OT"
api DELETE "$API/git/refs/heads/huge" '' "$OT"
expect_error 403 'repository is archived (read-only)' 'an archived repository: 403'
api PATCH "$API" '{"archived":false}' "$OT"

# --- POST …/merges -------------------------------------------------------------------------
AWS="AKIA""Q3EGRLW7PLXNZK4T"
eph_branch() { # NAME FILE TEXT [FROM]: an ephemeral branch pushed by the agent's URL; its sha
	g switch -q -c "$1" "${4:-$MAIN}" && printf '%s\n' "$3" >"$W/$2" && g add "$2" &&
		g commit -qm "$1" && g push -q "$EURL" "$1" && g rev-parse HEAD && g switch -q main
}
merge() { # BASE HEAD [TOKEN] [EXTRA JSON]
	api POST "$API/merges" "{\"base\":\"$1\",\"head\":\"$2\",\"namespace\":\"ephemeral\"${4:+,$4}}" "${3:-$OT}"
}
g push -q "http://t:$OT@$HOSTPORT/$R.git" "$MAIN:refs/heads/integ"
M1=$(eph_branch agent/m1 m1.txt one)
M2=$(eph_branch agent/m2 m2.txt two)
merge integ agent/m1
expect_status 201 'merging agent/m1 into integ: 201'
expect_schema merge 201
expect_keys . 'commit,fast_forward,sha' '{sha, fast_forward, commit}'
expect_json '"\(.sha) \(.fast_forward)"' "$M1 true" 'a fast-forward to the agent commit'
expect_json .commit.message agent/m1 "the message of the commit it moved to, without git's newline"
expect_json '[.commit.parents[].sha] | join(",")' "$MAIN" 'commit: {message, author, parents}'
check_eq 'integ moved' "$M1" "$(bare_ref refs/heads/integ)"
check_eq 'audited as a push of the ref, via rest' "200 accepted $MAIN $M1 rest" \
	"$(sql "select status, details->>'result', details->>'old', details->>'new', via from audit_log where action = 'git.push.ref' and request_id = '$REQ_ID' and details->>'ref' = 'refs/heads/integ'" | tr '|' ' ')"
merge integ agent/m1
expect_status 204 'merging it again: 204, nothing to merge'
expect_empty_body
merge integ agent/m2 "$OT" '"commit_message":"promote m2"'
expect_status 201 'merging the diverged agent/m2: 201'
MC=$(_json .sha)
expect_json '"\(.fast_forward) \(.commit.message)"' 'false promote m2' 'a merge commit, with the message asked for'
expect_json '[.commit.parents[].sha] | join(",")' "$M1,$M2" 'its parents: base, then head'
expect_json .commit.author.name "$O" 'authored by the caller'
check_eq 'integ is the merge commit' "$MC" "$(bare_ref refs/heads/integ)"
check_eq 'which holds both files' 'm1.txt m2.txt' "$(git --git-dir "$REPOS_DIR/$R.git" ls-tree --name-only "$MC" | grep '^m' | paste -sd' ')"
api GET "$API/commits/integ" '' "$OT"
expect_json '.commit.message' 'promote m2' 'the merge commit reads back'
# a conflict: integ2 and agent/c1 change the same line
g switch -q -c integ2 "$MAIN" && printf 'line1 B\n' >"$W/f.txt" && g commit -qam B && g switch -q main
g push -q "http://t:$OT@$HOSTPORT/$R.git" integ2
I2=$(bare_ref refs/heads/integ2)
eph_branch agent/c1 f.txt 'line1 A' >/dev/null
merge integ2 agent/c1
expect_body '{"message":"merge conflict","files":["f.txt"]}' 'a conflict: 409 with the conflicting paths'
expect_schema merge 409
expect_status 409 'and its status is 409'
check_eq 'and nothing changed' "$I2" "$(bare_ref refs/heads/integ2)"
# agents and the default branch
merge main agent/m1 "$AGT"
expect_error 403 'refs/heads/main: agents may not update the default branch' "an agent's token cannot merge into the default branch"
check_eq 'main is unchanged' "$MAIN" "$(bare_ref refs/heads/main)"
merge integ agent/m1 "$AGT"
expect_status 204 'the agent may merge elsewhere (here nothing to merge)'
merge main agent/m1 "$RO_T"
expect_error 403 'this needs a token with write scope' 'a read token cannot merge'
merge integ nope
expect_error 404 'unknown ref' 'an unknown head: 404'
api POST "$API/merges" '{"base":"nope","head":"agent/m1","namespace":"ephemeral"}' "$OT"
expect_error 404 'unknown ref' 'an unknown base: 404'
api POST "$API/merges" '{"base":"integ","head":"agent/m1","namespace":"x"}' "$OT"
expect_error 422 "field 'namespace' must be absent or 'ephemeral'" 'a bad namespace: 422'
api POST "$API/merges" '{"head":"agent/m1"}' "$OT"
expect_error 400 "field 'base' is required" 'no base: 400'
# a secret that already sits in the repository (written by an operator, under an
# ephemeral ref, where no push checked it) is refused when the merge would promote it
g switch -q -c agent/sec "$MAIN" && printf 'key=%s\n' "$AWS" >"$W/sec.txt" && g add sec.txt &&
	g commit -qm sec && g switch -q main
SEC=$(g rev-parse agent/sec)
git --git-dir "$REPOS_DIR/$R.git" fetch -q "$W" "agent/sec:refs/namespaces/ephemeral/refs/heads/agent/sec"
chown -R --reference="$REPOS_DIR/$R.git/config" "$REPOS_DIR/$R.git"
g push -q "http://t:$OT@$HOSTPORT/$R.git" "$MAIN:refs/heads/secbase"
merge secbase agent/sec
expect_error 403 "push refused: AWS access key id found in sec.txt (line 1) in commit ${SEC:0:12}; remove it from the history and push again" 'a secret is refused at merge time (a fast-forward: the agent commit is named)'
check_eq 'secbase is unchanged' "$MAIN" "$(bare_ref refs/heads/secbase)"
check 'the secret is not in the answer' fails grep -q "$AWS" <<<"$BODY"
merge integ2 agent/sec
expect_status 403 'and as a merge commit (which is then the commit that adds it to integ2)'
expect_json_match .message '^push refused: AWS access key id found in sec\.txt \(line 1\) in commit [0-9a-f]{12}; remove it from the history and push again$' 'named by the same text'
check_eq 'integ2 is unchanged' "$I2" "$(bare_ref refs/heads/integ2)"
merge integ2 agent/m1
expect_status 201 'a clean merge into integ2 lands'
# the owner promotes the agent's work into main
merge main agent/m1
expect_json '"\(.sha) \(.fast_forward)"' "$M1 true" 'the owner may: main moves'
check_eq 'main is at agent/m1' "$M1" "$(bare_ref refs/heads/main)"
# concurrent merges into one branch: each lands or gets 409, and none that landed is lost
g push -q "http://t:$OT@$HOSTPORT/$R.git" "$MAIN:refs/heads/race"
for i in 1 2 3 4 5 6; do eph_branch "agent/r$i" "r$i.txt" "$i" >/dev/null; done
for i in 1 2 3 4 5 6; do
	curl -s -o "$_T/race$i.body" -w '%{http_code}' -H "Authorization: Bearer $OT" \
		-H 'Content-Type: application/json' -X POST "$SANDBOXD_URL$API/merges" \
		--data-binary "{\"base\":\"race\",\"head\":\"agent/r$i\",\"namespace\":\"ephemeral\"}" \
		>"$_T/race$i.code" &
done
wait
RACE=$(bare_ref refs/heads/race) landed=0 lost=0 odd=0
for i in 1 2 3 4 5 6; do
	code=$(cat "$_T/race$i.code")
	if [[ $code == 201 ]]; then
		landed=$((landed + 1))
		git --git-dir "$REPOS_DIR/$R.git" merge-base --is-ancestor "$(jq -r .sha "$_T/race$i.body")" "$RACE" || lost=$((lost + 1))
	elif [[ $code != 409 || $(jq -r .message "$_T/race$i.body") != 'base moved; try again' ]]; then
		odd=$((odd + 1))
	fi
done
check_cond "concurrent merges: $landed of 6 landed, the rest 409 'base moved; try again'" "((landed >= 1 && odd == 0))"
check_eq 'none that landed is lost' 0 "$lost"
for i in 1 2 3 4 5 6; do
	api DELETE "$API/git/refs/heads/agent/r$i?namespace=ephemeral" '' "$OT"
done
for ref in heads/integ heads/integ2 heads/race heads/secbase; do
	api DELETE "$API/git/refs/$ref" '' "$OT"
	expect_status 204 "clean-up: $ref deleted"
done
for ref in agent/m1 agent/m2 agent/c1 agent/sec; do
	api DELETE "$API/git/refs/heads/$ref?namespace=ephemeral" '' "$OT"
	expect_status 204 "clean-up: the ephemeral $ref deleted"
done

# --- clean up what the suite made: its refs (then its tokens and accounts, at exit) -------
for ref in heads/huge heads/big; do
	api DELETE "$API/git/refs/$ref" '' "$OT"
	expect_status 204 "clean-up: $ref deleted"
done
api DELETE "$API/git/refs/heads/agent/s1?namespace=ephemeral" '' "$OT"
expect_status 204 'clean-up: the ephemeral agent/s1 deleted'
api GET "$API/branches?namespace=ephemeral" '' "$OT"
expect_json 'length' 0 'no ephemeral branch left'
api GET "$API/branches" '' "$OT"
expect_json '[.[].name] | join(",")' main 'only main left'
finish
