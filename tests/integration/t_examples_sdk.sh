#!/usr/bin/env bash
# t_examples_sdk.sh: the agent loops of examples/ (issue 33 item 6), run as a user runs them:
# examples/agent-loop.mjs with node (the TypeScript SDK, imported from clients/js) and
# examples/agent_loop.py with /usr/bin/python3 (the Python SDK from clients/python), both
# from another directory, with SANDBOXD_URL and SANDBOXD_TOKEN only. The repository has a
# branch whose test.sh fails until greeting.txt says "hello, world". Each example must exit
# 0 having printed the failure, the fix, the pass, the push and the compare in that order;
# its branch must be in the bare repository with the fix as one commit on the start
# branch; the compare must say 1 ahead; its sandbox must be closed. Refusals: a repository
# that does not exist (exit 1, the server's `repository not found` printed), and a failure
# after the create (the stand-in model finds no fix), whose sandbox is closed all the same.
# shellcheck disable=SC2034 # LAST_REQ, STATUS and BODY are lib.sh's
. "$(dirname "$0")/lib.sh"

EX=$ROOT/examples
O="exsdk$SFX"
mk_repo "$O" app
AT_EXIT+=("ctl token revoke $LAST_TOKEN_ID; ctl account disable $O")
BARE=$REPOS_DIR/$R.git

# --- the repository: a branch whose test fails ------------------------------------------------
git -C "$W" checkout -q -b buggy
printf 'helo world\n' >"$W/greeting.txt"
cat >"$W/test.sh" <<'EOF'
#!/bin/bash
# The test of the examples' repository: greeting.txt must say "hello, world".
got=$(cat greeting.txt)
if [ "$got" = "hello, world" ]; then echo "ok greeting.txt"; exit 0; fi
echo "FAIL greeting.txt: want 'hello, world'"
echo "got: $got"
exit 1
EOF
git -C "$W" add greeting.txt test.sh
git -C "$W" -c user.name=t -c user.email=t@t commit -qm 'a greeting and its test'
LAST_REQ="git push of the branch buggy"
git -C "$W" push -q "http://t:$OT@${SANDBOXD_URL#http://}/$R.git" buggy
BUGGY=$(git -C "$W" rev-parse HEAD)
check_eq 'the branch buggy is in the bare repository' "$BUGGY" \
	"$(git --git-dir "$BARE" rev-parse -q --verify refs/heads/buggy 2>&1)"

# Whatever sandbox a failed run left behind is closed at the end.
AT_EXIT+=(close_open_sandboxes)

# run_example NAME ARGS…: runs it from $_T with the URL and token alone in the environment
# (no AGENT_* from this shell); OUT, ERR and RC are what the user sees.
run_example() {
	local name=$1
	shift
	LAST_REQ="$name $*"
	(cd "$_T" && env -u AGENT_REPO -u AGENT_BRANCH -u AGENT_NEW_BRANCH -u AGENT_TEST_CMD \
		SANDBOXD_URL="$SANDBOXD_URL" SANDBOXD_TOKEN="$OT" ${EXTRA_ENV:+"$EXTRA_ENV"} \
		timeout 300 "$@") >"$_T/$name.out" 2>"$_T/$name.err"
	RC=$?
	OUT=$(cat "$_T/$name.out")
	ERR=$(cat "$_T/$name.err")
	STATUS="exit $RC" BODY="$OUT${ERR:+ / stderr: $ERR}"
	it_tokens "$OUT $ERR"
}

# The lines a user reads, ids and commit ids masked: the steps in their order.
steps() { grep -v '^  ' <<<"$OUT" | sed -E 's/sb_[0-9a-f]{24}/SB/g; s/[0-9a-f]{40}/SHA/g'; }

# one_trip NAME NEW_BRANCH CMD…: the example fixes buggy and pushes NEW_BRANCH.
one_trip() {
	local name=$1 nb=$2 id sha
	shift 2
	run_example "$name" "$@" "$R" buggy "$nb"
	check_eq "$name: exit 0" 0 "$RC"
	check_eq "$name: nothing on stderr" '' "$ERR"
	check_eq "$name: tests failed, fix written, tests passed, pushed, compared, closed" \
		"sandbox SB on $R at buggy
tests: failed (exit 1)
fix: wrote greeting.txt
tests: passed (exit 0)
pushed $nb at SHA
compare buggy...$nb: ahead, ahead by 1, behind by 0, 1 file(s) changed
closed SB" "$(steps)"
	check_cond "$name: the first run's output is shown (the test's FAIL line)" \
		"grep -qxF \"  | FAIL greeting.txt: want 'hello, world'\" <<<\"\$OUT\""
	check_cond "$name: the second run's output is shown" "grep -qxF '  | ok greeting.txt' <<<\"\$OUT\""
	check_cond "$name: the compare's commit and file are listed" \
		"grep -qE '^  commit [0-9a-f]{12} Fix the failing tests\$' <<<\"\$OUT\" &&
		 grep -qxF '  modified greeting.txt +1 -1' <<<\"\$OUT\""

	sha=$(sed -nE "s|^pushed $nb at ([0-9a-f]{40})\$|\\1|p" <<<"$OUT")
	check_eq "$name: the new branch is in the bare repository at the commit printed" "$sha" \
		"$(git --git-dir "$BARE" rev-parse -q --verify "refs/heads/$nb" 2>&1)"
	check_eq "$name: that commit's parent is buggy's tip" "$BUGGY" \
		"$(git --git-dir "$BARE" rev-parse -q --verify "refs/heads/$nb^" 2>&1)"
	check_eq "$name: the commit holds the fix" 'hello, world' \
		"$(git --git-dir "$BARE" show "refs/heads/$nb:greeting.txt" 2>&1)"
	check_eq "$name: authored by the example's identity, message as written" \
		'agent <agent@example.test>|Fix the failing tests' \
		"$(git --git-dir "$BARE" log -1 --format='%an <%ae>|%s' "refs/heads/$nb" 2>&1)"
	api GET "/api/v3/repos/$R/compare/buggy...$nb" '' "$OT"
	expect_json '[.status, .ahead_by, .behind_by, (.files | map(.filename) | join(","))] | join(" ")' \
		'ahead 1 0 greeting.txt' "$name: the compare API says 1 ahead, 0 behind, greeting.txt"

	id=$(grep -oE 'sb_[0-9a-f]{24}' <<<"$OUT" | head -n 1)
	api GET "$SB/$id" '' "$OT"
	expect_json .state closed "$name: its sandbox ($id) is closed"
}

one_trip js "fix/js-$SFX" node "$EX/agent-loop.mjs"
one_trip python "fix/py-$SFX" /usr/bin/python3 "$EX/agent_loop.py"

# --- refusals, each with the server's or the example's own words ------------------------------
for ex in "js node $EX/agent-loop.mjs" "python /usr/bin/python3 $EX/agent_loop.py"; do
	read -r name cmd file <<<"$ex"
	run_example "$name-404" "$cmd" "$file" "$O/no-such-repo" buggy "fix/none-$SFX"
	check_eq "$name: a repository that does not exist: exit 1" 1 "$RC"
	check_eq "$name: the server's text printed" 'agent-loop: 404 repository not found' "$ERR"
	check_eq "$name: no step printed" '' "$OUT"

	# A failure after the create: a test whose output the stand-in model has no fix for.
	EXTRA_ENV="AGENT_TEST_CMD=echo broken; exit 1" run_example "$name-nofix" "$cmd" "$file" "$R" buggy "fix/none-$SFX"
	check_eq "$name: no fix found: exit 1, the reason printed" '1|agent-loop: the model had no fix for this output' \
		"$RC|$ERR"
	id=$(grep -oE 'sb_[0-9a-f]{24}' <<<"$OUT" | head -n 1)
	check_cond "$name: the sandbox was made ($id)" '[[ -n $id ]]'
	api GET "$SB/$id" '' "$OT"
	expect_json .state closed "$name: the sandbox is closed after the failure too"
done
check_eq 'no branch was pushed by the failed runs' '' \
	"$(git --git-dir "$BARE" for-each-ref "refs/heads/fix/none-$SFX" 2>&1)"

api GET "$SB" '' "$OT"
expect_json '[.[] | select(.state == "ready" or .state == "starting")] | length' 0 \
	'no sandbox of the examples is left running'
expect_json 'length' 4 'the repository saw the four sandboxes the examples made, no more'
finish
