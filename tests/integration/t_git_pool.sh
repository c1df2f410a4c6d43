#!/usr/bin/env bash
# t_git_pool.sh: git has workers of its own. As many execs as there are workers, each
# waiting on its sandbox's clone or running a fetch and a push, hold every ordinary worker
# while the git they start comes back through nginx: they must all finish, not wait on each
# other until their limits.
. "$(dirname "$0")/lib.sh"

M=$(cat "${SANDBOXD_PID_FILE:-$SANDBOXD_VAR/run/sandboxd/sandboxd.pid}" 2>/dev/null ||
	cat "$SANDBOXD_VAR/run/sandboxd.pid" 2>/dev/null)
N=${SANDBOXD_WORKERS:-4}
check_eq "the master has ${SANDBOXD_GIT_WORKERS:-4} git workers beside its $N" \
	"${SANDBOXD_GIT_WORKERS:-4}" "$(pgrep -x -P "$M" sandboxd-git | wc -l)"

mk_sandbox "gp$SFX" pool
IDS=$ID
for ((i = 1; i < N; i++)); do
	api POST "$SB" '{}' "$OT"
	expect_status 201 "sandbox $((i + 1)) of $N created"
	IDS="$IDS $(_json .id)"
done

# all CMD: one exec per sandbox, all at once; each answer in $_T/ans.<id>
all() {
	local id
	for id in $IDS; do
		curl -sS --max-time 150 -o "$_T/ans.$id" -w '%{http_code}' -H "Authorization: Bearer $OT" \
			-H 'Content-Type: application/json' --data-binary "$1" \
			"$SANDBOXD_URL$SB/$id/exec" >"$_T/code.$id" 2>/dev/null &
	done
	wait
}
ok_all() { # NAME: every answer 200 with exit code 0
	local id bad=''
	for id in $IDS; do
		[ "$(cat "$_T/code.$id")" = 200 ] && [ "$(jq -r .exitCode "$_T/ans.$id")" = 0 ] ||
			bad="$bad $id:$(cat "$_T/code.$id"):$(head -c 200 "$_T/ans.$id")"
	done
	check_eq "$1" '' "$bad"
}

# Right after the creates the clones are still running: each exec waits for its clone.
all '{"cmd":"git log -1 --format=%s"}'
ok_all "$N execs waiting on their clones at once all finish"
all '{"cmd":"git fetch -q origin && git checkout -q -b \"p-$SANDBOX_ID\" && git commit -q --allow-empty -m p && git push -q origin HEAD"}'
ok_all "$N execs each running a fetch and a push at once all finish"
for id in $IDS; do
	check "the push from $id landed" git --git-dir "$REPOS_DIR/$R.git" rev-parse -q --verify "refs/heads/p-$id"
	api POST "$SB/$id/close" '' "$OT"
done
finish
